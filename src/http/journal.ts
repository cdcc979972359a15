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

export class RequestJournal {
  private readonly ring: (JournalEntry | undefined)[]
  private next = 1
  private readonly listeners = new Set<(e: JournalEntry) => void>()

  constructor(readonly capacity = 1000) {
    this.ring = new Array(Math.max(1, capacity))
  }

  add(e: Omit<JournalEntry, 'id'>): JournalEntry {
    const entry = { id: this.next++, ...e }
    this.ring[entry.id % this.ring.length] = entry
    for (const l of this.listeners) l(entry)
    return entry
  }

  /** Newest first; only entries with id > `since`. */
  list(limit = 100, since = 0): JournalEntry[] {
    const out: JournalEntry[] = []
    for (let id = this.next - 1; id > since && id >= this.next - this.ring.length && out.length < limit; id--) {
      const e = this.ring[id % this.ring.length]
      if (e && e.id === id) out.push(e)
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
