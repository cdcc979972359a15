import { describe, expect, it } from 'vitest'
import { EventQueue, subEventAt } from '../../src/core/queue.js'
import { State, type SubscriptionRecord } from '../../src/core/state.js'

const sub = (id: string, expiry_at: number, more: Partial<SubscriptionRecord> = {}): SubscriptionRecord => ({
  id,
  merchant: 'demo',
  service: 'S',
  country: 'my',
  carrier: 'c',
  msisdn: `601${id}`,
  language: 'en',
  flow: 'otp',
  status: 'ACTIVE',
  subscribed_at: 0,
  anchor_at: 0,
  periods: 1,
  expiry_at,
  canceled_at: null,
  cancel_reason: null,
  retries: 0,
  next_retry_at: null,
  carrier_cancel_at: null,
  charges: [],
  charge_count: 1,
  ...more,
})

describe('event queue', () => {
  it('knows when a subscription next needs the clock', () => {
    expect(subEventAt(sub('a', 100))).toBe(100)
    expect(subEventAt(sub('a', 100, { carrier_cancel_at: 50 }))).toBe(50)
    expect(subEventAt(sub('a', 100, { status: 'EXPIRED', next_retry_at: 130 }))).toBe(130)
    expect(subEventAt(sub('a', 100, { status: 'EXPIRED' }))).toBeNull()
    expect(subEventAt(sub('a', 100, { status: 'CANCELED' }))).toBeNull()
  })

  it('skips entries whose record changed since, down to none due', () => {
    const state = new State()
    state.apply({ c: 'subs', id: 'a', v: sub('a', 100) })
    const q = new EventQueue(state)
    expect(q.nextAt()).toBe(100)
    state.apply({ c: 'subs', id: 'a', v: sub('a', 200) })
    q.scheduleSub(state.subs.get('a')!)
    expect(q.nextAt()).toBe(200)
    state.apply({ c: 'subs', id: 'a', v: sub('a', 200, { status: 'CANCELED' }) })
    expect(q.nextAt()).toBeNull()
    expect(q.size).toBe(0)
  })

  it('stays bounded when records keep changing (stale entries are dropped by a rebuild)', () => {
    const state = new State()
    for (let i = 0; i < 10; i++) state.apply({ c: 'subs', id: `s${i}`, v: sub(`s${i}`, 1000 + i) })
    const q = new EventQueue(state)
    let most = 0
    for (let k = 1; k <= 5000; k++) {
      const id = `s${k % 10}`
      state.apply({ c: 'subs', id, v: sub(id, 1000 + k) })
      q.scheduleSub(state.subs.get(id)!)
      most = Math.max(most, q.size)
    }
    expect(most).toBeLessThanOrEqual(2 * 10 + 1024 + 1)
    expect(q.nextAt()).toBe(1000 + 4991)
  })

  it('keeps stale entries to a quarter of the live ones (plus a margin)', () => {
    const state = new State()
    for (let i = 0; i < 4000; i++) state.apply({ c: 'subs', id: `s${i}`, v: sub(`s${i}`, 1000 + i) })
    const q = new EventQueue(state)
    let most = 0
    for (let k = 1; k <= 20_000; k++) {
      const id = `s${k % 4000}`
      state.apply({ c: 'subs', id, v: sub(id, 10_000 + k) })
      q.scheduleSub(state.subs.get(id)!)
      most = Math.max(most, q.size)
    }
    expect(most).toBeLessThanOrEqual(4000 + 1000 + 1024 + 1)
    expect(q.nextAt()).toBe(10_000 + 16_001)
  })
})
