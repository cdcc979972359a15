/**
 * The sandbox's mutable state: plain records in named collections, with the indexes the operations
 * need. Every change goes through a transaction that applies it at once and records it, so a store
 * can persist exactly what changed (never the whole state) before the answer leaves.
 */
import { InsertionOrder } from './insertion-order.js'

export interface Charge {
  at: number
  kind: 'first' | 'renewal' | 'retry'
  outcome: string
  amount: string | null
  currency: string | null
}

export type SubscriptionStatus = 'ACTIVE' | 'CANCELED' | 'EXPIRED'

export interface SubscriptionRecord {
  id: string
  merchant: string
  service: string
  country: string
  carrier: string
  msisdn: string
  language: string
  flow: 'otp' | 'psms' | 'redirect'
  status: SubscriptionStatus
  subscribed_at: number
  /** The first activation: periods are counted from here, so month ends clamp without drifting. */
  anchor_at: number
  /** How many periods are paid; `expiry_at` = anchor + periods x period. */
  periods: number
  expiry_at: number
  canceled_at: number | null
  cancel_reason: string | null
  /** Retries made since the last failed renewal. */
  retries: number
  /** When the carrier retries a failed renewal next, if it will. */
  next_retry_at: number | null
  /** When the carrier will cancel on its own (a rule's cancel_after), if ever. */
  carrier_cancel_at: number | null
  /** The latest charges (bounded); `charge_count` counts every charge ever made. */
  charges: Charge[]
  charge_count: number
}

export interface VerificationRecord {
  id: string
  merchant: string
  service: string
  country: string
  carrier: string
  msisdn: string
  language: string
  flow: 'otp' | 'redirect'
  otp: string | null
  created_at: number
  expires_at: number
  attempts: number
  /** pending: usable; used: succeeded or consumed by a charge failure; denied: consent denied; expired: past its TTL. */
  state: 'pending' | 'used' | 'denied' | 'expired'
  subscription_id: string | null
  result: string | null
  /** It answered MAX_PIN_RETRIES or PIN_EXPIRED: a later Verify for it is a coverage finding. */
  locked_out?: true
}

export interface SmsRecord {
  id: string
  /** Monotonic number, to order messages of the same millisecond. */
  n: number
  msisdn: string
  /** mt: carrier to handset (inbox); mo: handset to carrier (outbox). */
  direction: 'mt' | 'mo'
  from: string
  to: string
  text: string
  at: number
  kind: string
  verif_request_id?: string
  otp?: string
  subscription_id?: string
}

export interface RuntimeRuleRecord {
  id: string
  created_at: number
  /** The order added (the last added is consulted first, whatever the sandbox time). */
  seq?: number
  /** The rule as given (validated by the rule schema). */
  rule: unknown
  used: number
}

export interface ClockRecord {
  /** Added to real time when the clock runs. */
  offset_ms: number
  /** Fixed sandbox time when the clock is frozen. */
  frozen_at: number | null
}

export interface Collections {
  subs: SubscriptionRecord
  verifs: VerificationRecord
  sms: SmsRecord
  rules: RuntimeRuleRecord
  counters: number
  meta: unknown
}
export type CollectionName = keyof Collections

/**
 * One change of one record (`v` null: deleted), or a reset. A subscription whose charge history grew
 * is journaled with only the charges it added (`add`, the history then cut to its last `keep`), not
 * its whole history once more: a renewal writes one charge, not up to a hundred. A reset marked
 * `reloaded` is a shared store's state read afresh (nobody reset anything).
 */
export type Change = { c: CollectionName; id: string; v: unknown; add?: Charge[]; keep?: number } | { reset: true; reloaded?: true }

/** No messages. */
const NO_IDS: readonly string[] = Object.freeze([])

/**
 * Joins a string built by concatenation into one piece, in place: every reference sees the joined
 * string. Node's randomUUID builds an id from 20 pieces, and a rendered text from a few: kept as
 * pieces an id costs ~490 heap bytes, joined ~70. (Serializing a string joins it: the file store's
 * journal did so by chance, the memory store never.)
 */
