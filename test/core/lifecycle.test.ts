import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startClient, useSandbox, tempDir } from '../helpers.js'

const c = useSandbox({ clock: '2026-01-31T09:00:00' })

const status = async (id: string, key?: string) => (await c.api('/subscriptions/status', { subscription_id: id }, { key })).body.payload
const advance = async (by: string) => (await c.control('/clock/advance', { by })).body
const history = async (id: string) => (await c.control(`/subscriptions/${id}`)).body

describe('renewals on the sandbox clock', () => {
  it('starts frozen at --clock', async () => {
    expect((await c.control('/clock')).body).toMatchObject({ now: '2026-01-31T09:00:00.000000', frozen: true })
  })

  it('goes back to --clock on reset', async () => {
    await advance('P3D')
    await c.control('/reset', {})
    expect((await c.control('/clock')).body.now).toBe('2026-01-31T09:00:00.000000')
  })

  it('monthly: Jan 31 -> Feb 28 -> Mar 31 -> Apr 30, each renewal charged, reported', async () => {
    const id = await c.subscribe('60123456001')
    expect((await status(id)).expiry_dt).toBe('2026-02-28T09:00:00.000000')
    const a = await advance('P1M')
    expect(a.events).toEqual([
      expect.objectContaining({
        type: 'renewed',
        subscription_id: id,
        at: '2026-02-28T09:00:00.000000',
        expiry_dt: '2026-03-31T09:00:00.000000',
        status: 'ACTIVE',
      }),
    ])
    await c.control('/clock/set', { to: '2026-04-30T09:00:00' })
    const s = await status(id)
    expect(s).toMatchObject({ status: 'ACTIVE', subscribed_dt: '2026-01-31T09:00:00.000000', expiry_dt: '2026-05-31T09:00:00.000000' })
    const h = await history(id)
    expect(h.charges.map((x: any) => [x.kind, x.outcome, x.at])).toEqual([
      ['first', 'SUCCESS', '2026-01-31T09:00:00.000000'],
      ['renewal', 'SUCCESS', '2026-02-28T09:00:00.000000'],
      ['renewal', 'SUCCESS', '2026-03-31T09:00:00.000000'],
      ['renewal', 'SUCCESS', '2026-04-30T09:00:00.000000'],
    ])
    expect((await c.control('/sms?msisdn=60123456001')).body.messages[0].text).toMatch(/renewed for 9\.90 MYR/)
  })

  it('refuses to move the clock past the year 9999 (four-digit years), leaving it where it was', async () => {
    const before = (await c.control('/clock')).body.now
    for (const by of ['P999999Y', 'P8000Y', '99999999999999999999h']) {
      const r = await c.control('/clock/advance', { by })
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ error: 'CLOCK_LIMIT', message: 'the sandbox clock cannot go past 9999-12-31T23:59:59.999000: timestamps have four-digit years' })
    }
    expect((await c.control('/clock')).body.now).toBe(before)
    // The errors reference names the same last moment (the clock keeps milliseconds).
    const row = readFileSync(join(import.meta.dirname, '../../docs/reference/errors.md'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('| `CLOCK_LIMIT` |'))
    expect(row).toContain('9999-12-31T23:59:59.999000')
    // Up to the last moment it goes; a subscription renewing there reads its expiry past 9999 in the expanded form.
    const id = await c.subscribe('60123456001')
    expect((await c.control('/clock/set', { to: '9999-12-31T09:00:00' })).status).toBe(200)
    expect((await status(id)).expiry_dt).toBe('+010000-01-31T09:00:00.000000')
    expect((await c.control('/clock/advance', { by: 'P1D' })).body.error).toBe('CLOCK_LIMIT')
  })

  it('leap years: Jan 31 2028 renews on Feb 29', async () => {
    await c.control('/clock/set', { to: '2028-01-31T00:00:00' })
    const id = await c.subscribe('60123456001')
    expect((await status(id)).expiry_dt).toBe('2028-02-29T00:00:00.000000')
    await advance('P1M')
    expect((await status(id)).expiry_dt).toBe('2028-03-31T00:00:00.000000')
  })

  it.each([
    ['weekly', 'GAMECLUB', 'demo', 'P3W', 3, '2026-02-28T09:00:00.000000'],
    ['daily', 'NEWSDAILY', 'other', 'P10D', 10, '2026-02-11T09:00:00.000000'],
    ['hourly', 'QUICKTEST', 'demo', 'PT5H', 5, '2026-01-31T15:00:00.000000'],
  ])('%s periods renew each period', async (_n, service, merchant, by, renewals, expiry) => {
    const key = merchant === 'other' ? 'sandbox-other-key' : 'sandbox-demo-key'
    const id = await c.subscribe('60123456001', service, 'my', key)
    const r = await advance(by)
    expect(r.events.filter((e: any) => e.type === 'renewed')).toHaveLength(renewals)
    expect((await status(id, key)).expiry_dt).toBe(expiry)
  })

  it('runs due events of many subscriptions in time order', async () => {
    const monthly = await c.subscribe('60123456001')
    await advance('P1D')
    const weekly = await c.subscribe('60123456002', 'GAMECLUB')
    const r = await advance('P1M')
    const ats = r.events.map((e: any) => e.at)
    expect(ats).toEqual([...ats].sort())
    expect(r.events.filter((e: any) => e.subscription_id === weekly)).toHaveLength(4)
    expect(r.events.filter((e: any) => e.subscription_id === monthly)).toHaveLength(1)
  })

  /** A QUICKTEST subscription (renewed hourly) moved two hours on. */
  const quick = async () => {
    const s = await startClient({ clock: '2026-01-31T09:00:00' })
    await s.subscribe('60123456001', 'QUICKTEST')
    await s.control('/clock/advance', { by: 'PT2H' })
    return s
  }

  it('the request log keeps a small move whole', async () => {
    const s = await quick()
    try {
      const j = (await s.control('/requests?limit=1')).body.requests[0]
      expect(j).toMatchObject({ path: '/_sandbox/clock/advance', response: { event_count: 2, events: [{ type: 'renewed' }, { type: 'renewed' }] } })
    } finally {
      await s.close()
    }
  })

  it('the request log keeps only the number of events of a big move', async () => {
    const s = await quick()
    try {
      const big = (await s.control('/clock/advance', { by: 'P7D' })).body
      expect(big.events).toHaveLength(168)
      const j = (await s.control('/requests?limit=1')).body.requests[0]
      expect(j.response).toEqual({ clock: big.clock, event_count: 168, events_kept: false })
    } finally {
      await s.close()
    }
  })
})

