import { describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'
import { closed, nextRequest, withFakeTimers } from '../wait.js'

const c = useSandbox({ clock: '2026-01-31T09:00:00' })

const entries = async (query = '') => (await c.control(`/requests?limit=100${query}`)).body.requests as Record<string, any>[]

describe('the request log keeps every request', () => {
  it('a client that gives up during a 5NN delay is logged with client_closed: true (and its OTP was sent)', async () => {
    const msisdn = '60123456510' // every answer held back 1 s
    const abort = new AbortController()
    const onServer = nextRequest(c.sandbox.server, '/subscriptions/init')
    await withFakeTimers(async (t) => {
      const gone = fetch(`${c.url}/subscriptions/init`, {
        method: 'POST',
        headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
        body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' }),
        signal: abort.signal,
      }).catch((e: Error) => e.name)
      // The client gives up while the server holds the answer back.
      expect(await Promise.race([t.next(), gone])).toBe(1000)
      const { res } = await onServer
      abort.abort()
      expect(await gone).toBe('AbortError')
      await closed(res)
    })
    const entry = (await entries(`&msisdn=${msisdn}`))[0]
    expect(entry).toMatchObject({
      method: 'POST',
      path: '/subscriptions/init',
      merchant: 'demo',
      msisdn,
      http_status: 200,
      message: '',
      reason: null,
      client_closed: true,
      sandbox_time: '2026-01-31T09:00:00.000000',
      request: { msisdn, service_code: 'STREAMPLUS', country_code: 'my' },
    })
    expect(entry.response.payload.verif_request_id).toMatch(/^[0-9a-f-]{36}$/)
    const otp = await c.control(`/otp?msisdn=${msisdn}`)
    expect(otp.body.verif_request_id).toBe(entry.response.payload.verif_request_id)
  })

  it('a consent denial is logged with its outcome code as message, its reason, its MSISDN: what it answered', async () => {
    const msisdn = '359881234001'
    const init = await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'bg' })
    const url: string = init.body.payload.redirect_url
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=deny', redirect: 'manual' })
    expect(res.status).toBe(303)
    expect(res.headers.get('x-dcb-reason')).toBe('the subscriber denied consent')
    const [entry] = await entries()
    expect(entry).toMatchObject({
      method: 'POST',
      path: new URL(url).pathname,
      merchant: 'demo',
      msisdn,
      http_status: 303,
      message: 'FAILED_INIT_SUB',
      reason: 'the subscriber denied consent',
      request: { action: 'deny' },
    })
  })

  it("a consent approval is logged with message '' (success), the subscription in its response", async () => {
    const msisdn = '359881234001'
    // An approval of another request: message '' (success), with the subscription.
    const again = await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'bg' })
    await fetch(again.body.payload.redirect_url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=approve',
      redirect: 'manual',
    })
    const [approved] = await entries()
    expect(approved).toMatchObject({ http_status: 303, message: '', reason: null, msisdn, response: { result: 'SUCCESS' } })
  })

  it('a consent form with two actions is refused (400) without deciding the request', async () => {
    const msisdn = '359881234002'
    const init = await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'bg' })
    const url: string = init.body.payload.redirect_url
    const form = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' } as const
    const both = await fetch(url, { ...form, body: 'action=deny&action=approve' })
    expect(both.status).toBe(400)
    expect(await both.text()).toContain('exactly one')
    // Still undecided: an approval now subscribes.
    const approve = await fetch(url, { ...form, body: 'action=approve' })
    expect(approve.headers.get('location')).toMatch(/subscription_id=/)
  })

  it('an MO is logged with its body, its MSISDN, its outcome', async () => {
    await c.control('/mo', { msisdn: '60133456201', short_code: '32123', text: 'STREAM' })
    const [mo] = await entries()
    expect(mo).toMatchObject({
      path: '/_sandbox/mo',
      msisdn: '60133456201',
      message: 'INSUFFICIENT_FUNDS',
      reason: 'rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS',
      request: { msisdn: '60133456201', short_code: '32123', text: 'STREAM' },
    })
  })

  it('an MO that did nothing is logged with the reason it did nothing', async () => {
    // A PSMS ticket is followed by these lines.
    await c.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'STREEM' })
    await c.control('/mo', { msisdn: '60133456001', short_code: '99999', text: 'STREAM' })
    expect((await entries()).slice(0, 2)).toMatchObject([
      { path: '/_sandbox/mo', message: 'ignored', reason: expect.stringMatching(/ has no short code 99999 /) },
      { path: '/_sandbox/mo', message: 'unknown_keyword', reason: '"STREEM" is not a keyword on 32123' },
    ])
  })

  it("an MO that subscribes is logged with message '' (success)", async () => {
    await c.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'STREAM' })
    expect((await entries())[0]).toMatchObject({ path: '/_sandbox/mo', message: '', reason: null })
  })

  it('control writes (cancel, rule, clock move) are logged with their MSISDN, the clock move with its body', async () => {
    const sub = await c.subscribe('60123456001')
    await c.control(`/subscriptions/${sub}/cancel`, {})
    await c.control('/rules', { match: { msisdn: '60123456002' }, step: 'init', effect: { error: 'BARRED' } })
    await c.control('/clock/advance', { by: 'P1D' })
    const list = await entries()
    expect(list.slice(0, 3).map((e) => [e.path, e.msisdn])).toEqual([
      ['/_sandbox/clock/advance', null],
      ['/_sandbox/rules', '60123456002'],
      [`/_sandbox/subscriptions/${sub}/cancel`, '60123456001'],
    ])
    expect(list[0]!.request).toEqual({ by: 'P1D' })
  })

  it('control reads are not logged', async () => {
    // Some entries first, so an empty log cannot pass by itself.
    await c.subscribe('60123456001')
    await c.control('/clock/advance', { by: 'P1D' })
    const before = (await entries()).length
    expect(before).toBeGreaterThan(0)
    await c.control('/clock')
    await c.control('/subscriptions')
    await c.control(`/sms?msisdn=60123456001`)
    expect((await entries()).length).toBe(before)
  })

  it('a verify entry takes its msisdn from the verif_request_id', async () => {
    await c.subscribe('60123456001')
    const [verify, init] = await entries()
    expect(init).toMatchObject({ path: '/subscriptions/init', msisdn: '60123456001' })
    expect(verify).toMatchObject({ path: '/subscriptions/verify', msisdn: '60123456001', message: '' })
  })

  it('a status entry takes its msisdn from the subscription_id', async () => {
    const sub = await c.subscribe('60123456001')
    await c.api('/subscriptions/status', { subscription_id: sub })
    const [mine] = await entries()
    expect(mine).toMatchObject({ path: '/subscriptions/status', msisdn: '60123456001', merchant: 'demo' })
  })

  it('a status entry of a merchant that may not see the subscription has msisdn null', async () => {
    const sub = await c.subscribe('60123456001')
    await c.api('/subscriptions/status', { subscription_id: sub }, { key: 'sandbox-other-key' })
    const [theirs] = await entries()
    expect(theirs).toMatchObject({ path: '/subscriptions/status', msisdn: null, merchant: 'other', message: 'SUBSCRIPTION_NOT_FOUND' })
  })

  it('every entry has an msisdn field, null for a request without a key', async () => {
    await c.subscribe('60123456001')
    await c.api('/subscriptions/init', {}, { key: null })
    const list = await entries()
    expect(list[0]).toMatchObject({ msisdn: null, http_status: 401, reason: 'no API-KEY header: send the API-KEY of a merchant' })
    for (const e of list) expect(e).toHaveProperty('msisdn')
  })

  it("GET /_sandbox/requests?msisdn=M gives that MSISDN's entries only", async () => {
    await c.subscribe('60123456001')
    await c.subscribe('60123456002')
    const one = await entries('&msisdn=60123456002')
    expect(one.map((e) => e.path)).toEqual(['/subscriptions/verify', '/subscriptions/init'])
    expect(new Set(one.map((e) => e.msisdn))).toEqual(new Set(['60123456002']))
    expect(await entries('&msisdn=60999999999')).toEqual([])
  })
})
