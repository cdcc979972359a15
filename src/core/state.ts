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
  /** A failed charge: the rule that failed it, in words (`rule charge-301 (ending 301): renewal INSUFFICIENT_FUNDS`). */
  reason?: string
}

export type SubscriptionStatus = 'ACTIVE' | 'CANCELED' | 'EXPIRED'

/**
 * What changed a subscription's state: a renewal or retry charge, a cancel by the control API
 * (`cancel`) or by a carrier rule (`carrier_cancel`), a STOP, an inactive merchant's lapse, or a
 * newer subscription of the same MSISDN and service (`superseded`: its carrier retries dropped).
 */
export type TransitionCause = 'renewal' | 'retry' | 'lapsed' | 'cancel' | 'carrier_cancel' | 'stop' | 'superseded'

/** One state change of a subscription after its activation (the activation is its `subscribed_at`). */
export interface Transition {
  at: number
  from: SubscriptionStatus
  to: SubscriptionStatus
  cause: TransitionCause
  /** `superseded`: the subscription whose activation dropped this one's retries. */
  superseded_by?: string
}

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
  /**
   * Its state changes after the activation, oldest first, the latest kept (bounded as `charges`).
   * Absent until the first (and in records written before it was kept: the timeline reads the rest).
   */
  history?: Transition[]
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
  /** Its OTP SMS was not delivered (a rule's `deliver: false`, or late): the rule that said so, in words. */
  withheld?: string
  /** Its OTP SMS is late (`deliver_after`) and reaches the inbox at this sandbox time; gone once delivered. */
  deliver_at?: number
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
  /** A late SMS (a rule's `deliver_after`): when it was sent; `at` is when it was delivered. */
  sent_at?: number
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
 * One change of one record (`v` null: deleted), or a reset. With `merge`, `v` holds only the fields
 * that changed, over the record as it was; with `add`, a subscription's charge history is the one
 * it had with `add` appended, then cut to its last `keep` (the write-ahead log's deltas: see Tx). A reset
 * marked `reloaded` is a shared store's state read afresh (nobody reset anything).
 */
export type Change = { c: CollectionName; id: string; v: unknown; merge?: true; add?: Charge[]; keep?: number } | { reset: true; reloaded?: true }

/** No messages. */
const NO_IDS: readonly string[] = Object.freeze([])

/**
 * Joins a string built by concatenation into one piece, in place: every reference sees the joined
 * string. Node's randomUUID builds an id from 20 pieces, and a rendered text from a few: kept as
 * pieces an id costs ~490 heap bytes, joined ~70. (Serializing a string joins it: the file store's
 * write-ahead log did so by chance, the memory store never.)
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

  /** Applies one change (from a transaction or from a store replaying its write-ahead log). */
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
    let v = change.v
    if (change.merge) {
      // A logged delta: the fields that changed, over the record as it was (a new record: `prev` may be shared).
      if (prev === undefined) throw new Error(`a change to ${change.c} record "${change.id}", which does not exist`)
      v = { ...(prev as object), ...(change.v as object) }
    }
    if (change.add) {
      // A logged subscription with only its new charges: the rest comes from its previous version.
      const rec = v as SubscriptionRecord
      rec.charges = ((prev as SubscriptionRecord | undefined)?.charges ?? []).concat(change.add).slice(-(change.keep ?? Infinity))
    }
    const had = prev !== undefined
    if (!had && change.c !== 'counters' && change.c !== 'meta') joined(change.id)
    map.set(change.id, v)
    if (change.c === 'verifs' && !had) this.verifOrder.push(change.id, this.verifs)
    if (change.c === 'subs') {
      const rec = v as SubscriptionRecord
      let set = this.subsByMsisdn.get(rec.msisdn)
      if (!set) this.subsByMsisdn.set(rec.msisdn, (set = new Set()))
      set.add(rec.id)
    } else if (change.c === 'sms' && !had) {
      const rec = v as SmsRecord
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
   * message comes back at its place in its inbox (by number), not at the end. A message or a
   * verification request the transaction dropped comes back at the end of its map for now: the
   * rollback ends with `placeRestored`.
   */
  restore(c: CollectionName, id: string, prev: unknown): void {
    const map = this[c] as Map<string, unknown>
    if (prev === undefined) return this.apply({ c, id, v: null })
    if (map.get(id) === prev) return
    if ((c !== 'sms' && c !== 'verifs') || map.has(id)) return this.apply({ c, id, v: prev })
    ;(this.restored ??= []).push(c, id)
    if (c === 'verifs') return this.apply({ c, id, v: prev })
    const rec = prev as SmsRecord
    map.set(id, rec)
    const list = [...this.smsIdsOf(rec.msisdn)]
    let i = list.length
    while (i > 0 && (this.sms.get(list[i - 1]!)?.n ?? 0) > rec.n) i--
    list.splice(i, 0, id)
    this.smsIds.set(rec.msisdn, list.length === 1 ? list[0]! : list)
  }

  /**
   * Flat (collection, id): the dropped records `restore` put back at the end of their maps, in the
   * order put back (the latest dropped first). Only a rollback sets it.
   */
  private restored: string[] | undefined

  /**
   * Ends a rollback: the messages and verification requests it put back go to their places, in the
   * map (its order is the snapshot's, and so a restart's) and in the order the caps drop them. A Map
   * only appends: each map with one put back is copied once, here (a rollback is rare; a commit
   * pays nothing for it). A message goes by its number. A verification request is only ever dropped
   * as the oldest (the cap): those put back go first, in the order they were dropped.
   */
  placeRestored(): void {
    const restored = this.restored
    if (!restored) return
    this.restored = undefined
    const back = { sms: new Set<string>(), verifs: new Set<string>() }
    for (let i = 0; i < restored.length; i += 2) back[restored[i] as 'sms' | 'verifs'].add(restored[i + 1]!)
    if (back.verifs.size) {
      const first = [...back.verifs].reverse().filter((id) => this.verifMap.has(id))
      const placed = new Map<string, VerificationRecord>()
      for (const id of first) placed.set(id, this.verifMap.get(id)!)
      for (const [id, v] of this.verifMap) if (!back.verifs.has(id)) placed.set(id, v)
      this.verifMap = placed
      this.deletes.verifs = 0
      this.verifOrder.rebuild(placed)
    }
    if (back.sms.size) {
      const put = [...back.sms].filter((id) => this.smsMap.has(id)).map((id) => [id, this.smsMap.get(id)!] as const)
      put.sort((a, b) => a[1].n - b[1].n)
      const placed = new Map<string, SmsRecord>()
      let k = 0
      for (const [id, m] of this.smsMap) {
        if (back.sms.has(id)) continue
        for (; k < put.length && put[k]![1].n < m.n; k++) placed.set(...put[k]!)
        placed.set(id, m)
      }
      for (; k < put.length; k++) placed.set(...put[k]!)
      this.smsMap = placed
      this.deletes.sms = 0
      this.smsOrder.rebuild(placed)
    }
  }

  clear(): void {
    for (const m of [this.subs, this.verifs, this.sms, this.rules, this.counters, this.meta, this.subsByMsisdn, this.smsIds]) m.clear()
    this.smsSeq = 0
    this.restored = undefined
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
