/**
 * A transaction taken back (its write failed) leaves the state as it was: the capped maps in their
 * order (the oldest record is the one a restart would drop first), and no record seen before the
 * transaction changed in place.
 */
import { describe, expect, it } from 'vitest'
import { newSubscription } from '../../src/core/subscriptions.js'
import { State, type Charge, type SubscriptionRecord, type VerificationRecord } from '../../src/core/state.js'
import { Tx } from '../../src/core/tx.js'
import { smsRecord } from './harness.js'

const sms = smsRecord
const verif = (id: string, at: number) => ({ id, created_at: at, msisdn: '601200000001', state: 'pending' }) as VerificationRecord

/** What the caps do: put a record, then drop the oldest while over `cap`. */
function putCapped(tx: Tx, c: 'verifs' | 'sms', rec: { id: string }, cap: number): void {
  tx.put(c, rec.id, rec as never)
  while (tx.state[c].size > cap) tx.del(c, tx.state.oldest(c)!)
}

/** The order a restart reads: the records (snapshot order), each capped map's oldest, each handset's messages. */
function orderOf(state: State) {
  return {
    verifs: [...state.verifs.keys()],
    sms: [...state.sms.keys()],
    oldest: [state.oldest('verifs'), state.oldest('sms')],
    handsets: ['601200000001', '601200000002'].map((m) => [...state.smsIdsOf(m)]),
  }
}

describe('a rollback of a transaction that dropped capped records', () => {
  it('puts verification requests back at the front, in their order, as the oldest', () => {
    const state = new State()
    for (let k = 1; k <= 5; k++) state.apply({ c: 'verifs', id: `v${k}`, v: verif(`v${k}`, k) })
    const before = orderOf(state)
    const tx = new Tx(state)
    putCapped(tx, 'verifs', verif('v6', 6), 5)
    putCapped(tx, 'verifs', verif('v7', 7), 5)
    expect([...state.verifs.keys()]).toEqual(['v3', 'v4', 'v5', 'v6', 'v7'])
    tx.rollback()
    expect(orderOf(state)).toEqual(before)
    // The next drop takes the oldest, as a restart replaying the write-ahead log would.
    putCapped(new Tx(state), 'verifs', verif('v8', 8), 5)
    expect([...state.verifs.keys()]).toEqual(['v2', 'v3', 'v4', 'v5', 'v8'])
  })

  it('puts messages back at their places, those either cap dropped (the oldest of all, a handset oldest in the middle) included', () => {
    const state = new State()
    const ones = ['601200000001', '601200000002', '601200000001', '601200000002', '601200000001']
    ones.forEach((m, k) => state.apply({ c: 'sms', id: `m${k + 1}`, v: sms(`m${k + 1}`, k + 1, m) }))
    const before = orderOf(state)
    const tx = new Tx(state)
    // Handset 1 keeps two: its oldest (m3, past m1 dropped by the overall cap) goes from the middle.
    putCapped(tx, 'sms', sms('m6', 6, '601200000001'), 5)
    tx.del('sms', state.smsIdsOf('601200000001')[0]!)
    expect([...state.sms.keys()]).toEqual(['m2', 'm4', 'm5', 'm6'])
    tx.rollback()
    expect(orderOf(state)).toEqual(before)
  })

  it('of several transactions, taken back the latest first, leaves the first one dropped the oldest', () => {
    const state = new State()
    for (let k = 1; k <= 5; k++) state.apply({ c: 'verifs', id: `v${k}`, v: verif(`v${k}`, k) })
    for (let k = 1; k <= 5; k++) state.apply({ c: 'sms', id: `m${k}`, v: sms(`m${k}`, k, `60120000000${k}`) })
    const before = orderOf(state)
    const txs = [6, 7, 8].map((k) => {
      const tx = new Tx(state)
      putCapped(tx, 'verifs', verif(`v${k}`, k), 5)
      putCapped(tx, 'sms', sms(`m${k}`, k, `60120000000${k}`), 5)
      return tx
    })
    for (const tx of txs.reverse()) tx.rollback()
    expect(orderOf(state)).toEqual(before)
  })

  it('keeps the order when the transaction compacted the insertion order meanwhile (many records dropped)', () => {
    const state = new State()
    for (let k = 0; k < 3000; k++) state.apply({ c: 'verifs', id: `v${k}`, v: verif(`v${k}`, k) })
    const before = orderOf(state)
    const tx = new Tx(state)
    // Enough dropped ids to make the order drop its dead ones during the transaction.
    for (let k = 3000; k < 6000; k++) putCapped(tx, 'verifs', verif(`v${k}`, k), 3000)
    tx.rollback()
    expect(orderOf(state)).toEqual(before)
  })
})

