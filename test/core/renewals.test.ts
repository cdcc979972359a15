/** Renewals, retries and carrier cancellations on the sandbox clock, at engine level (no HTTP). */
import { describe, expect, it } from 'vitest'
import { SandboxError } from '../../src/core/engine.js'
import { at, engineAt } from './harness.js'

const T = (s: string) => `${s}.000000`

describe('renewals', () => {
  it('monthly from Jan 31: Feb 28, Mar 31, Apr 30, May 31 (the anchor day, clamped, never drifting)', async () => {
    const { engine, subscribe } = engineAt('2026-01-31T09:00:00')
    const id = await subscribe('60123456001')
    expect(engine.subscription(id).expiry_dt).toBe(T('2026-02-28T09:00:00'))
    const move = await engine.advance('P1M')
    expect(move.eventCount).toBe(1)
    expect(move.events).toEqual([
      {
        at: T('2026-02-28T09:00:00'),
        type: 'renewed',
        subscription_id: id,
        msisdn: '60123456001',
        service_code: 'STREAMPLUS',
        status: 'ACTIVE',
        expiry_dt: T('2026-03-31T09:00:00'),
      },
    ])
    expect(move.clock).toMatchObject({ now: T('2026-02-28T09:00:00'), frozen: true, next_event_dt: T('2026-03-31T09:00:00') })
    await engine.setTime('2026-04-30T09:00:00')
    const sub = engine.subscription(id)
    expect(sub).toMatchObject({ status: 'ACTIVE', subscribed_dt: T('2026-01-31T09:00:00'), expiry_dt: T('2026-05-31T09:00:00'), charge_count: 4 })
    expect(sub.charges.map((c) => [c.kind, c.outcome, c.at, c.amount, c.currency])).toEqual([
      ['first', 'SUCCESS', T('2026-01-31T09:00:00'), '9.90', 'MYR'],
      ['renewal', 'SUCCESS', T('2026-02-28T09:00:00'), '9.90', 'MYR'],
      ['renewal', 'SUCCESS', T('2026-03-31T09:00:00'), '9.90', 'MYR'],
      ['renewal', 'SUCCESS', T('2026-04-30T09:00:00'), '9.90', 'MYR'],
    ])
    expect(engine.smsFor('60123456001')[0]).toMatchObject({ kind: 'renewal', text: 'Your Stream Plus subscription was renewed for 9.90 MYR.' })
  })

  it('leap years: Jan 31 2028 renews on Feb 29, then Mar 31', async () => {
    const { engine, subscribe } = engineAt('2028-01-31T00:00:00')
    const id = await subscribe('60123456001')
    expect(engine.subscription(id).expiry_dt).toBe(T('2028-02-29T00:00:00'))
    await engine.advance('P1M')
    expect(engine.subscription(id).expiry_dt).toBe(T('2028-03-31T00:00:00'))
  })

  it('a year over many subscriptions: every one renewed each month, events in time order', async () => {
    const { engine, subscribe } = engineAt('2026-01-31T09:00:00')
    const ids: string[] = []
    for (let i = 0; i < 50; i++) ids.push(await subscribe(`6012${String(i).padStart(5, '0')}0${String(i % 100).padStart(2, '0')}`))
    const weekly = await subscribe('60123456002', 'GAMECLUB')
    const move = await engine.advance('P1Y')
    const ats = move.events.map((e) => e.at)
    expect(ats).toEqual([...ats].sort())
    expect(move.events.filter((e) => e.subscription_id === weekly)).toHaveLength(52)
    expect(move.eventCount).toBe(50 * 12 + 52)
    const subs = engine.listSubscriptions({ service: 'STREAMPLUS', status: 'active' })
    expect(subs).toHaveLength(50)
    expect(new Set(subs.map((s) => s.expiry_dt))).toEqual(new Set([T('2027-02-28T09:00:00')]))
  })

  /** A year's advance over a subscription made before it, with what was read of it before. */
  const longAdvance = async () => {
    const { engine, state, persisted, subscribe } = engineAt('2026-01-31T09:00:00', { chargesPerSubscription: 5 })
    const id = await subscribe('60123456001')
    const before = state.subs.get(id)!
    const snapshot = structuredClone(before)
    const view = engine.subscription(id)
    const writes = persisted.length
    await engine.advance('P1Y')
    return { id, state, persisted, before, snapshot, view, writes }
  }

  it('a long advance never changes what was read before it', async () => {
    const { before, snapshot, view } = await longAdvance()
    expect(before).toEqual(snapshot)
    expect(view.charge_count).toBe(1)
  })

  it('a long advance renews a record in place only when its own transaction made it', async () => {
    const { id, state, before } = await longAdvance()
    const after = state.subs.get(id)!
    expect(after).not.toBe(before)
    expect(after).toMatchObject({ periods: 13, charge_count: 13, expiry_at: at('2027-02-28T09:00:00') })
    expect(after.charges.map((c) => c.kind)).toEqual(['renewal', 'renewal', 'renewal', 'renewal', 'renewal'])
  })

  it('a long advance writes a subscription once, as the move ends', async () => {
    const { id, persisted, writes } = await longAdvance()
    // The whole move is one transaction: the subscription is written to the write-ahead log once, as it ends, with the charges it added.
    expect(persisted.length).toBe(writes + 1)
    const subChanges = persisted.at(-1)!.filter((c) => 'c' in c && c.c === 'subs')
    expect(subChanges).toHaveLength(1)
    expect(subChanges[0]).toMatchObject({ id, v: { charge_count: 13, periods: 13 } })
  })
})

