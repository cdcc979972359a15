/** Time that passes on its own (a running clock), and catching up after a restart, at engine level (no HTTP). */
import { describe, expect, it } from 'vitest'
import { State } from '../../src/core/state.js'
import { at, build } from './harness.js'

describe('a running clock', () => {
  it('an engine restarted over its saved state runs the events it missed, in order, exactly once', async () => {
    let real = at('2026-03-01T00:00:00')
    const a = build({ realNow: () => real, clockStart: { at: real, frozen: false } })
    const hourly = await a.subscribe('60123456001', 'QUICKTEST')
    const ending = await a.subscribe('60123456401', 'QUICKTEST')
    // Stopped; 30 hours and a minute later it starts again over what was saved.
    const saved = JSON.parse(JSON.stringify(a.state.toJSON()))
    real += 30 * 3_600_000 + 60_000
    const state = new State()
    state.load(saved)
    const b = build({ state, realNow: () => real, clockStart: { at: 0, frozen: true } })
    expect(b.engine.clockView()).toMatchObject({ now: '2026-03-02T06:01:00.000000', frozen: false, next_event_dt: '2026-03-01T01:00:00.000000' })
    // 30 renewals of the hourly one; 23 of the other before its carrier cancels it at +1 day.
    expect(await b.engine.catchUp()).toBe(30 + 23 + 1)
    const h = b.engine.subscription(hourly)
    expect(h.charge_count).toBe(31)
    const times = h.charges.map((c) => c.at)
    expect(times).toEqual([...times].sort())
    expect(b.engine.subscription(ending)).toMatchObject({ status: 'CANCELED', canceled_dt: '2026-03-02T00:00:00.000000', charge_count: 24 })
    // Nothing is due: a catch-up now runs nothing; an hour on it runs the one renewal.
    expect(await b.engine.catchUp()).toBe(0)
    real += 3_600_000
    expect(await b.engine.catchUp()).toBe(1)
    expect(b.engine.subscription(hourly).charge_count).toBe(32)
  })

  it('every operation first runs the events due by its time (a Status read sees the renewal)', async () => {
    let real = at('2026-03-01T00:00:00')
    const h = build({ realNow: () => real, clockStart: { at: real, frozen: false } })
    const id = await h.subscribe('60123456001', 'QUICKTEST')
    real += 3_600_000
    const demo = h.engine.authenticate('sandbox-demo-key')!
    const { result, durable } = h.engine.perform(demo, { op: 'status', input: { subscription_id: id } })
    expect(result.payload).toMatchObject({ subscription_id: id, expiry_dt: '2026-03-01T02:00:00.000000' })
    expect(durable).not.toBeNull()
    // Nothing more due: a read writes nothing and answers at once.
    expect(h.engine.perform(demo, { op: 'status', input: { subscription_id: id } }).durable).toBeNull()
  })
})
