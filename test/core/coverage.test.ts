/**
 * Coverage counts in the engine: what a write counts is persisted with its own changes; what a read
 * (Status) counts is never waited for, and while writes fail it waits in memory until one works.
 */
import { describe, expect, it } from 'vitest'
import { Engine } from '../../src/core/engine.js'
import { State, type Change } from '../../src/core/state.js'
import { parseTimestamp } from '../../src/core/time.js'
import { engineAt, world } from './harness.js'

const counters = (changes: Change[]) => changes.filter((c) => 'c' in c && c.c === 'counters').map((c) => c as { id: string; v: unknown })

describe('coverage counts in the store', () => {
  it('an Init counts in its own transaction (written with the call)', async () => {
    const h = engineAt('2026-01-31T09:00:00')
    const demo = h.engine.authenticate('sandbox-demo-key')!
    await h.engine.init(demo, { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' })
    const last = h.persisted.at(-1)!
    expect(last.some((c) => 'c' in c && c.c === 'verifs')).toBe(true)
    expect(counters(last)).toEqual([{ c: 'counters', id: 'cov|init.otp|demo', v: 1 }])
  })

  /** An engine with one subscription whose writes then fail, and a Status made while they fail. */
  const statusWhileFailing = async () => {
    const state = new State()
    let failing = false
    const written: Change[][] = []
    let pending = 0
    const engine = new Engine({
      world: world(),
      state,
      clockStart: { at: parseTimestamp('2026-01-31T09:00:00'), frozen: true },
      persist: async (changes) => {
        pending++
        await Promise.resolve()
        pending--
        if (failing) throw new Error('ENOSPC: no space left on device')
        written.push(changes)
      },
    })
    const demo = engine.authenticate('sandbox-demo-key')!
    const init = await engine.init(demo, { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' })
    const sub = await engine.verify(demo, { verif_request_id: init.payload!.verif_request_id as string, otp: engine.latestOtp('60123456001')!.otp! })
    const id = sub.payload!.subscription_id as string
    failing = true
    const status = engine.perform(demo, { op: 'status', input: { subscription_id: id } })
    const control = {
      fail: (on: boolean) => void (failing = on),
      settled: async () => {
        while (pending) await new Promise((r) => setImmediate(r))
      },
    }
    return { state, engine, demo, status, written, control }
  }

  it('a Status answers without waiting for a write, counted in memory', async () => {
    const { engine, status } = await statusWhileFailing()
    // Nothing to wait for: the answer leaves at once, counted in memory.
    expect(status.durable).toBeNull()
    expect(status.result.code).toBe('SUCCESS')
    expect(engine.coverageReport('demo')[0]!.outcomes.find((o) => o.id === 'status.ACTIVE')!.count).toBe(1)
  })

  it("while writes fail a Status's counts wait in memory, then go with the first write that works", async () => {
    const { state, engine, demo, written, control } = await statusWhileFailing()
    await control.settled()
    expect(written.flat().some((c) => 'id' in c && c.id === 'cov|status.ACTIVE|demo')).toBe(false)
    // Writes work again: the next write carries on, and the waiting count is written after it.
    control.fail(false)
    await engine.init(demo, { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' })
    await control.settled()
    await new Promise((r) => setImmediate(r))
    await control.settled()
    expect(counters(written.flat()).filter((c) => c.id === 'cov|status.ACTIVE|demo')).toEqual([{ c: 'counters', id: 'cov|status.ACTIVE|demo', v: 1 }])
    // Replayed from what was written, the counts are as in memory.
    const replayed = new State()
    for (const changes of written) for (const ch of changes) replayed.apply(ch)
    expect(Object.fromEntries([...replayed.counters].filter(([k]) => k.startsWith('cov|')))).toEqual(
      Object.fromEntries([...state.counters].filter(([k]) => k.startsWith('cov|'))),
    )
  })
})