describe('failed renewals, retries and carrier cancellations (magic endings)', () => {
  it('301: the first renewal fails, leaving the subscription EXPIRED for good', async () => {
    const id = await c.subscribe('60123456301')
    const r = await advance('P1M')
    expect(r.events).toEqual([expect.objectContaining({ type: 'renewal_failed', code: 'INSUFFICIENT_FUNDS', status: 'EXPIRED' })])
    expect(await status(id)).toMatchObject({ status: 'EXPIRED', expiry_dt: '2026-02-28T09:00:00.000000' })
    const retry = await advance('P1D')
    expect(retry.events).toEqual([expect.objectContaining({ type: 'retry_failed', status: 'EXPIRED' })])
    expect((await advance('P1Y')).events).toEqual([])
    expect((await status(id)).status).toBe('EXPIRED')
  })

  it('EXPIRED does not block a new Init', async () => {
    await c.subscribe('60123456301')
    await advance('P1M')
    await advance('P1D')
    await advance('P1Y')
    expect((await c.api('/subscriptions/init', { msisdn: '60123456301', service_code: 'STREAMPLUS', country_code: 'my' })).body.status).toBe('SUCCESS')
  })

  it('302: the first renewal fails, the carrier retry a day later succeeds: EXPIRED, then ACTIVE again', async () => {
    const id = await c.subscribe('60123456302')
    await advance('P1M')
    expect((await status(id)).status).toBe('EXPIRED')
    const r = await advance('P1D')
    expect(r.events).toEqual([expect.objectContaining({ type: 'retry_succeeded', status: 'ACTIVE', at: '2026-03-01T09:00:00.000000' })])
    expect(await status(id)).toMatchObject({ status: 'ACTIVE', expiry_dt: '2026-04-01T09:00:00.000000' })
    const h = await history(id)
    expect(h.charges.map((x: any) => `${x.kind}:${x.outcome}`)).toEqual(['first:SUCCESS', 'renewal:INSUFFICIENT_FUNDS', 'retry:SUCCESS'])
    // Later renewals succeed.
    expect((await advance('P1M')).events).toEqual([expect.objectContaining({ type: 'renewed' })])
  })

  it('303: every renewal fails', async () => {
    const id = await c.subscribe('60123456303')
    await advance('P2M')
    expect((await status(id)).status).toBe('EXPIRED')
    expect((await history(id)).charges.map((x: any) => x.outcome)).toEqual(['SUCCESS', 'INSUFFICIENT_FUNDS', 'INSUFFICIENT_FUNDS'])
  })

  it('401: the carrier cancels one day after activation, the expiry kept', async () => {
    const id = await c.subscribe('60123456401')
    const r = await advance('P1D')
    expect(r.events).toEqual([expect.objectContaining({ type: 'carrier_canceled', subscription_id: id, at: '2026-02-01T09:00:00.000000' })])
    const s = await status(id)
    expect(s).toMatchObject({ status: 'CANCELED', canceled_dt: '2026-02-01T09:00:00.000000', expiry_dt: '2026-02-28T09:00:00.000000' })
  })

  it('401: a subscription the carrier canceled is never billed again', async () => {
    const id = await c.subscribe('60123456401')
    await advance('P1D')
    expect((await advance('P3M')).events).toEqual([])
    expect((await history(id)).charges).toHaveLength(1)
  })

  it('a runtime rule on the renewal step fails the second renewal only', async () => {
    const id = await c.subscribe('60123456011')
    await c.control('/rules', { match: { msisdn: '60123456011' }, step: 'renewal', nth: 2, effect: { error: 'BARRED' } })
    const r = await advance('P2M')
    expect(r.events.map((e: any) => `${e.type}:${e.code ?? ''}`)).toEqual(['renewed:', 'renewal_failed:BARRED'])
    expect((await status(id)).status).toBe('EXPIRED')
  })

  const canceled = async () => {
    const id = await c.subscribe('60123456001')
    const r = await c.control(`/subscriptions/${id}/cancel`, {})
    return { id, r }
  }

  it('cancels carrier-side through the control API, for good', async () => {
    const { id, r } = await canceled()
    expect(r.body).toMatchObject({ status: 'CANCELED', canceled_dt: '2026-01-31T09:00:00.000000', cancel_reason: 'carrier' })
    expect((await status(id)).status).toBe('CANCELED')
    await c.control(`/subscriptions/${id}/cancel`, {})
    await c.control('/subscriptions/nope/cancel', {})
    expect((await advance('P2M')).events).toEqual([])
  })

  it('refuses a carrier-side cancellation of a canceled subscription (409)', async () => {
    const { id } = await canceled()
    expect((await c.control(`/subscriptions/${id}/cancel`, {})).status).toBe(409)
  })

  it('refuses a carrier-side cancellation of an unknown subscription (404)', async () => {
    await canceled()
    expect((await c.control('/subscriptions/nope/cancel', {})).status).toBe(404)
  })

  it('allows a new Init after a carrier-side cancellation', async () => {
    const { id } = await canceled()
    await c.control(`/subscriptions/${id}/cancel`, {})
    await c.control('/subscriptions/nope/cancel', {})
    await advance('P2M')
    expect(await c.subscribe('60123456001')).not.toBe(id)
  })
})

