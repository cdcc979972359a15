/**
 * The sandbox's event queue: when each subscription and verification request next needs the clock
 * (a renewal, a carrier retry or cancellation, an OTP or consent expiry, a late OTP SMS delivered). Entries are not removed
 * when their record changes: an entry whose time no longer matches its record is stale and skipped.
 */
import { MinHeap } from './heap.js'
import type { State, SubscriptionRecord, VerificationRecord } from './state.js'

export interface QueueEntry<P> {
  at: number
  seq: number
  /** `sms`: a verification request's late OTP SMS reaches the inbox. */
  kind: 'sub' | 'verif' | 'sms'
  id: string
  /** What the engine found for this record once (a subscription's renewal plan). */
  plan?: P
}

/** When a subscription next needs the clock, or null (CANCELED, or EXPIRED with no retry left). */
export function subEventAt(sub: SubscriptionRecord): number | null {
  if (sub.status === 'ACTIVE') return sub.carrier_cancel_at !== null ? Math.min(sub.expiry_at, sub.carrier_cancel_at) : sub.expiry_at
  if (sub.status === 'EXPIRED') return sub.next_retry_at
  return null
}

export class EventQueue<P> {
  private readonly heap = new MinHeap<QueueEntry<P>>()
  private seq = 0

  constructor(private readonly state: State) {
    this.rebuild()
  }

  get size(): number {
    return this.heap.size
  }

  schedule(kind: QueueEntry<P>['kind'], id: string, at: number | null): void {
    if (at === null) return
    this.heap.push({ at, seq: ++this.seq, kind, id })
    // Stale entries stay in the heap until their time comes (a verification request dropped by the
    // cap, say); past a quarter of the live ones, rebuild it so memory stays bounded under a steady load.
    const live = this.state.subs.size + this.state.verifs.size
    if (this.heap.size > live + (live >> 2) + 1024) this.rebuild()
  }

  scheduleSub(sub: SubscriptionRecord): void {
    this.schedule('sub', sub.id, subEventAt(sub))
  }

  /** A verification request's events: its expiry while pending, its late SMS until delivered. */
  scheduleVerif(v: VerificationRecord): void {
    if (v.state === 'pending') this.schedule('verif', v.id, v.expires_at)
    if (v.deliver_at !== undefined) this.schedule('sms', v.id, v.deliver_at)
  }

  /** The earliest entry, live or stale. */
  peek(): QueueEntry<P> | undefined {
    return this.heap.peek()
  }

  pop(): void {
    this.heap.pop()
  }

  /** Moves the top entry (just run) to its record's next time: one sift, no new entry. */
  moveTop(top: QueueEntry<P>, at: number): void {
    top.at = at
    top.seq = ++this.seq
    this.heap.retop()
  }

  /** Whether the entry's record is still due at the entry's time. */
  live(e: QueueEntry<P>): boolean {
    if (e.kind === 'sub') {
      const s = this.state.subs.get(e.id)
      return s !== undefined && subEventAt(s) === e.at
    }
    const v = this.state.verifs.get(e.id)
    if (e.kind === 'sms') return v !== undefined && v.deliver_at === e.at
    return v !== undefined && v.state === 'pending' && v.expires_at === e.at
  }

  /** When the next event falls due, or null (stale entries on the way are dropped). */
  nextAt(): number | null {
    for (;;) {
      const top = this.heap.peek()
      if (!top) return null
      if (this.live(top)) return top.at
      this.heap.pop()
    }
  }

  /** Entries anew from the state (after a reset, or when stale entries pile up). */
  rebuild(): void {
    this.heap.clear()
    for (const s of this.state.subs.values()) {
      const at = subEventAt(s)
      if (at !== null) this.heap.push({ at, seq: ++this.seq, kind: 'sub', id: s.id })
    }
    for (const v of this.state.verifs.values()) {
      if (v.state === 'pending') this.heap.push({ at: v.expires_at, seq: ++this.seq, kind: 'verif', id: v.id })
      if (v.deliver_at !== undefined) this.heap.push({ at: v.deliver_at, seq: ++this.seq, kind: 'sms', id: v.id })
    }
  }
}
