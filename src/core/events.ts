/**
 * What happened on the sandbox clock (renewals, retries, cancellations, expiries), recorded as JSON
 * bytes the moment it happens. A year over thousands of subscriptions makes tens of thousands of
 * events: as bytes they cost the garbage collector nothing and go out over HTTP as they are; code
 * that wants objects gets them parsed once, on first use.
 */
import { ENCODED_JSON, REQUEST_LOG_VIEW, type EncodedJson, type RequestLogViewable } from './encoded.js'
import { formatTimestamp, writeTimestamp } from './time.js'

/** What a subscription's clock event says happened (`renewal_skipped`, `retry_skipped`: an inactive merchant, nothing charged). */
export const SUBSCRIPTION_EVENT_TYPES = [
  'renewed',
  'renewal_failed',
  'retry_succeeded',
  'retry_failed',
  'renewal_skipped',
  'retry_skipped',
  'carrier_canceled',
] as const
/** What a verification request's clock event says happened. */
export const VERIFICATION_EVENT_TYPES = ['otp_expired', 'consent_expired', 'otp_delivered'] as const
/** Every type of clock event, listed so an answer's type is their union (and a new one is named here). */
export const EVENT_TYPES = [...SUBSCRIPTION_EVENT_TYPES, ...VERIFICATION_EVENT_TYPES] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** Something that happened on the sandbox clock (renewals, retries, cancellations, expiries). */
export interface SandboxEvent {
  at: string
  type: EventType
  subscription_id?: string
  verif_request_id?: string
  msisdn?: string
  service_code?: string
  status?: string
  code?: string
  reason?: string
  expiry_dt?: string | null
}

const encoder = new TextEncoder()
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/
/** A JSON string literal (JSON.stringify only when the text needs escaping: ids and numbers never do). */
const q = (s: string): string => (NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`)

/** Encoded once: the pieces of the event JSON made around a type, a status or a code. */
function pieces(make: (key: string) => string): (key: string) => Uint8Array {
  const cache = new Map<string, Uint8Array>()
  return (key) => {
    let b = cache.get(key)
    if (!b) cache.set(key, (b = encoder.encode(make(key))))
    return b
  }
}
const typePiece = pieces((type) => `","type":${q(type)},`)
const statusPiece = pieces((status) => `,"status":${q(status)}`)
const codePiece = pieces((code) => `,"code":${q(code)}`)
const reasonPiece = pieces((reason) => `,"reason":${q(reason)}`)
const AT = encoder.encode('{"at":"')
const EXPIRY = encoder.encode(',"expiry_dt":"')
const CLOSE = encoder.encode('"}')

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0
  for (const p of parts) n += p.length
  const out = new Uint8Array(n)
  n = 0
  for (const p of parts) {
    out.set(p, n)
    n += p.length
  }
  return out
}

/**
 * What a subscription's events say about it that never changes (its id, MSISDN and service), made
 * once per subscription, with the middle of its most common event (renewed, ACTIVE) ready to copy.
 */
export class EventSubject {
  private readonly bytes: Uint8Array
  private renewed: Uint8Array | undefined

  constructor(s: { id: string; msisdn: string; service: string }) {
    this.bytes = encoder.encode(`"subscription_id":${q(s.id)},"msisdn":${q(s.msisdn)},"service_code":${q(s.service)}`)
  }

  /** From the end of `at` to the start of `expiry_dt`: `","type":…,"expiry_dt":"`. */
  middle(type: string, status: string, code: string | undefined, reason?: string): Uint8Array {
    if (type === 'renewed' && status === 'ACTIVE' && !code) return (this.renewed ??= this.make(type, status, code))
    return this.make(type, status, code, reason)
  }

  private make(type: string, status: string, code: string | undefined, reason?: string): Uint8Array {
    const parts = [typePiece(type), this.bytes, statusPiece(status)]
    if (code) parts.push(codePiece(code))
    if (reason) parts.push(reasonPiece(reason))
    parts.push(EXPIRY)
    return concat(parts)
  }
}

/** How many of a move's last events its answer lists apart, when some are not listed (the end of the move). */
export const LAST_EVENTS = 20

/** How many events of one type (and code, for a failure) a move ran. */
export interface EventCount {
  type: string
  code?: string
  count: number
}

/** An event past the size limit, kept as its values (reused slots: no allocation per event). */
interface Kept {
  at: number
  type: EventType
  status: string
  expiry_at: number
  subject: EventSubject | null
  code: string | undefined
  reason: string | undefined
  verif: { id: string; msisdn: string; service: string } | null
}

/**
 * The events of one clock move as UTF-8 JSON, written byte by byte as they happen (no string per
 * event: a year over thousands of subscriptions makes tens of thousands of them). Every event is
 * counted by type; past the size limit the last few are kept, so a summary can say how the move ended.
 */
