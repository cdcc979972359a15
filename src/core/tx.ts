/**
 * Transactions: every change to the state goes through one, which applies it at once and records
 * it, so a store persists exactly what changed and a failed write can be taken back.
 */
import { COLLECTIONS, type Change, type Charge, type CollectionName, type Collections, type State, type SubscriptionRecord } from './state.js'

/** A reset in a transaction's undo log. */
const RESET = Symbol('reset')

/**
 * Collects the changes of one operation while applying them to the state. Several changes to one
 * record within a transaction are kept as the last one (a year of renewals writes each subscription
 * once), in the order the records were first touched.
 */
export class Tx {
  /** Per collection, the last change of each record, in the order records were first touched. */
  private readonly byCollection = new Map<CollectionName, Map<string, Touched>>()
  private count = 0
  private wasReset = false
  /**
   * What `rollback` puts back, flat: collection, id, the record before this transaction first
   * touched it (undefined: none). A reset is kept as RESET and a copy of every collection.
   */
  private readonly undo: unknown[] = []
  /** Subscription records this transaction created: it may change them in place until it ends (nothing else has seen them). */
  private created: WeakSet<object> | undefined // made on first use: most transactions (every Status) create nothing
  constructor(readonly state: State) {}

  /**
   * Renews in place a subscription record this transaction put itself (nothing outside it has seen
   * that record): one more period paid until `expiryAt`, the charge added, the history kept to its
   * last `keep`. No put: the transaction holds this very record and commits it as it ends. Answers
   * false, changing nothing, for any other record (the caller puts a renewed copy). A long advance
   * renews a subscription once per period: this spares a copy of the record and its history each time.
   */
  renewOwned(sub: SubscriptionRecord, charge: Charge, expiryAt: number, keep: number): boolean {
    if (!this.created?.has(sub)) return false
    if (sub.charges.length >= keep) sub.charges.shift()
    sub.charges.push(charge)
    sub.periods += 1
    sub.expiry_at = expiryAt
    sub.charge_count += 1
    return true
  }

  /** SMS messages are only ever added or dropped, never changed: their changes are kept as they come. */
  private readonly smsChanges: Change[] = []

  /**
   * Records a change (before it is applied: the record as it was is kept for `rollback` and for the
   * write-ahead log's delta); answers the record as it was before this transaction (of a message: before this change).
   */
  private record(c: CollectionName, id: string, change: RecordChange): unknown {
    if (c === 'sms') {
      const before = this.state.sms.get(id)
      this.undo.push(c, id, before)
      this.smsChanges.push(change)
      this.count++
      return before
    }
    let m = this.byCollection.get(c)
    if (!m) this.byCollection.set(c, (m = new Map()))
    const touched = m.get(id)
    if (touched) {
      touched.change = change
      return touched.before
    }
    const before = (this.state[c] as Map<string, unknown>).get(id)
    this.count++
    this.undo.push(c, id, before)
    m.set(id, { change, before })
    return before
  }

  /** Takes every change of this transaction back from the state, the latest first. */
  rollback(): void {
    const u = this.undo
    for (let i = u.length - 3; i >= 0; i -= 3) {
      if (u[i] === RESET) {
        this.state.clear()
        const before = u[i + 2] as [CollectionName, [string, unknown][]][]
        for (const [c, entries] of before) for (const [id, v] of entries) this.state.apply({ c, id, v })
      } else this.state.restore(u[i] as CollectionName, u[i + 1] as string, u[i + 2])
    }
    this.state.placeRestored()
    u.length = 0
  }

  put<C extends CollectionName>(c: C, id: string, v: Collections[C]): Collections[C] {
    const change: RecordChange = { c, id, v }
    const before = this.record(c, id, change)
    this.state.apply(change)
    if (c === 'subs' && isOwnCopy(v as SubscriptionRecord, before as SubscriptionRecord | undefined)) (this.created ??= new WeakSet()).add(v as object)
    return v
  }

  del(c: CollectionName, id: string): void {
    const change: RecordChange = { c, id, v: null }
    this.record(c, id, change)
    this.state.apply(change)
  }

  reset(): void {
    this.undo.push(
      RESET,
      '',
      COLLECTIONS.map((c) => [c, [...(this.state[c] as Map<string, unknown>)]]),
    )
    this.state.clear()
    this.byCollection.clear()
    this.smsChanges.length = 0
    this.count = 0
    this.wasReset = true
  }

  get size(): number {
    return this.count + (this.wasReset ? 1 : 0)
  }

  /** The changes as a store logs them: a record changed in place as only its changed fields. */
  get changes(): Change[] {
    const out: Change[] = this.wasReset ? [{ reset: true }] : []
    for (const m of this.byCollection.values()) for (const t of m.values()) out.push(logged(t))
    for (const ch of this.smsChanges) out.push(ch)
    return out
  }
}

type RecordChange = Extract<Change, { c: CollectionName }>

/**
 * Whether a subscription put is this transaction's own, to renew in place: not the record as it was
 * before the transaction (the undo log keeps that one to put back, and others may hold it), nor a
 * copy sharing its charge history (`renewOwned` changes the history in place). A subscription made
 * in the transaction, and a renewed copy with its own history, are: a long advance copies each
 * subscription once, not once per renewal.
 */
function isOwnCopy(v: SubscriptionRecord, before: SubscriptionRecord | undefined): boolean {
  return v !== before && v.charges !== before?.charges
}

/** A record's last change in a transaction, and the record before the transaction first touched it. */
interface Touched {
  change: RecordChange
  before: unknown
}

/** Collections whose records change in place (the others are added and dropped, or are plain values). */
const CHANGED_IN_PLACE = new Set<CollectionName>(['subs', 'verifs', 'rules'])

/**
 * A change as logged. A record that existed before the transaction goes as the fields that
 * changed (`merge`): a Verify writes the four fields it sets, not the whole verification again. A
 * subscription whose charge history only grew goes with the charges it added (`add`, the history
 * then cut to its last `keep`), not up to a hundred of them again.
 */
function logged({ change, before }: Touched): Change {
  const v = change.v as Record<string, unknown> | null
  // New, deleted, a plain value, or changed in place (nothing to compare with): the whole record.
  if (!v || !before || before === v || !CHANGED_IN_PLACE.has(change.c)) return change
  const was = before as Record<string, unknown>
  if (change.c === 'subs') {
    const sub = v as unknown as SubscriptionRecord
    const old = before as SubscriptionRecord
    const n = sub.charges.length
    const added = Math.min(sub.charge_count - old.charge_count, n)
    // Only an append to the history as it was (the charge before the new ones is its last one).
    if (added > 0 && added < n && sub.charges[n - added - 1] === old.charges[old.charges.length - 1]) {
      const fields = changedFields(was, v, 'charges')
      if (fields) return { c: 'subs', id: change.id, v: fields, merge: true, add: sub.charges.slice(n - added), keep: n }
    }
  }
  const fields = changedFields(was, v)
  return fields ? { c: change.c, id: change.id, v: fields, merge: true } : change
}

/**
 * The fields of `v` that differ from `before` (compared by identity: a nested object rebuilt goes
 * whole), without `skip`; null when a field was dropped or set to undefined (JSON cannot say that:
 * the whole record goes instead).
 */
function changedFields(before: Record<string, unknown>, v: Record<string, unknown>, skip?: string): Record<string, unknown> | null {
  const out: Record<string, unknown> = {}
  for (const k in before) if (!(k in v)) return null
  for (const k in v) {
    const x = v[k]
    if (x === before[k] || k === skip) continue
    if (x === undefined) return null
    out[k] = x
  }
  return out
}
