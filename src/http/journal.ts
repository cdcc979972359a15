import { formatTimestamp } from '../core/time.js'

/** The request journal: the latest merchant API exchanges, bounded (a ring). Not persisted. */
export interface JournalEntry {
  id: number
  time: string
  sandbox_time: string
  method: string
  path: string
  ip: string | null
  merchant: string | null
  /** The MSISDN the request concerns, when its merchant may see it; null when none. */
  msisdn: string | null
  http_status: number
  message: string
  /** Why it failed (the X-DCB-Reason text); null on success. */
  reason: string | null
  /** The client went away before the answer (it was done all the same). */
  client_closed?: true
  duration_ms: number
  request: unknown
  response: unknown
}

/** As recorded on the hot path: times as numbers, formatted only when read. */
export interface JournalRecord extends Omit<JournalEntry, 'id' | 'time' | 'sandbox_time' | 'msisdn' | 'reason'> {
  time: number
  sandbox_time: number
  /** Null when absent (every entry read has both). */
  msisdn?: string | null
  reason?: string | null
}

type Stored = JournalRecord & { id: number }

export class RequestJournal {
  private readonly ring: (Stored | undefined)[]
  private next = 1
  /** Told of every entry added (the console's live stream); null when none listens, so adding costs nothing more. */
  onAdd: ((id: number) => void) | null = null

  constructor(readonly capacity = 1000) {
    this.ring = new Array(Math.max(1, capacity))
  }

  add(e: JournalRecord): void {
    const entry = e as Stored
    entry.id = this.next++
    this.ring[entry.id % this.ring.length] = entry
    if (this.onAdd) this.onAdd(entry.id)
  }

  /** The id the next entry will get. */
  get nextId(): number {
    return this.next
  }

  /** Newest first; only entries with id > `since` (and about `msisdn`, when given). */
  list(limit = 100, since = 0, msisdn?: string): JournalEntry[] {
    const out: JournalEntry[] = []
    for (let id = this.next - 1; id > since && id >= this.next - this.ring.length && out.length < limit; id--) {
      const e = this.ring[id % this.ring.length]
      if (!e || e.id !== id || (msisdn !== undefined && e.msisdn !== msisdn)) continue
      out.push({
        ...e,
        msisdn: e.msisdn ?? null,
        reason: e.reason ?? null,
        time: new Date(e.time).toISOString(),
        sandbox_time: formatTimestamp(e.sandbox_time),
      })
    }
    return out
  }

  clear(): void {
    this.ring.fill(undefined)
  }

  get size(): number {
    return Math.min(this.next - 1, this.ring.length)
  }
}