export class EventLog {
  /** Grown on the first event (a catch-up that only counts never allocates one). */
  private buf = new Uint8Array(0)
  private len = 0
  private parsed: SandboxEvent[] | null = null
  /** Events listed. */
  count = 0
  /** Events past the size limit: counted, not listed. */
  omitted = 0
  /** The commonest event (renewed, no code) counted apart: the others by `type code`. */
  private renewedCount = 0
  private readonly kinds = new Map<string, EventCount>()
  /** The last `tail` events past the limit, a ring (`omitted` tells where it ends). */
  private readonly ring: Kept[] = []

  /**
   * `limit`: the most bytes of events listed (64 MiB, some 300,000 events). A move over decades of
   * thousands of subscriptions would make an answer no client could read; past it events are counted.
   * `tail`: how many of the last events past it are kept (a catch-up, which nobody reads, keeps none).
   */
  constructor(
    private readonly limit = 64 * 2 ** 20,
    private readonly tail = LAST_EVENTS,
  ) {}

  /** A subscription's event at `at`, showing the record as it is after the event. */
  sub(
    at: number,
    type: (typeof SUBSCRIPTION_EVENT_TYPES)[number],
    s: { status: string; expiry_at: number },
    subject: EventSubject,
    code?: string,
    reason?: string,
  ): void {
    this.countKind(type, code)
    // Past the limit nothing more is listed: no bytes are made.
    const middle = this.omitted ? null : subject.middle(type, s.status, code, reason)
    if (!middle || !this.begin(middle.length + 100)) {
      if (!middle) this.omitted++
      return this.keep(at, type, s.status, s.expiry_at, subject, code, reason, null)
    }
    this.put(AT)
    this.time(at)
    this.put(middle)
    this.time(s.expiry_at)
    this.put(CLOSE)
  }

  /** A verification request's event (an OTP or a consent page expired). */
  verif(at: number, type: (typeof VERIFICATION_EVENT_TYPES)[number], v: { id: string; msisdn: string; service: string }): void {
    this.countKind(type, undefined)
    if (this.omitted) {
      this.omitted++
      return this.keep(at, type, '', 0, null, undefined, undefined, v)
    }
    const json = encoder.encode(
      `{"at":"${formatTimestamp(at)}","type":${q(type)},"verif_request_id":${q(v.id)},"msisdn":${q(v.msisdn)},"service_code":${q(v.service)}}`,
    )
    if (this.begin(json.length)) this.put(json)
    else this.keep(at, type, '', 0, null, undefined, undefined, v)
  }

  private countKind(type: string, code: string | undefined): void {
    if (type === 'renewed' && !code) {
      this.renewedCount++
      return
    }
    const key = code ? `${type} ${code}` : type
    const k = this.kinds.get(key)
    if (k) k.count++
    else this.kinds.set(key, code ? { type, code, count: 1 } : { type, count: 1 })
  }

  private keep(
    at: number,
    type: EventType,
    status: string,
    expiry_at: number,
    subject: EventSubject | null,
    code: string | undefined,
    reason: string | undefined,
    verif: Kept['verif'],
  ): void {
    if (!this.tail) return
    const i = (this.omitted - 1) % this.tail
    const slot = (this.ring[i] ??= {} as Kept)
    slot.at = at
    slot.type = type
    slot.status = status
    slot.expiry_at = expiry_at
    slot.subject = subject
    slot.code = code
    slot.reason = reason
    slot.verif = verif
  }

  /** Every event run, by type (and code): most first. */
  counts(): EventCount[] {
    const all = [...this.kinds.values()]
    if (this.renewedCount) all.push({ type: 'renewed', count: this.renewedCount })
    return all.sort((a, b) => b.count - a.count || (a.type + (a.code ?? '')).localeCompare(b.type + (b.code ?? '')))
  }

  /** The last `tail` events run (listed or not), in time order. */
  last(): SandboxEvent[] {
    const kept = Math.min(this.omitted, this.tail)
    const listed = this.lastListed(this.tail - kept)
    const again = new EventLog(Infinity, 0)
    for (let n = this.omitted - kept; n < this.omitted; n++) {
      const k = this.ring[n % this.tail]!
      // A kept verification event has `verif`, a subscription's has a subject: the type is of that kind.
      if (k.verif) again.verif(k.at, k.type as (typeof VERIFICATION_EVENT_TYPES)[number], k.verif)
      else again.sub(k.at, k.type as (typeof SUBSCRIPTION_EVENT_TYPES)[number], k, k.subject!, k.code, k.reason)
    }
    return [...listed, ...again.list()]
  }