export function joined(s: string): void {
  JSON.stringify(s)
}

export class State {
  readonly subs = new Map<string, SubscriptionRecord>()
  /** Copied now and then (see `deleted`): read it from the state each time, never keep it. */
  get verifs(): Map<string, VerificationRecord> {
    return this.verifMap
  }
  /** Copied now and then (see `deleted`): read it from the state each time, never keep it. */
  get sms(): Map<string, SmsRecord> {
    return this.smsMap
  }
  private verifMap = new Map<string, VerificationRecord>()
  private smsMap = new Map<string, SmsRecord>()
  readonly rules = new Map<string, RuntimeRuleRecord>()
  readonly counters = new Map<string, number>()
  readonly meta = new Map<string, unknown>()

  /** msisdn -> subscription ids */
  readonly subsByMsisdn = new Map<string, Set<string>>()
  /**
   * msisdn -> sms ids, oldest first: the id itself while the handset has one message (most numbers
   * get one; an array of one costs ~90 bytes more), an array from the second on.
   */
  private smsIds = new Map<string, string | string[]>()
  /**
   * Deletes since each capped map was last copied. V8 keeps a Map's deleted slots until it is full,
   * then doubles it unless half are deleted: at a cap of 50,000 under churn a Map sits at 131,072
   * slots (~3.5 MiB). Copied once per a quarter of its size in deletes (a copy of 50,000 entries
   * takes a few ms), it stays at 65,536.
   */
  private readonly deletes = { verifs: 0, sms: 0, smsIds: 0 }
  smsSeq = 0
  private readonly smsOrder = new InsertionOrder()
  private readonly verifOrder = new InsertionOrder()

  /** The ids of a handset's messages, oldest first (do not change the answer). */
  smsIdsOf(msisdn: string): readonly string[] {
    const ids = this.smsIds.get(msisdn)
    return ids === undefined ? NO_IDS : typeof ids === 'string' ? [ids] : ids
  }

  /** How many messages a handset has. */
  smsCountOf(msisdn: string): number {
    const ids = this.smsIds.get(msisdn)
    return ids === undefined ? 0 : typeof ids === 'string' ? 1 : ids.length
  }

  /** The oldest SMS message or verification request (for the memory caps). */
  oldest(c: 'sms' | 'verifs'): string | undefined {
    return c === 'sms' ? this.smsOrder.oldest(this.sms) : this.verifOrder.oldest(this.verifs)
  }

  /** Applies one change (from a transaction or from a store replaying its journal). */
  apply(change: Change): void {
    if ('reset' in change) return this.clear()
    const map = this[change.c] as Map<string, unknown>
    if (change.v === null || change.v === undefined) {
      const old = map.get(change.id)
      map.delete(change.id)
      if (change.c === 'subs' && old) this.subsByMsisdn.get((old as SubscriptionRecord).msisdn)?.delete(change.id)
      if (change.c === 'sms' && old) this.dropSmsId((old as SmsRecord).msisdn, change.id)
      if (old !== undefined && (change.c === 'verifs' || change.c === 'sms')) this.deleted(change.c)
      return
    }
    const prev = map.get(change.id)
    // The same record again (changed in place by its own transaction): indexes are up to date.
    if (prev === change.v) return
    if (change.add) {
      // A journaled subscription with only its new charges: the rest comes from its previous version.
      const rec = change.v as SubscriptionRecord
      rec.charges = ((prev as SubscriptionRecord | undefined)?.charges ?? []).concat(change.add).slice(-(change.keep ?? Infinity))
    }
    const had = prev !== undefined
    if (!had && change.c !== 'counters' && change.c !== 'meta') joined(change.id)
    map.set(change.id, change.v)
    if (change.c === 'verifs' && !had) this.verifOrder.push(change.id, this.verifs)
    if (change.c === 'subs') {
      const rec = change.v as SubscriptionRecord
      let set = this.subsByMsisdn.get(rec.msisdn)
      if (!set) this.subsByMsisdn.set(rec.msisdn, (set = new Set()))
      set.add(rec.id)
    } else if (change.c === 'sms' && !had) {
      const rec = change.v as SmsRecord
      const ids = this.smsIds.get(rec.msisdn)
      if (ids === undefined) this.smsIds.set(rec.msisdn, rec.id)
      else if (typeof ids === 'string') this.smsIds.set(rec.msisdn, [ids, rec.id])
      else ids.push(rec.id)
      this.smsOrder.push(rec.id, this.sms)
      if (rec.n > this.smsSeq) this.smsSeq = rec.n
    }
  }

