import { describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { startClient, tempDir, useSandbox, TIMESTAMP } from '../helpers.js'
import { withFakeTimers } from '../wait.js'
import { expectFail, initWith } from './merchant-calls.js'

// The merchant API's flows over HTTP (magic endings, the OTP flow, Status, server options); the checks before the engine are in merchant.test.ts.
const c = useSandbox()
const init = initWith(c)

describe('magic endings at Init and Verify', () => {
  const INIT: [string, string, 'null' | 'absent'][] = [
    ['101', 'INVALID_MSISDN', 'null'],
    ['102', 'INVALID_MSISDN_LANDLINE', 'null'],
    ['103', 'CARRIER_NOT_SUPPORTED', 'null'],
    ['104', 'FAILED_INIT_SUB', 'absent'],
    ['105', 'NOT_ALLOWED_CHANNEL', 'absent'],
    ['106', 'BLACKLISTED', 'absent'],
    ['107', 'BARRED', 'absent'],
    ['108', 'NOT_ELIGIBLE', 'absent'],
    ['109', 'INVALID_USER', 'absent'],
    ['110', 'ERROR', 'absent'],
  ]
  it.each(INIT)('ending %s: Init fails %s', async (ending, code, payload) => {
    expectFail(await init(`60123456${ending}`), 200, code, payload)
  })

  it('ending 150: Init answers HTTP 500 ERROR with the envelope', async () => {
    expectFail(await init('60123456150'), 500, 'ERROR', 'null')
  })

  const CHARGE = [
    'INSUFFICIENT_FUNDS',
    'BLACKLISTED',
    'BARRED',
    'NOT_ELIGIBLE',
    'INVALID_USER',
    'ALREADY_SUBSCRIBED',
    'SPENDING_LIMIT_REACHED',
    'TRX_COUNT_REACHED',
    'TRX_LIMIT_EXCEEDED',
    'ERROR',
  ]
  it.each(CHARGE.map((code, i) => [String(201 + i), code]))('ending %s: the first charge fails %s after a right OTP', async (ending, code) => {
    const msisdn = `60123456${ending}`
    const r = await init(msisdn)
    expect(r.body.status).toBe('SUCCESS')
    const otp = (await c.control(`/otp?msisdn=${msisdn}`)).body.otp
    const v = await c.api('/subscriptions/verify', { verif_request_id: r.body.payload.verif_request_id, otp })
    expectFail(v, 200, code, 'absent')
    expect((await c.control(`/subscriptions?msisdn=${msisdn}`)).body.subscriptions).toEqual([])
  })

  it('ending 250: Verify answers HTTP 500 ERROR', async () => {
    const r = await init('60123456250')
    const otp = (await c.control('/otp?msisdn=60123456250')).body.otp
    expectFail(await c.api('/subscriptions/verify', { verif_request_id: r.body.payload.verif_request_id, otp }), 500, 'ERROR', 'null')
  })

  it('ending 5NN: every answer for the MSISDN is delayed NN x 100 ms', async () => {
    await withFakeTimers(async (t) => {
      let answered = false
      const pending = init('60123456503').then((r) => ((answered = true), r))
      expect(await Promise.race([t.next(), pending.then(() => 'answered at once')])).toBe(300)
      await t.advance(299)
      expect(answered).toBe(false)
      await t.advance(1)
      expect((await pending).body.status).toBe('SUCCESS')
    })
  })

  it('an MSISDN without a delay is answered with no timer in between', async () => {
    await withFakeTimers(async (t) => {
      const first = await Promise.race([init('60123456003').then((r) => r.body.status), t.next().then((ms) => `held ${ms} ms`)])
      expect(first).toBe('SUCCESS')
    })
  })
})

describe('the OTP flow', () => {
  it('Init sends an OTP SMS', async () => {
    await init('60123456001')
    const sms = (await c.control('/sms?msisdn=60123456001')).body.messages
    expect(sms).toHaveLength(1)
    expect(sms[0].text).toMatch(/Stream Plus verification code is \d{4}\b/)
  })

  it('GET /_sandbox/otp gives the four-digit OTP of the request', async () => {
    const r = await init('60123456001')
    const otp = (await c.control('/otp?msisdn=60123456001')).body
    expect(otp.verif_request_id).toBe(r.body.payload.verif_request_id)
    expect(otp.otp).toMatch(/^\d{4}$/)
  })

  it('Verify with the right OTP answers a new subscription_id in the envelope', async () => {
    await init('60123456001')
    const otp = (await c.control('/otp?msisdn=60123456001')).body
    const v = await c.api('/subscriptions/verify', { verif_request_id: otp.verif_request_id, otp: otp.otp })
    expect(Object.keys(v.body)).toEqual(['status', 'message', 'status_code', 'payload'])
    expect(v.body.payload.subscription_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('INVALID_PIN three times, then MAX_PIN_RETRIES even for the right OTP', async () => {
    const r = await init('60123456001')
    const id = r.body.payload.verif_request_id
    const otp = (await c.control('/otp?msisdn=60123456001')).body.otp
    const wrong = otp === '0000' ? '1111' : '0000'
    for (let i = 0; i < 3; i++) expectFail(await c.api('/subscriptions/verify', { verif_request_id: id, otp: wrong }), 200, 'INVALID_PIN', 'absent')
    expectFail(await c.api('/subscriptions/verify', { verif_request_id: id, otp }), 200, 'MAX_PIN_RETRIES', 'absent')
    expectFail(await c.api('/subscriptions/verify', { verif_request_id: id, otp: wrong }), 200, 'MAX_PIN_RETRIES', 'absent')
  })

  it('accepts the right OTP after two wrong ones', async () => {
    const r = await init('60123456001')
    const id = r.body.payload.verif_request_id
    const otp = (await c.control('/otp?msisdn=60123456001')).body.otp
    for (let i = 0; i < 2; i++) await c.api('/subscriptions/verify', { verif_request_id: id, otp: 'abcd' })
    expect((await c.api('/subscriptions/verify', { verif_request_id: id, otp })).body.status).toBe('SUCCESS')
  })

  it('PIN_EXPIRED after 5 minutes on the sandbox clock, not before', async () => {
    const r = await init('60123456001')
    const id = r.body.payload.verif_request_id
    const otp = (await c.control('/otp?msisdn=60123456001')).body.otp
    await c.control('/clock/advance', { by: 'PT4M50S' })
    expect((await c.api('/subscriptions/verify', { verif_request_id: id, otp: 'zzzz' })).body.message).toBe('INVALID_PIN')
    const adv = await c.control('/clock/advance', { by: '10s' })
    expect(adv.body.events).toEqual([expect.objectContaining({ type: 'otp_expired', verif_request_id: id })])
    expectFail(await c.api('/subscriptions/verify', { verif_request_id: id, otp }), 200, 'PIN_EXPIRED', 'absent')
  })

  it('PIN_EXPIRED for a request already used', async () => {
    const r = await init('60123456001')
    const id = r.body.payload.verif_request_id
    const otp = (await c.control('/otp?msisdn=60123456001')).body.otp
    expect((await c.api('/subscriptions/verify', { verif_request_id: id, otp })).body.status).toBe('SUCCESS')
    expectFail(await c.api('/subscriptions/verify', { verif_request_id: id, otp }), 200, 'PIN_EXPIRED', 'absent')
  })

  it('INVALID_PIN for an unknown request', async () => {
    await init('60123456001')
    const otp = (await c.control('/otp?msisdn=60123456001')).body.otp
    expectFail(await c.api('/subscriptions/verify', { verif_request_id: '00000000-0000-4000-8000-000000000000', otp }), 200, 'INVALID_PIN', 'absent')
  })

  it("INVALID_PIN for another merchant's request", async () => {
    const other = await c.api('/subscriptions/init', { msisdn: '60123456009', service_code: 'NEWSDAILY', country_code: 'my' }, { key: 'sandbox-other-key' })
    const otherOtp = (await c.control('/otp?msisdn=60123456009')).body.otp
    expectFail(await c.api('/subscriptions/verify', { verif_request_id: other.body.payload.verif_request_id, otp: otherOtp }), 200, 'INVALID_PIN', 'absent')
  })

  it('ALREADY_SUBSCRIBED at Verify for the second of two parallel flows', async () => {
    const a = await init('60123456001')
    const b = await init('60123456001')
    const sms = (await c.control('/sms?msisdn=60123456001')).body.messages
    const otpOf = (id: string) => sms.find((m: any) => m.verif_request_id === id).otp
    const va = await c.api('/subscriptions/verify', { verif_request_id: a.body.payload.verif_request_id, otp: otpOf(a.body.payload.verif_request_id) })
    expect(va.body.status).toBe('SUCCESS')
    const vb = await c.api('/subscriptions/verify', { verif_request_id: b.body.payload.verif_request_id, otp: otpOf(b.body.payload.verif_request_id) })
    expectFail(vb, 200, 'ALREADY_SUBSCRIBED', 'absent')
  })

  it('ALREADY_SUBSCRIBED at Init for an active subscription', async () => {
    await c.subscribe('60123456001')
    expectFail(await init('60123456001'), 200, 'ALREADY_SUBSCRIBED', 'absent')
  })

  it('Init of another service of a subscribed MSISDN succeeds', async () => {
    await c.subscribe('60123456001')
    expect((await init('60123456001', { service_code: 'GAMECLUB' })).body.status).toBe('SUCCESS')
  })

  it('twenty parallel verifies of one request make exactly one subscription', async () => {
    const r = await init('60123456001')
    const id = r.body.payload.verif_request_id
    const otp = (await c.control('/otp?msisdn=60123456001')).body.otp
    const all = await Promise.all(Array.from({ length: 20 }, () => c.api('/subscriptions/verify', { verif_request_id: id, otp })))
    const ok = all.filter((x) => x.body.status === 'SUCCESS')
    expect(ok).toHaveLength(1)
    expect(all.filter((x) => x.body.message === 'PIN_EXPIRED')).toHaveLength(19)
    expect((await c.control('/subscriptions?msisdn=60123456001')).body.subscriptions).toHaveLength(1)
  })

  it('writes the OTP SMS in the requested language, falling back to the service default', async () => {
    await init('60123456001', { language: 'ms' })
    expect((await c.control('/otp?msisdn=60123456001')).body.text).toMatch(/^Kod pengesahan Stream Plus anda ialah \d{4}/)
    await init('60123456002', { language: 'fr' })
    expect((await c.control('/otp?msisdn=60123456002')).body.text).toMatch(/^Your Stream Plus verification code/)
    await c.api('/subscriptions/init', { msisdn: '60123456003', service_code: 'NEWSDAILY', country_code: 'my' }, { key: 'sandbox-other-key' })
    expect((await c.control('/otp?msisdn=60123456003')).body.text).toMatch(/^Kod pengesahan News Daily/)
  })
})

describe('Status', () => {
  const monthly = async () => {
    await c.control('/clock/set', { to: '2031-01-31T10:15:30.123' })
    const id = await c.subscribe('60123456001')
    return { id, r: await c.api('/subscriptions/status', { subscription_id: id }) }
  }

  it('answers the nine fields in order', async () => {
    const { id, r } = await monthly()
    expect(Object.keys(r.body.payload)).toEqual([
      'subscription_id',
      'status',
      'msisdn',
      'service_code',
      'service_name',
      'subscribed_dt',
      'expiry_dt',
      'canceled_dt',
      'content_link',
    ])
    expect(r.body.payload).toMatchObject({
      subscription_id: id,
      status: 'ACTIVE',
      msisdn: '60123456001',
      service_code: 'STREAMPLUS',
      service_name: 'Stream Plus',
      canceled_dt: null,
      content_link: 'https://content.sandbox.example/streamplus',
    })
  })

  it('gives subscribed_dt in UTC with six-digit fractions, at the sandbox time', async () => {
    const p = (await monthly()).r.body.payload
    expect(p.subscribed_dt).toMatch(TIMESTAMP)
    expect(p.subscribed_dt.startsWith('2031-01-31T10:15:')).toBe(true)
  })

  it('monthly services expire one month on (31 January to 28 February)', async () => {
    const p = (await monthly()).r.body.payload
    expect(p.expiry_dt).toBe(p.subscribed_dt.replace('2031-01-31', '2031-02-28'))
  })

  const weekly = async () => {
    const id = await c.subscribe('60123456001', 'GAMECLUB')
    return (await c.api('/subscriptions/status', { subscription_id: id })).body.payload
  }

  it('weekly services expire one week on', async () => {
    const p = await weekly()
    expect(Date.parse(p.expiry_dt + 'Z') - Date.parse(p.subscribed_dt + 'Z')).toBe(7 * 86_400_000)
  })

  it('content_link is null for a service without one', async () => {
    expect((await weekly()).content_link).toBeNull()
  })

  it('404 SUBSCRIPTION_NOT_FOUND for unknown IDs', async () => {
    expectFail(await c.api('/subscriptions/status', { subscription_id: 'not-a-uuid' }), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
    expectFail(await c.api('/subscriptions/status', { subscription_id: '00000000-0000-4000-8000-000000000000' }), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
  })

  it('404 SUBSCRIPTION_NOT_FOUND for another merchant’s subscription', async () => {
    const id = await c.subscribe('60123456001')
    expectFail(await c.api('/subscriptions/status', { subscription_id: id }, { key: 'sandbox-other-key' }), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
  })
})

describe('403 MERCHANT_SERVICE_NOT_CONFIGURED on Verify and Status', () => {
  it('answers it when the integration of a request or subscription is gone (restart with other fixtures)', async () => {
    const t = tempDir()
    try {
      const data = join(t.dir, 'sandbox.json')
      const a = await startClient({ data })
      const id = await a.subscribe('60123456001')
      const pending = (await a.api('/subscriptions/init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' })).body.payload
        .verif_request_id
      const otp = (await a.control('/otp?msisdn=60123456002')).body.otp
      await a.close()
      const b = await startClient({ data, fixtures: ['test/fixtures/streamplus-gb-only.json'] })
      try {
        expectFail(await b.api('/subscriptions/status', { subscription_id: id }), 403, 'MERCHANT_SERVICE_NOT_CONFIGURED', 'null')
        expectFail(await b.api('/subscriptions/verify', { verif_request_id: pending, otp }), 403, 'MERCHANT_SERVICE_NOT_CONFIGURED', 'null')
        // Another merchant still gets 404, not 403: nothing leaks.
        expectFail(await b.api('/subscriptions/status', { subscription_id: id }, { key: 'sandbox-other-key' }), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
      } finally {
        await b.close()
      }
    } finally {
      t.cleanup()
    }
  })
})

describe('server options', () => {
  it('--failure-payload forces null or absent on every failure', async () => {
    const n = await startClient({ failurePayload: 'null' })
    const a = await startClient({ failurePayload: 'absent' })
    try {
      const r1 = await n.api('/subscriptions/verify', { verif_request_id: 'x', otp: '1' })
      expectFail(r1, 200, 'INVALID_PIN', 'null')
      const r2 = await a.api('/subscriptions/status', { subscription_id: 'x' })
      expectFail(r2, 404, 'SUBSCRIPTION_NOT_FOUND', 'absent')
      expect((await a.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })).body.payload).toBeTruthy()
    } finally {
      await n.close()
      await a.close()
    }
  })

  it('answers 500 ERROR with the envelope, no stack trace, when something unexpected throws', async () => {
    const s = await startClient()
    try {
      s.sandbox.engine.perform = () => {
        throw new Error('boom at secret/path.ts:12')
      }
      const r = await s.api('/subscriptions/status', { subscription_id: 'x' })
      expectFail(r, 500, 'ERROR', 'null')
      expect(r.text).not.toContain('boom')
    } finally {
      await s.close()
    }
  })
})
