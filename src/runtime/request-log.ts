import type { RequestLogEntry } from '../contract/control.js'
import { formatTimestamp } from '../core/time.js'
import type { FedRequestLog, RequestLogFeed, RequestLogRecord } from '../store/request-log-feed.js'

type Stored = RequestLogRecord & { id: number }

export const DEFAULT_REQUEST_LOG_BYTES = 32 * 2 ** 20

/** Bodies nested deeper than this are listed as their text (re-encoding them would overflow the stack). */
const MAX_LISTED_DEPTH = 64

/**
 * The bytes of request bodies every request log of a server keeps together (one budget for all the
 * sessions, not one each: memory stays bounded however many sessions there are). Past it, the
 * oldest entries of any request log go first (each entry carries a server-wide sequence number).
 */
export class RequestLogBudget {
  bytes = 0
  private seq = 0
  private readonly logs = new Set<RequestLog>()

  constructor(readonly limit = DEFAULT_REQUEST_LOG_BYTES) {}

  /** @internal A request log that keeps its bodies within this budget. */
  join(requestLog: RequestLog): void {
    this.logs.add(requestLog)
  }

  /** @internal An entry `bytes` long was added; answers its sequence number. */
  added(bytes: number): number {
    this.bytes += bytes
    return ++this.seq
  }

  /** A request log that is gone (its session dropped) gives its bytes back. */
  release(requestLog: RequestLog): void {
    requestLog.clear()
    this.logs.delete(requestLog)
  }

  /** Drops the oldest entries, server-wide, until the bodies fit (never `keep`, the entry just added). */
  settle(keep: RequestLog): void {
    while (this.bytes > this.limit) {
      let oldest: RequestLog | undefined
      let seq = Infinity
      for (const j of this.logs) {
        const s = j.oldestSeq()
        if (s < seq) [oldest, seq] = [j, s]
      }
      if (!oldest || !oldest.dropOldest(keep === oldest)) return
    }
  }
}

/**
 * The request log: the latest API exchanges, bounded by count and by the bytes of the request
 * bodies it keeps (a ring). Not persisted. Bodies are kept as the text that arrived (one string per
 * request, not the object graph JSON.parse made of it) and parsed again only when read.
 */
export class RequestLog implements FedRequestLog {
  private readonly ring: (Stored | undefined)[]
  private readonly seqs: number[]
  private next = 1
  /** Told of every entry added (the console's live stream); null when none listens, so adding costs nothing more. */
  onAdd: ((id: number) => void) | null = null
  /** The oldest id still kept (older ones were dropped for count or for bytes). */
  private first = 1
  private bytes = 0
  /** The byte budget, shared by every request log of a server (a number: a budget of this request log's own). */
  readonly budget: RequestLogBudget

  constructor(
    readonly capacity = 1000,
    budget: number | RequestLogBudget = DEFAULT_REQUEST_LOG_BYTES,
  ) {
    this.ring = new Array(Math.max(1, capacity))
    this.seqs = new Array(this.ring.length).fill(0)
    this.budget = typeof budget === 'number' ? new RequestLogBudget(budget) : budget
    this.budget.join(this)
  }

  get byteBudget(): number {
    return this.budget.limit
  }

  /** Set when the request log is shared by several processes (see `RequestLogFeed`). */
  feed: RequestLogFeed | null = null
  /** Shared: brings in what the other processes logged (before `list` answers a reader). */
  sync: (() => Promise<void>) | null = null

  /** Adds an entry; answers its id (0 when a shared store numbers it later). */
  add(e: RequestLogRecord): number {
    if (this.feed) {
      this.feed.write(e)
      return 0
    }
    return this.keep(e as Stored, this.next)
  }

  /** An entry of a shared request log, as the store numbered it (ids only grow). */
  mirror(e: RequestLogRecord, id: number): void {
    if (id < this.next) return
    this.keep(e as Stored, id)
  }