describe('failed renewals and retries (magic endings)', () => {
  /** 302: the first renewal fails, the retry a day later succeeds. */
  const retried302 = async () => {
    const { engine, subscribe } = engineAt('2026-01-31T09:00:00')
    const id = await subscribe('60123456302')
    const failed = await engine.advance('P1M')
    const expired = engine.subscription(id)
    const retried = await engine.advance('P1D')
    return { engine, failed, expired, retried, sub: engine.subscription(id) }
  }

  it('a failed charge names the rule that failed it, in its event too', async () => {
    const { failed, sub } = await retried302()
    const why = 'rule renewal-302 (ending 302): renewal INSUFFICIENT_FUNDS'
    expect((failed.events[0] as { reason?: string }).reason).toBe(why)
    expect(sub.charges.map((c) => c.reason)).toEqual([undefined, why, undefined])
  })

  it('302: the first renewal fails (EXPIRED), the retry a day later succeeds, anchoring a new period', async () => {
    const { engine, failed, expired, retried, sub } = await retried302()
    expect(failed.events).toEqual([
      expect.objectContaining({ type: 'renewal_failed', status: 'EXPIRED', code: 'INSUFFICIENT_FUNDS', at: T('2026-02-28T09:00:00') }),
    ])
    expect(expired).toMatchObject({ status: 'EXPIRED', next_retry_dt: T('2026-03-01T09:00:00'), expiry_dt: T('2026-02-28T09:00:00') })
    expect(retried.events).toEqual([expect.objectContaining({ type: 'retry_succeeded', status: 'ACTIVE', expiry_dt: T('2026-04-01T09:00:00') })])
    expect(sub).toMatchObject({ status: 'ACTIVE', next_retry_dt: null, charge_count: 3 })
    expect(sub.charges.map((c) => [c.kind, c.outcome])).toEqual([
      ['first', 'SUCCESS'],
      ['renewal', 'INSUFFICIENT_FUNDS'],
      ['retry', 'SUCCESS'],
    ])
    expect((await engine.advance('P1M')).events).toEqual([expect.objectContaining({ type: 'renewed', expiry_dt: T('2026-05-01T09:00:00') })])
  })

  it('301: once the renewal fails, then its one retry, nothing more happens', async () => {
    const { engine, subscribe } = engineAt('2026-01-31T09:00:00')
    const id = await subscribe('60123456301')
    expect((await engine.advance('P1M')).events.map((e) => e.type)).toEqual(['renewal_failed'])
    expect((await engine.advance('P1D')).events).toEqual([expect.objectContaining({ type: 'retry_failed', status: 'EXPIRED', code: 'INSUFFICIENT_FUNDS' })])
    expect(engine.subscription(id)).toMatchObject({ status: 'EXPIRED', next_retry_dt: null })
    expect(engine.nextEventAt()).toBeNull()
    expect((await engine.advance('P1Y')).eventCount).toBe(0)
    expect(
      engine
        .smsFor('60123456301')
        .map((m) => m.kind)
        .slice(0, 2),
    ).toEqual(['renewal_failed', 'renewal_failed'])
  })
})

