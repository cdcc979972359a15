/**
 * Ids in insertion order, for dropping the oldest records cheaply. (Asking a Map for its first key
 * after many deletes at its front walks over every deleted entry: quadratic under a steady churn.)
 * Dead ids (the oldest, dropped by a cap, and ids deleted out of order, as a handset's oldest message
 * past its own cap) stay until a pass drops them: at most a quarter more than the live ones plus a
 * margin, not up to twice as many.
 */
export class InsertionOrder {
  private ids: string[] = []
  private head = 0

  push(id: string, live: Map<string, unknown>): void {
    this.ids.push(id)
    // Dead ids (at the front or deleted out of order) at most a quarter of the live ones, plus a margin.
    if (this.ids.length > live.size + (live.size >> 2) + 1024) this.dropDead(live)
  }

  /** The oldest id still in `live`. */
  oldest(live: Map<string, unknown>): string | undefined {
    while (this.head < this.ids.length && !live.has(this.ids[this.head]!)) this.head++
    return this.ids[this.head]
  }

  /** Keeps only the live ids, in their order (amortized: it runs once per a quarter of `live` pushes). */
  private dropDead(live: Map<string, unknown>): void {
    const kept: string[] = []
    for (let i = this.head; i < this.ids.length; i++) if (live.has(this.ids[i]!)) kept.push(this.ids[i]!)
    this.ids = kept
    this.head = 0
  }

  /** The ids of `live`, in its order, and no others (after a rollback put records back in their places). */
  rebuild(live: Map<string, unknown>): void {
    this.ids = [...live.keys()]
    this.head = 0
  }

  clear(): void {
    this.ids = []
    this.head = 0
  }
}
