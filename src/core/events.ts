/**
 * What happened on the sandbox clock (renewals, retries, cancellations, expiries), recorded as JSON
 * text the moment it happens. A year over thousands of subscriptions makes tens of thousands of
 * events: as bytes they cost the garbage collector nothing and go out over HTTP as they are; code
 * that wants objects gets them parsed once, on first use.
 */
import { formatTimestamp } from './time.js'

/** Something that happened on the sandbox clock (renewals, retries, cancellations, expiries). */
export interface SandboxEvent {
  at: string
  type: string
  subscription_id?: string
  verif_request_id?: string
  msisdn?: string
  service_code?: string
  status?: string
  code?: string
  expiry_dt?: string | null
}

const encoder = new TextEncoder()
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/
/** A JSON string literal (JSON.stringify only when the text needs escaping: ids and numbers never do). */
const q = (s: string): string => (NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`)

export class EventLog {
  private buf = new Uint8Array(4096)
  private len = 0
  /** Events not yet encoded: encoded in batches (one encoder call per batch, not per event). */
  private pending: string[] = []
  private parsed: SandboxEvent[] | null = null
  count = 0

  /** The part of a subscription's events that never changes (found once per subscription). */
  static subject(s: { id: string; msisdn: string; service: string }): string {
    return `"subscription_id":${q(s.id)},"msisdn":${q(s.msisdn)},"service_code":${q(s.service)}`
  }

  /** A subscription's event at `at`, showing the record as it is after the event. */
  sub(at: number, type: string, s: { status: string; expiry_at: number }, subject: string, code?: string): void {
    this.add(`{"at":"${formatTimestamp(at)}","type":"${type}",${subject},"status":"${s.status}"${code ? `,"code":${q(code)}` : ''},"expiry_dt":"${formatTimestamp(s.expiry_at)}"}`)
  }

  /** A verification request's event (an OTP or a consent page expired). */
  verif(at: number, type: string, v: { id: string; msisdn: string; service: string }): void {
    this.add(`{"at":"${formatTimestamp(at)}","type":${q(type)},"verif_request_id":${q(v.id)},"msisdn":${q(v.msisdn)},"service_code":${q(v.service)}}`)
  }

  private add(json: string): void {
    this.pending.push(json)
    this.count++
    this.parsed = null
    if (this.pending.length >= 256) this.encodePending()
  }

  private encodePending(): void {
    if (!this.pending.length) return
    const text = (this.len ? ',' : '') + this.pending.join(',')
    this.pending = []
    // At most 3 bytes of UTF-8 per UTF-16 unit.
    const need = this.len + text.length * 3
    if (need > this.buf.length) {
      const next = new Uint8Array(Math.max(need, this.buf.length * 2))
      next.set(this.buf.subarray(0, this.len))
      this.buf = next
    }
    this.len += encoder.encodeInto(text, this.buf.subarray(this.len)).written
  }

  /** The events as JSON, comma-separated (without the brackets), UTF-8. */
  bytes(): Uint8Array {
    this.encodePending()
    return this.buf.subarray(0, this.len)
  }

  /** The events as objects (parsed once). */
  list(): SandboxEvent[] {
    this.parsed ??= this.count ? (JSON.parse(`[${new TextDecoder().decode(this.bytes())}]`) as SandboxEvent[]) : []
    return this.parsed
  }
}

/** The answer of a clock move: the clock after it and what happened, in time order. */
export class ClockMove<C> {
  constructor(
    readonly clock: C,
    private readonly log: EventLog,
  ) {}

  /** The events, as objects (parsed on first use). */
  get events(): SandboxEvent[] {
    return this.log.list()
  }

  get eventCount(): number {
    return this.log.count
  }

  /** The whole answer as JSON, UTF-8, in parts (without building the event objects). */
  jsonParts(): Uint8Array[] {
    return [encoder.encode(`{"clock":${JSON.stringify(this.clock)},"events":[`), this.log.bytes(), encoder.encode(']}')]
  }

  /**
   * What the request journal keeps of this move: the events when there are at most `limit`, else
   * their number (a year over thousands of subscriptions is megabytes; the journal keeps 1000 calls).
   */
  summary(limit = 100): { clock: C; events?: SandboxEvent[]; event_count: number; events_omitted?: string } {
    if (this.log.count <= limit) return { clock: this.clock, events: this.events, event_count: this.log.count }
    return { clock: this.clock, event_count: this.log.count, events_omitted: `more than ${limit} events: not kept in the request journal` }
  }

  toJSON(): { clock: C; events: SandboxEvent[] } {
    return { clock: this.clock, events: this.events }
  }
}
