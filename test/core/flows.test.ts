/** The flows at engine level (no HTTP): OTP and consent expiries, consent answers, MO messages (PSMS), seeding. */
import { describe, expect, it, vi } from 'vitest'
import type { MoResult } from '../../src/core/engine.js'
import { checkSeed } from '../../src/core/engine.js'
import { WorldIndex } from '../../src/core/world.js'
import { engineAt, world } from './harness.js'

const T = (s: string) => `${s}.000000`

describe('OTP expiry', () => {
  it('an OTP expires after its TTL (5 minutes): an event says so, Verify answers PIN_EXPIRED', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    const demo = engine.authenticate('sandbox-demo-key')!
    const init = await engine.init(demo, { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' })
    const id = init.payload!.verif_request_id as string
    const otp = engine.latestOtp('60123456001')!.otp!
    expect(engine.clockView().next_event_dt).toBe(T('2026-01-31T09:05:00'))
    expect((await engine.advance('PT4M')).eventCount).toBe(0)
    const move = await engine.advance('PT1M')
    expect(move.events).toEqual([
      { at: T('2026-01-31T09:05:00'), type: 'otp_expired', verif_request_id: id, msisdn: '60123456001', service_code: 'STREAMPLUS' },
    ])
    expect((await engine.verify(demo, { verif_request_id: id, otp })).code).toBe('PIN_EXPIRED')
    expect(engine.listSubscriptions({ msisdn: '60123456001' })).toEqual([])
  })

  const pending = async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    const demo = engine.authenticate('sandbox-demo-key')!
    const init = await engine.init(demo, { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' })
    const id = init.payload!.verif_request_id as string
    const otp = engine.latestOtp('60123456001')!.otp!
    const wrong = otp === '0000' ? '1111' : '0000'
    return { engine, demo, id, otp, wrong }
  }

  it('a wrong OTP counts an attempt', async () => {
    const { engine, demo, id, wrong } = await pending()
    for (let i = 0; i < 3; i++) expect((await engine.verify(demo, { verif_request_id: id, otp: wrong })).code).toBe('INVALID_PIN')
  })

  it('past the carrier maximum of attempts (3) even the right OTP is refused', async () => {
    const { engine, demo, id, otp, wrong } = await pending()
    for (let i = 0; i < 3; i++) await engine.verify(demo, { verif_request_id: id, otp: wrong })
    expect((await engine.verify(demo, { verif_request_id: id, otp })).code).toBe('MAX_PIN_RETRIES')
  })
})

describe('consent (redirect flow)', () => {
  const init = async (h: ReturnType<typeof engineAt>) => {
    const demo = h.engine.authenticate('sandbox-demo-key')!
    const r = await h.engine.init(demo, { msisdn: '359881234001', service_code: 'STREAMPLUS', country_code: 'bg' }, { baseUrl: 'http://sandbox.test' })
    expect(r.code).toBe('SUCCESS')
    const url = r.payload!.redirect_url as string
    expect(url).toMatch(/^http:\/\/sandbox\.test\/consent\/[\w-]+$/)
    return url.slice(url.lastIndexOf('/') + 1)
  }

  const approved = async () => {
    const h = engineAt('2026-01-31T09:00:00')
    const id = await init(h)
    const view = h.engine.consentView(id)
    return { h, id, view, done: await h.engine.consent(id, 'approve') }
  }

  it('approve: activates, answering the return URL with the subscription', async () => {
    const { h, id, view, done } = await approved()
    expect(view).toMatchObject({ problem: null, service: { code: 'STREAMPLUS' }, verif: { id, state: 'pending' } })
    expect(done).toEqual({
      location: `/_sandbox/return?status=SUCCESS&subscription_id=${done.subscription_id}`,
      result: 'SUCCESS',
      subscription_id: expect.any(String),
    })
    expect(h.engine.subscription(done.subscription_id!)).toMatchObject({ status: 'ACTIVE', flow: 'redirect', country_code: 'bg' })
  })

  it('approve: spends the link', async () => {
    const { h, id } = await approved()
    expect(h.engine.consentView(id)!.problem).toBe('This link was already used.')
    expect((await h.engine.consent(id, 'approve')).result).toBe('PIN_EXPIRED')
  })

  it('deny: FAILED_INIT_SUB, no subscription', async () => {
    const h = engineAt('2026-01-31T09:00:00')
    const id = await init(h)
    expect(await h.engine.consent(id, 'deny')).toEqual({
      // As on approve: no verif_request_id, which Init does not give in the redirect flow.
      location: '/_sandbox/return?status=FAIL&message=FAILED_INIT_SUB',
      result: 'FAILED_INIT_SUB',
      reason: 'the subscriber denied consent',
      subscription_id: null,
    })
    expect(h.engine.sizes().subscriptions).toBe(0)
  })

  it('a consent link expires after its TTL (5 minutes): an event, then PIN_EXPIRED', async () => {
    const h = engineAt('2026-01-31T09:00:00')
    const id = await init(h)
    const move = await h.engine.advance('PT5M')
    expect(move.events).toEqual([expect.objectContaining({ type: 'consent_expired', verif_request_id: id, at: T('2026-01-31T09:05:00') })])
    expect(h.engine.consentView(id)!.problem).toBe('This link has expired.')
    expect((await h.engine.consent(id, 'approve')).result).toBe('PIN_EXPIRED')
  })

  it('an unknown consent link is refused by name (404 CONSENT_NOT_FOUND)', async () => {
    const h = engineAt('2026-01-31T09:00:00')
    await expect(h.engine.consent('nope', 'approve')).rejects.toMatchObject({ status: 404, code: 'CONSENT_NOT_FOUND' })
  })
})

describe('MO messages (PSMS)', () => {
  const msisdn = '60131234001'

  it('a keyword subscribes, STOP cancels, anything else gets help: each answer typed by its action', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    const sub = await engine.mo({ msisdn, short_code: '32123', text: ' stream ' })
    expect(sub).toEqual({ action: 'subscribed', subscription_id: expect.any(String), service_code: 'STREAMPLUS', merchant: 'demo' })
    const id = (sub as Extract<MoResult, { action: 'subscribed' }>).subscription_id
    expect(engine.subscription(id)).toMatchObject({ flow: 'psms', status: 'ACTIVE' })
    expect(await engine.mo({ msisdn, short_code: '32123', text: 'STREAM' })).toEqual({
      action: 'rejected',
      code: 'ALREADY_SUBSCRIBED',
      reason: `msisdn ${msisdn} has ACTIVE subscription ${id} to STREAMPLUS`,
    })
    expect(await engine.mo({ msisdn, short_code: '32123', text: 'hello' })).toEqual({
      action: 'unknown_keyword',
      keywords: ['STREAM', 'GAME', 'QUICK', 'NEWS'],
      message: '"hello" is not a keyword on 32123',
    })
    expect(await engine.mo({ msisdn, short_code: '99999', text: 'STOP' })).toMatchObject({ action: 'ignored', carrier_code: 'sbx-my-psms' })
    expect(await engine.mo({ msisdn, short_code: '32123', text: 'STOP' })).toEqual({ action: 'stop', canceled: [id], subscription_id: id })
    expect(engine.subscription(id)).toMatchObject({ status: 'CANCELED', cancel_reason: 'mo_stop' })
    expect(await engine.mo({ msisdn, short_code: '32123', text: 'STOP' })).toEqual({
      action: 'stop',
      canceled: [],
      message: `no PSMS subscription of ${msisdn} on 32123 to cancel`,
    })
    expect(() => engine.mo({ msisdn: '999', short_code: '32123', text: 'STOP' })).toThrow(expect.objectContaining({ code: 'INVALID_MSISDN' }))
  })

  it('a failing first charge (ending 201) answers charge_failed with the carrier code', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    expect(await engine.mo({ msisdn: '60131234201', short_code: '32123', text: 'STREAM' })).toEqual({
      action: 'charge_failed',
      code: 'INSUFFICIENT_FUNDS',
      reason: 'rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS',
    })
  })
})