describe('carrier cancellations', () => {
  it('401: the carrier cancels one day after activation, telling the handset', async () => {
    const { engine, subscribe } = engineAt('2026-01-31T09:00:00')
    const id = await subscribe('60123456401')
    expect(engine.subscription(id).carrier_cancel_dt).toBe(T('2026-02-01T09:00:00'))
    const move = await engine.advance('P2D')
    expect(move.events).toEqual([expect.objectContaining({ type: 'carrier_canceled', subscription_id: id, status: 'CANCELED', at: T('2026-02-01T09:00:00') })])
    expect(engine.subscription(id)).toMatchObject({
      status: 'CANCELED',
      cancel_reason: 'carrier',
      canceled_dt: T('2026-02-01T09:00:00'),
      carrier_cancel_dt: null,
    })
    expect(engine.smsFor('60123456401')[0]).toMatchObject({ kind: 'canceled', text: 'Your Stream Plus subscription has been canceled by your carrier.' })
    expect((await engine.advance('P1M')).eventCount).toBe(0)
  })

  it('cancel(): CANCELED at once, then no renewals', async () => {
    const { engine, subscribe } = engineAt('2026-01-31T09:00:00')
    const id = await subscribe('60123456001')
    await engine.advance('P1D')
    const done = await engine.cancel(id)
    expect(done).toMatchObject({ subscription_id: id, status: 'CANCELED', cancel_reason: 'carrier', canceled_dt: T('2026-02-01T09:00:00') })
    expect((await engine.advance('P1Y')).eventCount).toBe(0)
  })

  it('cancel(): a second cancel is refused ALREADY_CANCELED (409)', async () => {
    const { engine, subscribe } = engineAt('2026-01-31T09:00:00')
    const id = await subscribe('60123456001')
    await engine.cancel(id)
    await expect(engine.cancel(id)).rejects.toMatchObject({ status: 409, code: 'ALREADY_CANCELED' })
  })

  it('cancel(): an unknown id is refused SUBSCRIPTION_NOT_FOUND (404)', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    await expect(engine.cancel('nope')).rejects.toBeInstanceOf(SandboxError)
    await expect(engine.cancel('nope')).rejects.toMatchObject({ status: 404, code: 'SUBSCRIPTION_NOT_FOUND' })
  })
})

describe('the clock', () => {
  it('refuses a bad duration (400 BAD_DURATION)', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    await expect(engine.advance('soon')).rejects.toMatchObject({ status: 400, code: 'BAD_DURATION' })
  })

  it('refuses a bad time (400 BAD_TIME)', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    await expect(engine.setTime('yesterday')).rejects.toMatchObject({ status: 400, code: 'BAD_TIME' })
  })

  it('refuses a move backwards (409 CLOCK_BACKWARDS)', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    await expect(engine.setTime('2026-01-01T00:00:00')).rejects.toMatchObject({ status: 409, code: 'CLOCK_BACKWARDS' })
  })

  it('refuses a move past the year 9999 (400 CLOCK_LIMIT)', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    await expect(engine.advance('P8000Y')).rejects.toMatchObject({ status: 400, code: 'CLOCK_LIMIT' })
  })

  it('a refused clock move changes nothing', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    for (const refused of [engine.advance('soon'), engine.setTime('yesterday'), engine.setTime('2026-01-01T00:00:00'), engine.advance('P8000Y')])
      await refused.catch(() => undefined)
    expect(engine.clockView()).toEqual({ now: T('2026-01-31T09:00:00'), frozen: true, offset_ms: 0, next_event_dt: null })
  })

  it('reset: back to the start time with nothing in it', async () => {
    const { engine, subscribe } = engineAt('2026-01-31T09:00:00')
    await subscribe('60123456001')
    await engine.advance('P3D')
    await engine.reset()
    expect(engine.clockView().now).toBe(T('2026-01-31T09:00:00'))
    expect(engine.sizes()).toEqual({ subscriptions: 0, verifications: 0, sms: 0, rules: 0, queue: 0 })
  })
})
