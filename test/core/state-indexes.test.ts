import { describe, expect, it } from 'vitest'
import { State } from '../../src/core/state.js'
import { Tx } from '../../src/core/tx.js'
import { smsRecord } from './harness.js'

const sms = smsRecord

describe("a handset's message ids", () => {
  const threeMessages = () => {
    const state = new State()
    state.apply({ c: 'sms', id: 'a', v: sms('a', 1) })
    state.apply({ c: 'sms', id: 'b', v: sms('b', 2) })
    state.apply({ c: 'sms', id: 'c', v: sms('c', 3) })
    return state
  }

  it('lists one message, then several, oldest first', () => {
    const state = new State()
    expect(state.smsIdsOf('601200000001')).toEqual([])
    state.apply({ c: 'sms', id: 'a', v: sms('a', 1) })
    expect(state.smsIdsOf('601200000001')).toEqual(['a'])
    expect(state.smsCountOf('601200000001')).toBe(1)
    state.apply({ c: 'sms', id: 'b', v: sms('b', 2) })
    state.apply({ c: 'sms', id: 'c', v: sms('c', 3) })
    expect(state.smsIdsOf('601200000001')).toEqual(['a', 'b', 'c'])
  })

  it('drops messages one by one', () => {
    const state = threeMessages()
    state.apply({ c: 'sms', id: 'b', v: null })
    expect(state.smsIdsOf('601200000001')).toEqual(['a', 'c'])
    state.apply({ c: 'sms', id: 'a', v: null })
    expect(state.smsIdsOf('601200000001')).toEqual(['c'])
    expect(state.smsCountOf('601200000001')).toBe(1)
    state.apply({ c: 'sms', id: 'c', v: null })
    expect(state.smsIdsOf('601200000001')).toEqual([])
    expect(state.smsCountOf('601200000001')).toBe(0)
  })

  it('a rolled-back delete puts a message back at its place, with one message or several', () => {
    const state = new State()
    for (const [id, n] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      state.apply({ c: 'sms', id, v: sms(id, n) })
    state.apply({ c: 'sms', id: 'x', v: sms('x', 4, '601200000002') })
    const tx = new Tx(state)
    tx.del('sms', 'b')
    tx.del('sms', 'x')
    expect(state.smsIdsOf('601200000002')).toEqual([])
    tx.rollback()
    expect(state.smsIdsOf('601200000001')).toEqual(['a', 'b', 'c'])
    expect(state.smsIdsOf('601200000002')).toEqual(['x'])
  })
})

describe('the oldest record for the caps', () => {
  it('stays the oldest live one while most ids die out of order', () => {
    const state = new State()
    // Each handset keeps only its latest message: ids die in the middle of the insertion order.
    let n = 0
    const keepFirst = 'first'
    state.apply({ c: 'sms', id: keepFirst, v: sms(keepFirst, ++n, '609999999999') })
    for (let k = 0; k < 20_000; k++) {
      const msisdn = `6012000${String(k % 50).padStart(5, '0')}`
      const [old] = state.smsIdsOf(msisdn)
      const id = `m${k}`
      state.apply({ c: 'sms', id, v: sms(id, ++n, msisdn) })
      if (old) state.apply({ c: 'sms', id: old, v: null })
    }
    expect(state.sms.size).toBe(51)
    // The map is copied now and then under churn: still every live record, in insertion order.
    expect([...state.sms.keys()]).toEqual([keepFirst, ...Array.from({ length: 50 }, (_, k) => `m${19_950 + k}`)])
    expect(state.oldest('sms')).toBe(keepFirst)
    state.apply({ c: 'sms', id: keepFirst, v: null })
    expect(state.oldest('sms')).toBe('m19950')
  })
})

describe('capped maps under churn', () => {
  it('keep their records indexed while handsets come or go', () => {
    const state = new State()
    // Every message to a new number, the oldest dropped past 1,000: the maps are copied many times.
    for (let k = 0; k < 30_000; k++) {
      const id = `m${k}`
      state.apply({ c: 'sms', id, v: sms(id, k + 1, `6012${String(k).padStart(8, '0')}`) })
      state.apply({ c: 'verifs', id: `v${k}`, v: { id: `v${k}` } as never })
      if (state.sms.size > 1000) state.apply({ c: 'sms', id: state.oldest('sms')!, v: null })
      if (state.verifs.size > 1000) state.apply({ c: 'verifs', id: state.oldest('verifs')!, v: null })
    }
    expect([...state.sms.keys()]).toEqual(Array.from({ length: 1000 }, (_, k) => `m${29_000 + k}`))
    expect([...state.verifs.keys()]).toEqual(Array.from({ length: 1000 }, (_, k) => `v${29_000 + k}`))
    expect(state.smsIdsOf(`6012${String(28_999).padStart(8, '0')}`)).toEqual([])
    expect(state.smsIdsOf(`6012${String(29_000).padStart(8, '0')}`)).toEqual(['m29000'])
    expect(state.oldest('verifs')).toBe('v29000')
  })
})