  private keep(entry: Stored, id: number): number {
    entry.id = id
    this.next = id + 1
    const slot = entry.id % this.ring.length
    const old = this.ring[slot]
    if (old) this.forget(old)
    this.ring[slot] = entry
    const size = entry.request?.length ?? 0
    this.bytes += size
    this.seqs[slot] = this.budget.added(size)
    if (this.first < entry.id - this.ring.length + 1) this.first = entry.id - this.ring.length + 1
    if (this.budget.bytes > this.budget.limit) this.budget.settle(this)
    if (this.onAdd) this.onAdd(entry.id)
    return entry.id
  }

  /** Whether the entry with this id is still kept. */
  holds(id: number): boolean {
    if (id < this.first || id >= this.next) return false
    return this.ring[id % this.ring.length]?.id === id
  }

  private forget(e: Stored): void {
    const size = e.request?.length ?? 0
    this.bytes -= size
    this.budget.bytes -= size
  }

  /** @internal The server-wide sequence number of the oldest entry kept (Infinity when none holds bytes). */
  oldestSeq(): number {
    if (this.bytes === 0) return Infinity
    while (this.first < this.next && this.ring[this.first % this.ring.length]?.id !== this.first) this.first++
    return this.first < this.next ? this.seqs[this.first % this.ring.length]! : Infinity
  }

  /** @internal Drops the oldest entry (never the newest when `keepNewest`); answers whether one went. */
  dropOldest(keepNewest: boolean): boolean {
    if (this.first >= this.next - (keepNewest ? 1 : 0)) return false
    const slot = this.first % this.ring.length
    const oldest = this.ring[slot]
    if (oldest && oldest.id === this.first) {
      this.forget(oldest)
      this.ring[slot] = undefined
    }
    this.first++
    return true
  }

  /** The id the next entry will get. */
  get nextId(): number {
    return this.next
  }

  /** Newest first; only entries with id > `since` (and about `msisdn`, when given). */
  list(limit = 100, since = 0, msisdn?: string): RequestLogEntry[] {
    const out: RequestLogEntry[] = []
    for (let id = this.next - 1; id > since && id >= this.first && out.length < limit; id--) {
      const e = this.ring[id % this.ring.length]
      if (!e || e.id !== id || (msisdn !== undefined && e.msisdn !== msisdn)) continue
      out.push({
        ...e,
        msisdn: e.msisdn ?? null,
        reason: e.reason ?? null,
        time: new Date(e.time).toISOString(),
        sandbox_time: formatTimestamp(e.sandbox_time),
        request: readBody(e.request),
        headers: e.headers === undefined ? undefined : (JSON.parse(e.headers) as Record<string, string>),
      })
    }
    return out
  }

  clear(): void {
    this.feed?.clear()
    this.forgetAll()
  }

  /** Forgets every entry here (a shared request log cleared by another process). */
  forgetAll(): void {
    this.ring.fill(undefined)
    this.first = this.next
    this.budget.bytes -= this.bytes
    this.bytes = 0
  }

  /** Forgets every entry and numbers from 1 again (a shared session deleted: the store numbers one made anew from 1). */
  restart(): void {
    this.forgetAll()
    this.next = this.first = 1
    this.restarts++
  }

  /** How many times it was numbered anew (`restart`): an id counts within one numbering. */
  restarts = 0

  get size(): number {
    return this.next - this.first
  }

  /** Bytes of request bodies held now. */
  get bodyBytes(): number {
    return this.bytes
  }
}

/** The body as JSON when it is JSON and shallow enough to list, else its text; null for none. */
function readBody(text: string | null): unknown {
  if (text === null) return null
  if (nestingDepth(text) > MAX_LISTED_DEPTH) return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** How deep brackets nest in a JSON text (outside strings). */
function nestingDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) max = depth
    } else if (c === 93 || c === 125) depth--
  }
  return max
}