  /** Counts a delete from a capped map; copies the map (its live entries, in order) every so often. */
  private deleted(c: 'verifs' | 'sms' | 'smsIds'): void {
    const size = c === 'verifs' ? this.verifMap.size : c === 'sms' ? this.smsMap.size : this.smsIds.size
    if (++this.deletes[c] < Math.max(4096, size >> 2)) return
    this.deletes[c] = 0
    if (c === 'verifs') this.verifMap = new Map(this.verifMap)
    else if (c === 'sms') this.smsMap = new Map(this.smsMap)
    else this.smsIds = new Map(this.smsIds)
  }

  /** Takes a message off its handset's list (back to the bare id when one is left). */
  private dropSmsId(msisdn: string, id: string): void {
    const ids = this.smsIds.get(msisdn)
    if (ids === undefined) return
    if (typeof ids === 'string') {
      if (ids === id && this.smsIds.delete(msisdn)) this.deleted('smsIds')
      return
    }
    const i = ids.indexOf(id)
    if (i >= 0) ids.splice(i, 1)
    if (ids.length === 1) this.smsIds.set(msisdn, ids[0]!)
    else if (!ids.length && this.smsIds.delete(msisdn)) this.deleted('smsIds')
  }

  /**
   * Puts a record back as it was before a transaction (`prev` undefined: it did not exist). A
   * message comes back at its place in its inbox (by number), not at the end.
   */
  restore(c: CollectionName, id: string, prev: unknown): void {
    const map = this[c] as Map<string, unknown>
    if (prev === undefined) return this.apply({ c, id, v: null })
    if (map.get(id) === prev) return
    if (c !== 'sms' || map.has(id)) return this.apply({ c, id, v: prev })
    const rec = prev as SmsRecord
    map.set(id, rec)
    const list = [...this.smsIdsOf(rec.msisdn)]
    let i = list.length
    while (i > 0 && (this.sms.get(list[i - 1]!)?.n ?? 0) > rec.n) i--
    list.splice(i, 0, id)
    this.smsIds.set(rec.msisdn, list.length === 1 ? list[0]! : list)
    this.smsOrder.push(id, this.sms)
  }

  clear(): void {
    for (const m of [this.subs, this.verifs, this.sms, this.rules, this.counters, this.meta, this.subsByMsisdn, this.smsIds]) m.clear()
    this.smsSeq = 0
    this.smsOrder.clear()
    this.verifOrder.clear()
  }

  /** Everything, as plain JSON (a snapshot). */
  toJSON(): Record<CollectionName, Record<string, unknown>> {
    const out = {} as Record<CollectionName, Record<string, unknown>>
    for (const c of COLLECTIONS) out[c] = Object.fromEntries(this[c] as Map<string, unknown>)
    return out
  }

  /** Loads a snapshot made by toJSON. */
  load(data: Partial<Record<CollectionName, Record<string, unknown>>>): void {
    this.clear()
    for (const c of COLLECTIONS) for (const [id, v] of Object.entries(data[c] ?? {})) this.apply({ c, id, v })
  }

  /** Number of records, for health and the benchmark. */
  size(): number {
    let n = 0
    for (const c of COLLECTIONS) n += (this[c] as Map<string, unknown>).size
    return n
  }
}