describe('subscriptions a transaction may renew in place', () => {
  const charge = (at: number): Charge => ({ at, kind: 'renewal', outcome: 'SUCCESS', amount: '1.00', currency: 'MYR' })
  const who = { merchant: 'm', service: 'S', country: 'my', carrier: 'c', msisdn: '601200000001', language: 'en', flow: 'otp' } as const
  const month = { months: 1, ms: 0 }
  const stateWith = (sub: SubscriptionRecord) => {
    const state = new State()
    state.apply({ c: 'subs', id: sub.id, v: sub })
    return state
  }

  it('are not the record as it was before the transaction, put back', () => {
    const sub = newSubscription('s1', 0, month, null, who)
    const state = stateWith(sub)
    const as = structuredClone(sub)
    const tx = new Tx(state)
    tx.put('subs', 's1', sub)
    expect(tx.renewOwned(sub, charge(1), 2, 4)).toBe(false)
    tx.rollback()
    expect(state.subs.get('s1')).toEqual(as)
  })

  it('are not the record as it was, put back after a copy of it', () => {
    const sub = newSubscription('s1', 0, month, null, who)
    const state = stateWith(sub)
    const as = structuredClone(sub)
    const tx = new Tx(state)
    tx.put('subs', 's1', { ...sub, charges: [...sub.charges], status: 'EXPIRED' })
    tx.put('subs', 's1', sub)
    expect(tx.renewOwned(sub, charge(1), 2, 4)).toBe(false)
    tx.rollback()
    expect(state.subs.get('s1')).toEqual(as)
  })

  it('are not a copy that shares the charge history of the record as it was (a renewal in place would change that history)', () => {
    const sub = newSubscription('s1', 0, month, null, who)
    const state = stateWith(sub)
    const as = structuredClone(sub)
    const tx = new Tx(state)
    const canceled = tx.put('subs', 's1', { ...sub, status: 'CANCELED' })
    expect(tx.renewOwned(canceled, charge(1), 2, 4)).toBe(false)
    tx.rollback()
    expect(state.subs.get('s1')).toEqual(as)
  })

  it('are a subscription made in the transaction or a renewed copy (its own history) of one made before: a long advance copies once', () => {
    const old = newSubscription('s1', 0, month, null, who)
    const state = stateWith(old)
    const as = structuredClone(old)
    const tx = new Tx(state)
    const made = tx.put('subs', 's2', newSubscription('s2', 0, month, null, who))
    expect(tx.renewOwned(made, charge(1), 2, 4)).toBe(true)
    expect(tx.renewOwned(old, charge(1), 2, 4)).toBe(false)
    const renewed = tx.put('subs', 's1', { ...old, charges: [...old.charges, charge(1)], periods: 2, charge_count: 2 })
    expect(tx.renewOwned(renewed, charge(2), 3, 4)).toBe(true)
    expect(renewed.charges).toHaveLength(3)
    tx.rollback()
    expect(state.subs.get('s1')).toEqual(as)
    expect(state.subs.has('s2')).toBe(false)
  })
})
