import type { SandboxEvent } from '../core/events.js'

/**
 * What the library's control operations answer: the control API's JSON, typed for a merchant's
 * test suite. Fields a sandbox may add later are allowed (index signatures), never removed.
 */

export interface OtpMessage {
  otp: string
  verif_request_id: string
  msisdn: string
  sent_dt: string
  text: string
}

export interface SmsMessage {
  id: string
  msisdn: string
  direction: 'mt' | 'mo'
  from: string
  to: string
  text: string
  at: string
  kind: string
  verif_request_id?: string
  otp?: string
  subscription_id?: string
}

export interface Inbox {
  msisdn: string
  messages: SmsMessage[]
}

export interface MoInput {
  msisdn: string
  short_code: string
  text: string
}

export interface MoResult {
  action: 'subscribed' | 'stop' | 'rejected' | 'charge_failed' | 'ignored' | 'unknown_keyword' | (string & {})
  subscription_id?: string
  code?: string
  [key: string]: unknown
}

export interface Charge {
  at: string
  kind: 'first' | 'renewal' | 'retry'
  outcome: string
  amount: string | null
  currency: string | null
}

export interface Subscription {
  subscription_id: string
  status: 'ACTIVE' | 'CANCELED' | 'EXPIRED'
  msisdn: string
  service_code: string
  service_name: string | null
  subscribed_dt: string
  expiry_dt: string
  canceled_dt: string | null
  content_link: string | null
  merchant: string
  country_code: string
  carrier_code: string
  flow: 'otp' | 'psms' | 'redirect'
  language: string
  cancel_reason: string | null
  next_retry_dt: string | null
  carrier_cancel_dt: string | null
  charge_count: number
  charges: Charge[]
  [key: string]: unknown
}

/** The query keys of `GET /_sandbox/subscriptions`. */
export interface SubscriptionFilter {
  msisdn?: string
  merchant?: string
  service?: string
  status?: 'ACTIVE' | 'CANCELED' | 'EXPIRED' | (string & {})
  limit?: number
}

export interface ClockView {
  now: string
  frozen: boolean
  offset_ms: number
  next_event_dt: string | null
}

export interface ClockMoveResult {
  clock: ClockView
  events: SandboxEvent[]
  /** How many events the answer leaves out (past its size limit). */
  events_omitted?: number
}

export interface RuntimeRule {
  id: string
  created_at: number
  rule: Record<string, unknown>
  used: number
}

export interface RuleList {
  fixture: Record<string, unknown>[]
  runtime: RuntimeRule[]
}

export interface JournalEntry {
  id: number
  time: string
  sandbox_time: string
  method: string
  path: string
  ip: string | null
  merchant: string | null
  http_status: number
  message: string
  duration_ms: number
  request: unknown
  response: unknown
  [key: string]: unknown
}

export interface RequestLog {
  capacity: number
  requests: JournalEntry[]
}

export interface SessionInfo {
  name: string
  subscriptions: number
  messages: number
  requests: number
  now: string
}

export interface ResetResult {
  ok: true
  clock: ClockView
}