export const COLLECTIONS: CollectionName[] = ['subs', 'verifs', 'sms', 'rules', 'counters', 'meta']

/** A reset in a transaction's undo log. */
const RESET = Symbol('reset')

/**
 * Collects the changes of one operation while applying them to the state. Several changes to one
 * record within a transaction are kept as the last one (a year of renewals writes each subscription
 * once), in the order the records were first touched.
 */
export class Tx {
  /** Per collection, the last change of each record, in the order records were first touched. */
  private readonly byCollection = new Map<CollectionName, Map<string, Change>>()
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

  /** Records a change (before it is applied: the record as it was is kept for `rollback`). */
  private record(c: CollectionName, id: string, change: Change): void {
    if (c === 'sms') {
      this.undo.push(c, id, this.state.sms.get(id))
      this.smsChanges.push(change)
      this.count++
      return
    }
    let m = this.byCollection.get(c)
    if (!m) this.byCollection.set(c, (m = new Map()))
    if (!m.has(id)) {
      this.count++
      this.undo.push(c, id, (this.state[c] as Map<string, unknown>).get(id))
    }
    m.set(id, change)
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
    u.length = 0
  }

  /** Subscriptions as they were before this transaction first changed them (for charge deltas). */
  private readonly subsBefore = new Map<string, SubscriptionRecord | undefined>()

  put<C extends CollectionName>(c: C, id: string, v: Collections[C]): Collections[C] {
    if (c === 'subs' && !this.subsBefore.has(id)) this.subsBefore.set(id, this.state.subs.get(id))
    const change: Change = { c, id, v }
    this.record(c, id, change)
    this.state.apply(change)
    if (c === 'subs') (this.created ??= new WeakSet()).add(v as object)
    return v
  }

  del(c: CollectionName, id: string): void {
    const change: Change = { c, id, v: null }
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
    this.subsBefore.clear()
    this.count = 0
    this.wasReset = true
  }

  get size(): number {
    return this.count + (this.wasReset ? 1 : 0)
  }

  get changes(): Change[] {
    const out: Change[] = this.wasReset ? [{ reset: true }] : []
    for (const [c, m] of this.byCollection) for (const ch of m.values()) out.push(c === 'subs' ? this.subChange(ch) : ch)
    for (const ch of this.smsChanges) out.push(ch)
    return out
  }

  /** A subscription's change as journaled: with only the charges added, when its history just grew. */
  private subChange(ch: Change): Change {
    if ('reset' in ch) return ch
    const v = ch.v as SubscriptionRecord | null
    const before = this.subsBefore.get(ch.id)
    if (!v || !before) return ch
    const n = v.charges.length
    const added = Math.min(v.charge_count - before.charge_count, n)
    // Only an append to the history as it was (the charge before the new ones is its last one).
    if (added < 0 || added === n || v.charges[n - added - 1] !== before.charges[before.charges.length - 1]) return ch
    return { c: 'subs', id: ch.id, v: withoutCharges(v), add: v.charges.slice(n - added), keep: n }
  }
}

/** A subscription record but its charges (as a literal: a spread that drops a field is much slower). */
function withoutCharges(v: SubscriptionRecord): Omit<SubscriptionRecord, 'charges'> {
  return {
    id: v.id,
    merchant: v.merchant,
    service: v.service,
    country: v.country,
    carrier: v.carrier,
    msisdn: v.msisdn,
    language: v.language,
    flow: v.flow,
    status: v.status,
    subscribed_at: v.subscribed_at,
    anchor_at: v.anchor_at,
    periods: v.periods,
    expiry_at: v.expiry_at,
    canceled_at: v.canceled_at,
    cancel_reason: v.cancel_reason,
    retries: v.retries,
    next_retry_at: v.next_retry_at,
    carrier_cancel_at: v.carrier_cancel_at,
    charge_count: v.charge_count,
  } satisfies Record<Exclude<keyof SubscriptionRecord, 'charges'>, unknown>
}
