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
  http_status: number
  message: string
  duration_ms: number
  request: unknown
  response: unknown
}

/** As recorded on the hot path: times as numbers, formatted only when read. */
export interface JournalRecord extends Omit<JournalEntry, 'id' | 'time' | 'sandbox_time'> {
  time: number
  sandbox_time: number
}

type Stored = JournalRecord & { id: number }

export class RequestJournal {
  private readonly ring: (Stored | undefined)[]
  private next = 1

  constructor(readonly capacity = 1000) {
    this.ring = new Array(Math.max(1, capacity))
  }

  add(e: JournalRecord): void {
    const entry = e as Stored
    entry.id = this.next++
    this.ring[entry.id % this.ring.length] = entry
  }

  /** Newest first; only entries with id > `since`. */
  list(limit = 100, since = 0): JournalEntry[] {
    const out: JournalEntry[] = []
    for (let id = this.next - 1; id > since && id >= this.next - this.ring.length && out.length < limit; id--) {
      const e = this.ring[id % this.ring.length]
      if (e && e.id === id) out.push({ ...e, time: new Date(e.time).toISOString(), sandbox_time: formatTimestamp(e.sandbox_time) })
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
