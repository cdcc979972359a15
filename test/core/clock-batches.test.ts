/**
 * Long clock moves at engine level: they run in batches with a turn for the host between them,
 * writes wait for them while reads answer, an interrupted move stops at a batch boundary and a
 * restart goes on from there; a running clock stops at the last time a timestamp can say.
 */
import { describe, expect, it } from 'vitest'
import { State, type Change } from '../../src/core/state.js'
import { at, build, engineAt } from './harness.js'

/** A host whose turns are handed out by the test: the move waits at each batch boundary until `release`. */
function gatedHost() {
  const waiting: (() => void)[] = []
  return {
    yieldToHost: () => new Promise<void>((resolve) => waiting.push(resolve)),
    /** How many boundaries the move waits at now (0 or 1). */
    get waiting() {
      return waiting.length
    },
    release: () => waiting.shift()?.(),
  }
}

/** Lets every pending promise run (the move reaches its next boundary). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

/** A promise and whether it has settled yet. */
function track<T>(p: Promise<T>) {
  const t = { done: false, value: undefined as T | undefined, error: undefined as unknown }
  p.then(
    (v) => ((t.done = true), (t.value = v)),
    (e) => ((t.done = true), (t.error = e)),
  )
  return t
}

/** A new State from every persisted transaction, as a store replays its write-ahead log after a restart. */
function replay(persisted: Change[][]): State {
  const state = new State()
  for (const changes of persisted) for (const ch of changes) state.apply(ch)
  return state
}