describe('exactly once', () => {
  it('concurrent advances run each due renewal once', async () => {
    const id = await c.subscribe('60123456001', 'QUICKTEST')
    const all = await Promise.all(Array.from({ length: 10 }, () => advance('PT1H')))
    expect(all.flatMap((r) => r.events)).toHaveLength(10)
    const h = await history(id)
    expect(h.charge_count).toBe(11)
    expect(h.expiry_dt).toBe('2026-01-31T20:00:00.000000')
  })

  it('advancing a year over two thousand subscriptions renews each one every month', async () => {
    const engine = c.sandbox.engine
    const demo = engine.world.merchants.get('demo')!
    for (let i = 0; i < 2000; i++) {
      const msisdn = `6012${String(i).padStart(5, '0')}0${String(i % 100).padStart(2, '0')}`
      const init = await engine.init(demo, { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' })
      const otp = engine.latestOtp(msisdn)!.otp!
      const v = await engine.verify(demo, { verif_request_id: init.payload!.verif_request_id as string, otp })
      expect(v.code).toBe('SUCCESS')
    }
    const r = await advance('P1Y')
    expect(r.events.filter((e: any) => e.type === 'renewed')).toHaveLength(2000 * 12)
    const subs = (await c.control('/subscriptions?status=active&limit=5000')).body.subscriptions
    expect(subs).toHaveLength(2000)
    expect(new Set(subs.map((s: any) => s.expiry_dt))).toEqual(new Set(['2027-02-28T09:00:00.000000']))
  })
})

describe('time passes when nobody advances it', () => {
  it('a running server renews at real expiry times', async () => {
    let real = Date.parse('2026-03-01T00:00:00Z')
    const s = await startClient({ realNow: () => real, tickMs: 20 })
    try {
      const id = await s.subscribe('60123456001', 'QUICKTEST')
      // Nothing but the server's own tick changes the subscription from here on.
      const renewed = new Promise<void>((resolve) => {
        const off = s.sandbox.engine.onChange((changes) => {
          if (!changes.some((ch) => 'c' in ch && ch.c === 'subs' && ch.id === id)) return
          off()
          resolve()
        })
      })
      real += 3_600_000 + 1
      await renewed
      const h = (await s.control(`/subscriptions/${id}`)).body
      expect(h.charges.map((x: any) => x.kind)).toEqual(['first', 'renewal'])
    } finally {
      await s.close()
    }
  })

  it('a restarted server catches up on the events it missed, in order, exactly once', async () => {
    const t = tempDir()
    try {
      const data = join(t.dir, 'sandbox.json')
      let real = Date.parse('2026-03-01T00:00:00Z')
      const a = await startClient({ data, realNow: () => real })
      const hourly = await a.subscribe('60123456001', 'QUICKTEST')
      const ending = await a.subscribe('60123456401', 'QUICKTEST')
      await a.close()
      real += 30 * 3_600_000 + 60_000
      const b = await startClient({ data, realNow: () => real })
      const h = (await b.control(`/subscriptions/${hourly}`)).body
      expect(h.charge_count).toBe(31)
      const times = h.charges.map((x: any) => x.at)
      expect(times).toEqual([...times].sort())
      const e = (await b.control(`/subscriptions/${ending}`)).body
      expect(e).toMatchObject({ status: 'CANCELED', canceled_dt: '2026-03-02T00:00:00.000000', charge_count: 24 })
      await b.close()
      const again = await startClient({ data, realNow: () => real })
      try {
        expect((await again.control(`/subscriptions/${hourly}`)).body.charge_count).toBe(31)
        // Nothing is due: a catch-up now runs nothing; an hour on it runs the one renewal.
        expect(await again.sandbox.engine.catchUp()).toBe(0)
        real += 3_600_000
        expect(await again.sandbox.engine.catchUp()).toBe(1)
      } finally {
        await again.close()
      }
    } finally {
      t.cleanup()
    }
  })
})

describe('charge notices in the handset inbox', () => {
  const sms = async (msisdn: string) => (await c.control(`/sms?msisdn=${msisdn}`)).body.messages

  it('each renewal, failed renewal or retry leaves an SMS, newest first, after the welcome', async () => {
    const id = await c.subscribe('60123456302')
    await advance('P1M') // Feb 28: the first renewal fails
    await advance('P1D') // Mar 1: the retry succeeds
    await advance('P1M') // Apr 1: renewed
    const m = await sms('60123456302')
    expect(m.map((x: any) => [x.kind, x.at, x.text])).toEqual([
      ['renewal', '2026-04-01T09:00:00.000000', 'Your Stream Plus subscription was renewed for 9.90 MYR.'],
      ['renewal', '2026-03-01T09:00:00.000000', 'Your Stream Plus subscription was renewed for 9.90 MYR.'],
      ['renewal_failed', '2026-02-28T09:00:00.000000', 'We could not renew your Stream Plus subscription (INSUFFICIENT_FUNDS).'],
      ['welcome', '2026-01-31T09:00:00.000000', expect.stringContaining('Welcome to Stream Plus')],
      ['otp', '2026-01-31T09:00:00.000000', expect.stringContaining('verification code')],
    ])
    for (const x of m.slice(0, 3)) expect(x).toMatchObject({ direction: 'mt', to: '60123456302', msisdn: '60123456302', subscription_id: id, from: m[3].from })
    expect(new Set(m.map((x: any) => x.id)).size).toBe(m.length)
  })

  it('leaves out the charge notices that data files of dcb 0.1.0 stored (they come from the charges now)', async () => {
    const id = await c.subscribe('60123456001')
    await advance('P1M')
    // A message as 0.1.0 stored it, beside the charge it reports.
    const at = Date.parse('2026-02-28T09:00:00Z')
    c.sandbox.engine.state.apply({
      c: 'sms',
      id: 'legacy-1',
      v: {
        id: 'legacy-1',
        n: 999,
        msisdn: '60123456001',
        direction: 'mt',
        from: 'x',
        to: '60123456001',
        text: 'old',
        at,
        kind: 'renewal',
        subscription_id: id,
      },
    })
    const m = await sms('60123456001')
    expect(m.filter((x: any) => x.kind === 'renewal').map((x: any) => x.id)).toEqual([`${id}.2`])
  })

  it("a long advance does not push other handsets' messages out of the SMS cap", async () => {
    const s = await startClient({ clock: '2026-01-31T09:00:00', maxSms: 6 })
    try {
      for (const n of ['60123456001', '60123456002']) await s.subscribe(n)
      // Another handset waits with an OTP in its inbox.
      await s.api('/subscriptions/init', { msisdn: '60123456003', service_code: 'STREAMPLUS', country_code: 'my' })
      await s.control('/clock/advance', { by: 'P2Y' })
      const otp = (await s.control('/otp?msisdn=60123456003')).body
      expect(otp.otp).toMatch(/^\d+$/)
      const m = (await s.control('/sms?msisdn=60123456001')).body.messages
      expect(m.filter((x: any) => x.kind === 'renewal')).toHaveLength(24)
    } finally {
      await s.close()
    }
  })

  /** A year of monthly renewals on a handset that keeps four messages, and what a listener heard. */
  const yearOfNotices = async () => {
    const s = await startClient({ clock: '2026-01-31T09:00:00', smsPerMsisdn: 4 })
    await s.subscribe('60123456001')
    const heard: string[] = []
    const off = s.sandbox.engine.onSms((m) => heard.push(`${m.kind}@${m.at}`))
    await s.control('/clock/advance', { by: 'P1Y' })
    off()
    return { s, heard }
  }

  it('listeners hear each notice', async () => {
    const { s, heard } = await yearOfNotices()
    try {
      expect(heard).toHaveLength(12)
      expect(heard[0]).toBe(`renewal@${Date.parse('2026-02-28T09:00:00Z')}`)
    } finally {
      await s.close()
    }
  })

  it('a handset shows its newest messages up to the per-handset cap', async () => {
    const { s } = await yearOfNotices()
    try {
      const m = (await s.control('/sms?msisdn=60123456001')).body.messages
      expect(m.map((x: any) => x.at)).toEqual([
        '2027-01-31T09:00:00.000000',
        '2026-12-31T09:00:00.000000',
        '2026-11-30T09:00:00.000000',
        '2026-10-31T09:00:00.000000',
      ])
    } finally {
      await s.close()
    }
  })
})
