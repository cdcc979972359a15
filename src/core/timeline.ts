/**
 * A subscription's timeline: one list, oldest first, of its state changes, its charges, the
 * messages sent about it and the requests about it (the request log's, given by the caller: the
 * engine does not keep them). Bounded by what is kept: the latest state changes and charges of the
 * record, the handset's inbox, the request log.
 */
import type { SmsRecord, SubscriptionRecord, SubscriptionStatus, Transition, TransitionCause } from './state.js'
import { formatTimestamp } from './time.js'

/** What made a subscription ACTIVE first (its flow), or changed its state after. */
export type TimelineCause = 'verify' | 'consent' | 'mo' | TransitionCause

export type TimelineEntry =
  | { at: string; type: 'state'; from: SubscriptionStatus | null; to: SubscriptionStatus; cause: TimelineCause; superseded_by?: string }
  | { at: string; type: 'charge'; kind: 'first' | 'renewal' | 'retry'; outcome: string; amount: string | null; currency: string | null; reason?: string }
  | { at: string; type: 'message'; message_id: string; kind: string; from: string; text: string }
  | { at: string; type: 'request'; request_id: number; method: string; path: string; http_status: number; message: string; reason: string | null }

/** A request log entry about the subscription, at its sandbox time (epoch ms). */
export interface RequestMention {
  at: number
  request_id: number
  method: string
  path: string
  http_status: number
  message: string
  reason: string | null
}

const FIRST_CAUSE: Record<SubscriptionRecord['flow'], TimelineCause> = { otp: 'verify', redirect: 'consent', psms: 'mo' }

/** Which part of a millisecond an entry belongs to (see `timeline`). */
type Part = 'clock' | 'made' | 'after'

/** Within a part: a charge, then the state change it made, then the message about it. */
const RANK = { charge: 1, state: 2, message: 3 } as const

/** Causes the clock brings (a renewal, a retry, a lapse, a carrier rule's cancel). */
const CLOCK_CAUSES = new Set<TimelineCause>(['renewal', 'retry', 'lapsed', 'carrier_cancel'])

/**
 * The subscription's timeline, oldest first. `messages`: its handset's (any order); `requests`: the
 * request log's about it. Within one millisecond (a frozen clock makes many) the order is what the
 * engine does: first what the clock ran (renewals, retries, carrier cancels: a call at a time comes
 * after the events due then), then the requests by id, each followed by what it did (the first
 * request of the millisecond made the subscription; a cancel, a STOP or a newer subscription comes
 * after the last). A clock move's entry is at the time it ended, after the events it ran.
 */
export function timeline(sub: SubscriptionRecord, messages: readonly SmsRecord[], requests: readonly RequestMention[]): TimelineEntry[] {
  const ids = new Map<number, number[]>()
  for (const r of requests) ids.get(r.at)?.push(r.request_id) ?? ids.set(r.at, [r.request_id])
  const rows: { at: number; key: number; n: number; entry: TimelineEntry }[] = []
  // Keys within a millisecond: the clock's entries 1-3; a request (id + 1) x 100, what it made
  // after it, then what it did after that (+ 50); with no request, made 10+, the rest 50+.
  const add = (at: number, part: Part, rank: number, entry: TimelineEntry, n = 0) => {
    const list = ids.get(at)
    const request = part === 'clock' ? -1 : !list ? 0 : part === 'made' ? Math.min(...list) + 1 : Math.max(...list) + 1
    rows.push({ at, key: part === 'clock' ? rank : request * 100 + (part === 'made' ? 10 : 50) + rank, n, entry })
  }
  add(sub.subscribed_at, 'made', RANK.state, { at: formatTimestamp(sub.subscribed_at), type: 'state', from: null, to: 'ACTIVE', cause: FIRST_CAUSE[sub.flow] })
  const history = sub.history ?? derivedHistory(sub)
  for (const t of history) add(t.at, CLOCK_CAUSES.has(t.cause) ? 'clock' : 'after', RANK.state, stateEntry(t))
  for (const c of sub.charges) {
    const { at, ...rest } = c
    add(at, c.kind === 'first' ? 'made' : 'clock', RANK.charge, { at: formatTimestamp(at), type: 'charge', ...rest })
  }
  for (const m of messages) {
    if (m.subscription_id !== sub.id) continue
    const part: Part =
      m.kind === 'welcome' ? 'made' : m.kind.startsWith('renewal') || history.some((t) => t.at === m.at && t.cause === 'carrier_cancel') ? 'clock' : 'after'
    add(m.at, part, RANK.message, { at: formatTimestamp(m.at), type: 'message', message_id: m.id, kind: m.kind, from: m.from, text: m.text }, m.n)
  }
  for (const r of requests) {
    const { at, ...rest } = r
    rows.push({ at, key: (r.request_id + 1) * 100, n: 0, entry: { at: formatTimestamp(at), type: 'request', ...rest } })
  }
  // A stable sort: entries of one kind at one time keep their order (state changes, charges).
  rows.sort((a, b) => a.at - b.at || a.key - b.key || a.n - b.n)
  return rows.map((r) => r.entry)
}

function stateEntry(t: Transition): TimelineEntry {
  const e: TimelineEntry = { at: formatTimestamp(t.at), type: 'state', from: t.from, to: t.to, cause: t.cause }
  if (t.superseded_by !== undefined) e.superseded_by = t.superseded_by
  return e
}

/**
 * The state changes of a record written before they were kept: read from its charges (a failed
 * renewal made it EXPIRED, a retry that succeeded ACTIVE again) and its end (a cancel, or a lapse
 * at its expiry). A cancel by the control API and one by a carrier rule read alike (`carrier_cancel`).
 */
export function derivedHistory(sub: SubscriptionRecord): Transition[] {
  const out: Transition[] = []
  let status: SubscriptionStatus = 'ACTIVE'
  for (const c of sub.charges) {
    if (c.kind === 'renewal' && c.outcome !== 'SUCCESS' && status === 'ACTIVE') {
      out.push({ at: c.at, from: 'ACTIVE', to: 'EXPIRED', cause: 'renewal' })
      status = 'EXPIRED'
    } else if (c.kind === 'retry' && c.outcome === 'SUCCESS' && status === 'EXPIRED') {
      out.push({ at: c.at, from: 'EXPIRED', to: 'ACTIVE', cause: 'retry' })
      status = 'ACTIVE'
    }
  }
  if (sub.status === 'CANCELED' && sub.canceled_at !== null)
    out.push({ at: sub.canceled_at, from: status, to: 'CANCELED', cause: sub.cancel_reason === 'mo_stop' ? 'stop' : 'carrier_cancel' })
  else if (sub.status === 'EXPIRED' && status === 'ACTIVE') out.push({ at: sub.expiry_at, from: 'ACTIVE', to: 'EXPIRED', cause: 'lapsed' })
  return out
}