  /**
   * Starts an event of at most `max` bytes (room, and the comma before all but the first); false past
   * the limit. Not asked after the first event past it (a shorter one could still fit): the listed ones
   * are the first events.
   */
  private begin(max: number): boolean {
    const need = this.len + max + 1
    if (need > this.limit) {
      this.omitted++
      return false
    }
    if (need > this.buf.length) {
      const next = new Uint8Array(Math.max(need, this.buf.length * 2, 64 * 1024))
      next.set(this.buf.subarray(0, this.len))
      this.buf = next
    }
    if (this.count) this.buf[this.len++] = 44 // ,
    this.count++
    this.parsed = null
    return true
  }

  private put(bytes: Uint8Array): void {
    this.buf.set(bytes, this.len)
    this.len += bytes.length
  }

  private time(ms: number): void {
    const end = writeTimestamp(ms, this.buf, this.len)
    if (end >= 0) this.len = end
    else this.put(encoder.encode(formatTimestamp(ms)))
  }

  /** The last `n` events listed, parsed from the end of the bytes (not the whole list: 64 MiB of it). */
  private lastListed(n: number): SandboxEvent[] {
    if (n <= 0 || !this.count) return []
    // Each event starts `{"at":"`, after a comma but the first; inside a string a quote is escaped.
    let from = this.len
    for (let found = 0; found < n && from > 0;) {
      from--
      if (
        this.buf[from] === 123 &&
        (from === 0 || this.buf[from - 1] === 44) &&
        this.buf[from + 1] === 34 &&
        this.buf[from + 2] === 97 &&
        this.buf[from + 3] === 116
      )
        found++
    }
    return JSON.parse(`[${new TextDecoder().decode(this.buf.subarray(from, this.len))}]`) as SandboxEvent[]
  }

  /** The events as JSON, comma-separated (without the brackets), UTF-8. */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.len)
  }

  /** The events as objects (parsed once). */
  list(): SandboxEvent[] {
    this.parsed ??= this.count ? (JSON.parse(`[${new TextDecoder().decode(this.bytes())}]`) as SandboxEvent[]) : []
    return this.parsed
  }
}

/**
 * The answer of a clock move: the clock after it and what happened, in time order. Reads as the
 * control API's JSON (`clock`, `events`, `events_omitted`); the HTTP layer writes its bytes as they are.
 */
export class ClockMove<C> implements EncodedJson, RequestLogViewable {
  constructor(
    readonly clock: C,
    private readonly log: EventLog,
  ) {}

  /** The events, as objects (parsed on first use). */
  get events(): SandboxEvent[] {
    return this.log.list()
  }

  /** Events past the size limit: counted, not listed (absent when none were left out). */
  get events_omitted(): number | undefined {
    return this.log.omitted || undefined
  }

  /** How many events happened (listed or not). */
  get eventCount(): number {
    return this.log.count + this.log.omitted
  }

  /** The whole answer as JSON, UTF-8, in parts (without building the event objects). */
  jsonParts(): Uint8Array[] {
    const o = this.log.omitted
    const tail = o ? `],"events_omitted":${o},"event_counts":${JSON.stringify(this.log.counts())},"events_last":${JSON.stringify(this.log.last())}}` : ']}'
    return [encoder.encode(`{"clock":${JSON.stringify(this.clock)},"events":[`), this.log.bytes(), encoder.encode(tail)]
  }

  /**
   * What the request log keeps of this move: the events when there are at most `limit`, else
   * their number (a year over thousands of subscriptions is megabytes; the request log keeps 1000 calls).
   */
  summary(limit = 100): { clock: C; event_count: number; events?: SandboxEvent[]; events_kept?: false } {
    const n = this.eventCount
    return n <= limit ? { clock: this.clock, event_count: n, events: this.events } : { clock: this.clock, event_count: n, events_kept: false }
  }

  [ENCODED_JSON](): Uint8Array[] {
    return this.jsonParts()
  }

  [REQUEST_LOG_VIEW](): ReturnType<ClockMove<C>['summary']> {
    return this.summary()
  }

  /** Past the size limit: every event by type and the last ones, which the listed `events` cannot say. */
  get event_counts(): EventCount[] | undefined {
    return this.log.omitted ? this.log.counts() : undefined
  }

  get events_last(): SandboxEvent[] | undefined {
    return this.log.omitted ? this.log.last() : undefined
  }

  toJSON(): { clock: C; events: SandboxEvent[]; events_omitted?: number; event_counts?: EventCount[]; events_last?: SandboxEvent[] } {
    const { clock, events } = this
    return this.log.omitted
      ? { clock, events, events_omitted: this.log.omitted, event_counts: this.log.counts(), events_last: this.log.last() }
      : { clock, events }
  }
}