describe('seeding', () => {
  it('makes ACTIVE subscriptions in the always-succeeds range that renew like any other', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    const ids = await engine.seed(150)
    expect(ids).toHaveLength(150)
    const msisdns = engine.listSubscriptions({ limit: 5000 }).map((s) => s.msisdn)
    expect(msisdns.every((m) => Number(m.slice(-3)) < 100)).toBe(true)
    expect((await engine.advance('P1M')).eventCount).toBe(150)
    expect(() => engine.seed(1, { service: 'NOPE' })).toThrow(expect.objectContaining({ code: 'MERCHANT_SERVICE_NOT_CONFIGURED' }))
  })

  it('in batches under a plan checked for the whole run (dcb seed): the same numbers as one seed, each number looked up once', async () => {
    const whole = engineAt('2026-01-31T09:00:00').engine
    await whole.seed(250)
    const batched = engineAt('2026-01-31T09:00:00').engine
    const lookups = vi.spyOn(WorldIndex.prototype, 'lookup')
    try {
      const plan = checkSeed(new WorldIndex(world()), {}, 250)
      // The whole run's numbers, and the first one's carrier: once each, up front.
      expect(lookups).toHaveBeenCalledTimes(251)
      for (let done = 0; done < 250; done += 100) await batched.seed(Math.min(100, 250 - done), { startIndex: done }, plan)
      expect(lookups).toHaveBeenCalledTimes(251)
    } finally {
      lookups.mockRestore()
    }
    const numbers = (e: typeof whole) =>
      e
        .listSubscriptions({ limit: 5000 })
        .map((s) => `${s.msisdn} ${s.status} ${s.carrier_code}`)
        .sort()
    expect(numbers(batched)).toEqual(numbers(whole))
    // Without a plan, a batch checks its numbers against the state: seeding them again is refused.
    await expect(batched.seed(100, { startIndex: 0 })).rejects.toThrow(/holds an ACTIVE STREAMPLUS subscription already/)
  })
})