describe('a long clock move runs in batches', () => {
  /** The same two days' move over the same subscriptions, in batches of 7 events and as one. */
  const bothWays = async () => {
    const host = { turns: 0 }
    const ids1 = { n: 0 }
    const ids2 = { n: 0 }
    const batched = engineAt('2026-03-01T00:00:00', { moveBatchEvents: 7, yieldToHost: async () => void host.turns++, newId: () => `id-${++ids1.n}` })
    const whole = engineAt('2026-03-01T00:00:00', { newId: () => `id-${++ids2.n}` })
    const ids: string[][] = []
    for (const h of [batched, whole]) {
      ids.push([await h.subscribe('60123456001', 'QUICKTEST'), await h.subscribe('60123456002', 'STREAMPLUS'), await h.subscribe('60123456003', 'QUICKTEST')])
    }
    const before = batched.persisted.length
    const a = await batched.engine.advance('P2D')
    const b = await whole.engine.advance('P2D')
    return { host, batched, whole, ids, before, a, b }
  }

  it('answers the same events, leaving the same state, as one batch', async () => {
    const { batched, whole, ids, a, b } = await bothWays()
    expect(a.events.length).toBe(96)
    expect(a.events).toEqual(b.events)
    expect(a.clock).toEqual(b.clock)
    for (let i = 0; i < 3; i++) expect(batched.engine.subscription(ids[0]![i]!)).toEqual(whole.engine.subscription(ids[1]![i]!))
  })

  it('gives the host a turn between batches, each written with the clock at its end', async () => {
    const { host, batched, before } = await bothWays()
    const turns = host.turns
    // 96 events, 7 a batch, a batch never ending inside a time (two renewals an hour): 8 a batch, 12 batches.
    expect(batched.persisted.length - before).toBe(12)
    expect(turns).toBe(11)
    // Each batch leaves the clock at its end: the hour of its last renewal, then the target.
    const clocks = batched.persisted
      .slice(before)
      .map((changes) => (changes.find((c) => 'c' in c && c.c === 'meta')! as { v: { frozen_at: number } }).v.frozen_at)
    expect(clocks.at(-1)).toBe(at('2026-03-03T00:00:00'))
    for (const t of clocks.slice(0, -1)) expect(t % 3_600_000).toBe(0)
    expect(clocks).toEqual([...clocks].sort((x, y) => x - y))
  })

  it('keeps writes waiting until it ends (moves, MO, rules, cancel, reset), while reads answer at a batch boundary', async () => {
    // The rule schema, which the first rule loads, loaded now: counting turns below leaves no room for a module load.
    await import('../../src/core/rule-check.js')
    const host = gatedHost()
    const h = engineAt('2026-03-01T00:00:00', { moveBatchEvents: 10, yieldToHost: host.yieldToHost })
    const id = await h.subscribe('60123456001', 'QUICKTEST')
    const move = track(h.engine.advance('P1D'))
    await settle()
    expect(host.waiting).toBe(1)
    // At the first boundary: ten renewals run, the clock there.
    expect(h.engine.clockView().now).toBe('2026-03-01T10:00:00.000000')
    expect(h.engine.subscription(id).charge_count).toBe(11)
    const later = track(h.engine.advance('PT1H'))
    const cancel = track(h.engine.cancel(id))
    const rule = track(h.engine.addRule({ id: 'barred', step: 'init', effect: { error: 'BARRED' } }))
    const mo = track(h.engine.mo({ msisdn: '60123456002', short_code: '32123', text: 'QUICK' }))
    await settle()
    expect([later.done, cancel.done, rule.done, mo.done]).toEqual([false, false, false, false])
    expect(h.engine.subscription(id).status).toBe('ACTIVE')
    expect(h.engine.rules().runtime).toEqual([])
    while (!move.done) {
      host.release()
      await settle()
    }
    expect(move.error).toBeUndefined()
    while (!later.done) {
      host.release()
      await settle()
    }
    await settle()
    expect([later.done, cancel.done, rule.done, mo.done]).toEqual([true, true, true, true])
    // In the order they came: the second move after the first, the cancellation after both.
    expect(move.value!.clock.now).toBe('2026-03-02T00:00:00.000000')
    expect(later.value!.clock.now).toBe('2026-03-02T01:00:00.000000')
    expect(h.engine.subscription(id)).toMatchObject({ status: 'CANCELED', canceled_dt: '2026-03-02T01:00:00.000000', charge_count: 26 })
    expect(h.engine.rules().runtime.map((r) => r.id)).toEqual(['barred'])
    // A reset waits the same way.
    await h.engine.deleteAllRules()
    await h.subscribe('60123456003', 'QUICKTEST')
    const again = track(h.engine.advance('P1D'))
    await settle()
    const reset = track(h.engine.reset())
    await settle()
    expect(reset.done).toBe(false)
    while (!again.done) {
      host.release()
      await settle()
    }
    await settle()
    expect(reset.done).toBe(true)
    expect(h.engine.sizes().subscriptions).toBe(0)
  })

  const sequence = () => {
    let n = 0
    return () => `id-${++n}`
  }
  /** A year's move interrupted after six batches of a hundred events. */
  const interrupted = async () => {
    const host = gatedHost()
    const h = engineAt('2026-03-01T00:00:00', { moveBatchEvents: 100, yieldToHost: host.yieldToHost, newId: sequence() })
    const hourly = await h.subscribe('60123456001', 'QUICKTEST')
    const monthly = await h.subscribe('60123456002', 'STREAMPLUS')
    const move = track(h.engine.setTime('2027-03-01T00:00:00'))
    for (let i = 0; i < 5; i++) {
      await settle()
      host.release()
    }
    await settle()
    h.engine.interrupt()
    host.release()
    await settle()
    return { h, hourly, monthly, move }
  }

  it('stops at a batch boundary when interrupted (503 SHUTTING_DOWN): every event up to there run, none after', async () => {
    const { h, hourly, move } = await interrupted()
    expect(move.done).toBe(true)
    expect(move.error).toMatchObject({ status: 503, code: 'SHUTTING_DOWN' })
    const stoppedAt = h.engine.now()
    expect((move.error as Error).message).toBe(
      `the server is shutting down: the clock move stopped at ${h.engine.clockView().now}, every event up to there run; move it on after the restart`,
    )
    // Six batches of a hundred hourly renewals (the monthly one renews once among them).
    expect(stoppedAt).toBe(at('2026-03-26T00:00:00'))
    const sub = h.engine.subscription(hourly)
    expect(sub.charge_count).toBe(1 + 600)
    expect(sub.expiry_dt).toBe('2026-03-26T01:00:00.000000')
    // Any later move stops at once too (the host is going away).
    await expect(h.engine.advance('P1D')).rejects.toMatchObject({ code: 'SHUTTING_DOWN' })
  })

  it('a restart after an interrupted move goes on from where it stopped', async () => {
    const { h, hourly, monthly } = await interrupted()
    await h.engine.advance('P1D').catch(() => undefined)
    // A restart over what was persisted: the clock where the move stopped, nothing due, nothing resumed.
    const b = build({ state: replay(h.persisted), clockStart: { at: 0, frozen: true } })
    expect(b.engine.clockView()).toMatchObject({ now: '2026-03-26T00:00:00.000000', frozen: true, next_event_dt: '2026-03-26T01:00:00.000000' })
    expect(await b.engine.catchUp()).toBe(0)
    // Moved on to the first target, it ends as one uninterrupted move would have.
    await b.engine.setTime('2027-03-01T00:00:00')
    const whole = engineAt('2026-03-01T00:00:00', { newId: sequence() })
    const ids = [await whole.subscribe('60123456001', 'QUICKTEST'), await whole.subscribe('60123456002', 'STREAMPLUS')]
    await whole.engine.setTime('2027-03-01T00:00:00')
    expect(b.engine.subscription(hourly)).toEqual(whole.engine.subscription(ids[0]!))
    expect(b.engine.subscription(monthly)).toEqual(whole.engine.subscription(ids[1]!))
    const times = b.engine.subscription(hourly).charges.map((c) => at(c.at))
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(3_600_000)
  })

  it('ends a batch after moveBatchMs of work on the injected work clock (asked every 1,024 events)', async () => {
    let ms = 0
    let turns = 0
    // Each reading of the work clock finds 100 ms more work done.
    const h = engineAt('2026-03-01T00:00:00', { workClock: () => (ms += 100), moveBatchMs: 500, yieldToHost: async () => void turns++ })
    const id = await h.subscribe('60123456001', 'QUICKTEST')
    const before = h.persisted.length
    const move = await h.engine.advance('P730D')
    expect(move.eventCount).toBe(730 * 24)
    // Over at the fifth question: 5 x 1,024 events a batch, then the rest.
    const counts = h.persisted
      .slice(before)
      .map((changes) => (changes.find((c) => 'c' in c && c.c === 'subs')! as { v: { charge_count: number } }).v.charge_count)
    const sizes = counts.map((n, i) => n - (i ? counts[i - 1]! : 1))
    expect(sizes).toEqual([5120, 5120, 5120, 730 * 24 - 3 * 5120])
    expect(turns).toBe(3)
    expect(h.engine.subscription(id).charge_count).toBe(1 + 730 * 24)
  })

  it('runs a long catch-up in batches too', async () => {
    let real = at('2026-03-01T00:00:00')
    let turns = 0
    const h = build({ realNow: () => real, clockStart: { at: real, frozen: false }, moveBatchEvents: 10, yieldToHost: async () => void turns++ })
    const id = await h.subscribe('60123456001', 'QUICKTEST')
    real += 95 * 3_600_000
    expect(await h.engine.catchUp()).toBe(95)
    expect(turns).toBe(9)
    expect(h.engine.subscription(id).charge_count).toBe(96)
  })
})

describe('a running clock', () => {
  it('stops at 9999-12-31T23:59:59.999 instead of drifting into year 10000', () => {
    let real = at('2026-03-01T00:00:00')
    const h = build({ realNow: () => real, clockStart: { at: at('9999-12-31T23:00:00'), frozen: false } })
    expect(h.engine.clockView()).toMatchObject({ now: '9999-12-31T23:00:00.000000', frozen: false })
    real += 30 * 60_000
    expect(h.engine.clockView().now).toBe('9999-12-31T23:30:00.000000')
    real += 2 * 3_600_000
    expect(h.engine.clockView().now).toBe('9999-12-31T23:59:59.999000')
    expect(h.engine.now()).toBe(at('9999-12-31T23:59:59.999'))
    real += 365 * 86_400_000
    expect(h.engine.clockView().now).toBe('9999-12-31T23:59:59.999000')
  })

  it('mid-move, the clock reads the time the move reached, with the next event after it, on a running clock too (issue 41)', async () => {
    // Real time runs on while the move works: a running clock read meanwhile was ahead of the events run.
    let real = Date.parse('2026-03-01T00:00:00Z')
    const host = gatedHost()
    const h = build({ clockStart: { at: real, frozen: false }, realNow: () => real, moveBatchEvents: 5, yieldToHost: host.yieldToHost })
    // Quarter-hourly renewals, four subscriptions a minute apart: events close together.
    for (let i = 0; i < 4; i++) {
      await h.subscribe(`6012345600${i + 1}`, 'QUICKTEST')
      real += 60_000
    }
    const move = track(h.engine.advance('P1D'))
    let seen = 0
    while (!move.done) {
      await settle()
      if (!host.waiting) continue
      real += 30 * 60_000
      const view = h.engine.clockView()
      expect(view.move).toEqual({ to: expect.any(String), events_run: expect.any(Number) })
      expect(view.move!.events_run).toBeGreaterThan(0)
      expect(at(view.next_event_dt!)).toBeGreaterThanOrEqual(at(view.now))
      seen++
      host.release()
    }
    expect(seen).toBeGreaterThan(3)
    const done = move.value!
    expect(done.clock.move).toBeUndefined()
    expect(h.engine.clockView().move).toBeUndefined()
  })
})
