import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startClient, useSandbox, TIMESTAMP, type Client } from '../helpers.js'
import { nextRequest, withFakeTimers } from '../wait.js'

const c = useSandbox({ journalSize: 5 })

const init = (msisdn: string, service = 'STREAMPLUS') => c.api('/subscriptions/init', { msisdn, service_code: service, country_code: 'my' })

describe('control API', () => {
  it('health answers ok naming the version', async () => {
    const r = await c.control('/health')
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ ok: true, version: expect.stringMatching(/^\d+\.\d+\.\d+/) })
  })

  describe('sms', () => {
    /** Two OTPs to one number a second apart (Stream Plus, then Game Club); answers its inbox. */
    async function inbox() {
      await init('60123456001')
      await c.control('/clock/advance', { by: '1s' })
      await init('60123456001', 'GAMECLUB')
      return (await c.control('/sms?msisdn=60123456001')).body.messages
    }

    it('lists the inbox newest first', async () => {
      expect((await inbox()).map((m: any) => m.text)).toEqual([expect.stringContaining('Game Club'), expect.stringContaining('Stream Plus')])
    })

    it('stamps each message with the time it was sent', async () => {
      expect((await inbox())[0].at).toMatch(TIMESTAMP)
    })

    it('refuses a call without an msisdn (400)', async () => {
      expect((await c.control('/sms')).status).toBe(400)
    })

    it('lists an empty inbox for a number sent nothing', async () => {
      await inbox()
      expect((await c.control('/sms?msisdn=60123456999')).body.messages).toEqual([])
    })
  })

  describe('otp', () => {
    it('answers 404 NO_OTP when none was sent', async () => {
      const none = await c.control('/otp?msisdn=60123456007')
      expect(none.status).toBe(404)
      expect(none.body.error).toBe('NO_OTP')
    })

    it('with ?wait, waits for the next OTP sent', async () => {
      await withFakeTimers(async (t) => {
        const waiting = c.control('/otp?msisdn=60123456007&wait=5')
        // The server waits for it (up to 5 s) before the Init sends it.
        expect(await Promise.race([t.next(), waiting])).toBe(5000)
        const i = await init('60123456007')
        const got = await waiting
        expect(got.status).toBe(200)
        expect(got.body.verif_request_id).toBe(i.body.payload.verif_request_id)
      })
    })

    it('with ?wait, answers 404 when none came within the wait', async () => {
      await withFakeTimers(async (t) => {
        const late = c.control('/otp?msisdn=60123456008&wait=0.2')
        expect(await Promise.race([t.next(), late])).toBe(200)
        await t.advance(200)
        expect((await late).status).toBe(404)
      })
    })

    it('refuses a wait that is no number (400)', async () => {
      expect((await c.control('/otp?msisdn=60123456008&wait=abc')).status).toBe(400)
    })
  })

  describe('subscriptions', () => {
    /** Subscribes one number with the demo merchant (a) and one with the other (b). */
    async function twoMerchants() {
      const a = await c.subscribe('60123456001')
      const b = await c.subscribe('60123456002', 'NEWSDAILY', 'my', 'sandbox-other-key')
      return { a, b }
    }
    const ids = async (query: string) => (await c.control(`/subscriptions${query}`)).body.subscriptions.map((s: any) => s.subscription_id)

    it("lists every merchant's subscriptions", async () => {
      const { a, b } = await twoMerchants()
      const all = (await c.control('/subscriptions')).body.subscriptions
      expect(all.map((s: any) => s.subscription_id).sort()).toEqual([a, b].sort())
    })

    it('filters by merchant', async () => {
      const { b } = await twoMerchants()
      expect(await ids('?merchant=other')).toEqual([b])
    })

    it('filters by MSISDN', async () => {
      const { a } = await twoMerchants()
      expect(await ids('?msisdn=60123456001')).toEqual([a])
    })

    it('filters by status', async () => {
      await twoMerchants()
      expect((await c.control('/subscriptions?status=canceled')).body.subscriptions).toEqual([])
    })

    it('refuses a status typo with BAD_REQUEST naming the statuses', async () => {
      const typo = await c.control('/subscriptions?status=cancelled')
      expect(typo.status).toBe(400)
      expect(typo.body).toEqual({ error: 'BAD_REQUEST', message: 'status: expected ACTIVE, CANCELED or EXPIRED (any case)' })
    })

    it('refuses an MSISDN filter that can match nothing on every list that takes one', async () => {
      for (const path of ['/subscriptions?msisdn=6012-345', '/requests?msisdn=abc', '/messages?msisdn=%2B60123456001']) {
        const bad = await c.control(path)
        expect(bad.status).toBe(400)
        expect(bad.body).toEqual({ error: 'BAD_REQUEST', message: 'msisdn: expected an MSISDN (digits only, calling code first)' })
      }
    })

    describe('a merchant filter', () => {
      beforeEach(async () => {
        await c.subscribe('60123456003')
      })

      it('on a merchant the world does not have is refused as coverage does (404 MERCHANT_NOT_FOUND), not with an empty list', async () => {
        const nobody = { status: 404, body: { error: 'MERCHANT_NOT_FOUND', message: 'no merchant nobody in the world' } }
        expect(await c.control('/coverage?merchant=nobody')).toEqual(nobody)
        // Before: 200 { subscriptions: [] }, as if the merchant had none yet.
        expect(await c.control('/subscriptions?merchant=nobody')).toEqual(nobody)
      })

      it('matches a merchant name in its own case only', async () => {
        expect(await c.control('/subscriptions?merchant=Demo&status=active')).toEqual({
          status: 404,
          body: { error: 'MERCHANT_NOT_FOUND', message: 'no merchant Demo in the world' },
        })
      })

      // A merchant of the world with nothing (yet) is an empty list, in a session made for it too.
      it('on a merchant of the world with no subscription lists none', async () => {
        expect(await c.control('/subscriptions?merchant=inactive')).toEqual({ status: 200, body: { subscriptions: [] } })
      })

      it('on a merchant with a subscription lists it', async () => {
        expect((await c.control('/subscriptions?merchant=demo')).body.subscriptions).toHaveLength(1)
      })

      it('refused makes no session', async () => {
        await c.control('/subscriptions?merchant=nobody', undefined, { headers: { 'x-dcb-session': 'filter-typo' } })
        expect((await c.control('/sessions')).body.sessions.map((s: { name: string }) => s.name)).not.toContain('filter-typo')
      })
    })

    describe('a service filter', () => {
      beforeEach(async () => {
        await c.subscribe('60123456004')
      })

      it('on a service the world does not have is refused naming the nearest one, not with an empty list', async () => {
        const typo = await c.control('/subscriptions?service=STREAMPLUSS')
        expect(typo.status).toBe(400)
        expect(typo.body).toEqual({
          error: 'BAD_REQUEST',
          message: expect.stringMatching(/^service: no service "STREAMPLUSS" in the world \(services: GAMECLUB, .*STREAMPLUS.*\); did you mean STREAMPLUS\?$/),
        })
      })

      it('on a service near none of the world suggests none', async () => {
        expect((await c.control('/subscriptions?service=NOSUCHTHING')).body.message).not.toMatch(/did you mean/)
      })

      // A service of the world with nothing (yet) is an empty list; the one subscribed to lists it.
      it('on a service of the world with no subscription lists none', async () => {
        expect(await c.control('/subscriptions?service=GAMECLUB')).toEqual({ status: 200, body: { subscriptions: [] } })
      })

      it('on the service subscribed to lists its subscription', async () => {
        expect((await c.control('/subscriptions?service=STREAMPLUS')).body.subscriptions).toHaveLength(1)
      })
    })

    it('shows one subscription with its charges', async () => {
      const a = await c.subscribe('60123456001')
      const one = await c.control(`/subscriptions/${a}`)
      expect(one.body).toMatchObject({
        subscription_id: a,
        merchant: 'demo',
        carrier_code: 'sbx-my-otp',
        charges: [{ kind: 'first', outcome: 'SUCCESS', amount: '9.90', currency: 'MYR' }],
      })
    })

    it('answers 404 for an unknown subscription id', async () => {
      expect((await c.control('/subscriptions/nope')).status).toBe(404)
    })
  })

  describe('clock', () => {
    it('answers the time', async () => {
      const start = (await c.control('/clock')).body
      expect(start.now).toMatch(TIMESTAMP)
    })

    it('advances by an ISO duration', async () => {
      const start = (await c.control('/clock')).body
      const adv = await c.control('/clock/advance', { by: 'P1D' })
      expect(adv.status).toBe(200)
      expect(adv.body.clock.offset_ms - start.offset_ms).toBe(86_400_000)
      const diff = Date.parse(adv.body.clock.now + 'Z') - Date.parse(start.now + 'Z')
      expect(diff).toBeGreaterThanOrEqual(86_400_000)
      expect(diff).toBeLessThan(86_400_000 + 5_000)
    })

    it('advances by a short form', async () => {
      expect((await c.control('/clock/advance', { by: '36h' })).status).toBe(200)
    })

    it('refuses a duration that is nonsense (BAD_DURATION)', async () => {
      expect((await c.control('/clock/advance', { by: 'soon' })).body.error).toBe('BAD_DURATION')
    })

    it('refuses a missing duration (400)', async () => {
      expect((await c.control('/clock/advance', {})).status).toBe(400)
    })

    it('refuses to set an earlier time (409 CLOCK_BACKWARDS)', async () => {
      const back = await c.control('/clock/set', { to: '2001-01-01T00:00:00' })
      expect(back.status).toBe(409)
      expect(back.body.error).toBe('CLOCK_BACKWARDS')
    })

    it('refuses to set a time that is nonsense (BAD_TIME)', async () => {
      expect((await c.control('/clock/set', { to: 'tomorrow' })).body.error).toBe('BAD_TIME')
    })

    it('sets a later time', async () => {
      const set = await c.control('/clock/set', { to: '2040-02-29T12:00:00' })
      expect(set.body.clock.now.startsWith('2040-02-29T12:00:0')).toBe(true)
    })
  })

  describe('requests: the request log', () => {
    /** Seven Status calls (id-0 to id-6) into a request log of five; answers the log. */
    async function sevenCalls() {
      for (let i = 0; i < 7; i++) await c.api('/subscriptions/status', { subscription_id: `id-${i}` })
      return (await c.control('/requests')).body
    }

    it('keeps the latest N merchant calls', async () => {
      const log = await sevenCalls()
      expect(log.capacity).toBe(5)
      expect(log.requests).toHaveLength(5)
    })

    it('lists the newest first', async () => {
      expect((await sevenCalls()).requests[0]).toMatchObject({
        path: '/subscriptions/status',
        merchant: 'demo',
        http_status: 404,
        message: 'SUBSCRIPTION_NOT_FOUND',
        request: { subscription_id: 'id-6' },
      })
    })

    it('with ?since=, lists only the calls after that id', async () => {
      const since = (await sevenCalls()).requests[1].id
      expect((await c.control(`/requests?since=${since}`)).body.requests).toHaveLength(1)
    })
  })

  describe('reset', () => {
    beforeEach(async () => {
      await c.subscribe('60123456001')
      await c.control('/reset', {})
    })

    it('drops subscriptions', async () => {
      expect((await c.control('/subscriptions')).body.subscriptions).toEqual([])
    })

    it('drops messages', async () => {
      expect((await c.control('/sms?msisdn=60123456001')).body.messages).toEqual([])
    })

    it('drops verifications: an Init made before cannot be verified', async () => {
      const init = await c.api('/subscriptions/init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' })
      const otp = (await c.control('/otp?msisdn=60123456002')).body.otp
      await c.control('/reset', {})
      const verify = await c.api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp })
      expect(verify.body).toMatchObject({ status: 'FAIL', message: 'INVALID_PIN' })
    })
  })

  it('answers an unknown control call 404 NOT_FOUND as JSON', async () => {
    expect((await c.control('/nope')).body).toMatchObject({ error: 'NOT_FOUND' })
  })

  it('answers a wrong method 405 METHOD_NOT_ALLOWED as JSON', async () => {
    const r = await c.control('/reset')
    expect(r.status).toBe(405)
    expect(r.body.error).toBe('METHOD_NOT_ALLOWED')
  })

  it('refuses a body that is a JSON array (400)', async () => {
    const bad = await fetch(`${c.url}/_sandbox/mo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1]' })
    expect(bad.status).toBe(400)
  })

  it('a bad body field is 400 BAD_REQUEST saying what the field expects', async () => {
    expect((await c.control('/clock/advance', {})).body).toEqual({ error: 'BAD_REQUEST', message: 'by: expected a duration such as P1M or 36h' })
    expect((await c.control('/clock/set', { to: 5 })).body).toEqual({ error: 'BAD_REQUEST', message: 'to: expected a time such as 2026-01-31T00:00:00' })
    expect((await c.control('/mo', { msisdn: '60133456001', short_code: '32123' })).body).toEqual({
      error: 'BAD_REQUEST',
      message: 'text: expected the text of the message, e.g. a keyword or STOP',
    })
  })

  it('a bad query parameter is 400 BAD_REQUEST saying what the parameter expects', async () => {
    expect((await c.control('/otp?msisdn=60123456001&wait=abc')).body).toEqual({
      error: 'BAD_REQUEST',
      message: 'wait: expected a number of seconds from 0 to 120',
    })
    expect((await c.control('/sms')).body).toEqual({ error: 'BAD_REQUEST', message: 'msisdn: expected an MSISDN (digits, calling code first)' })
    expect((await c.control('/requests?limit=0')).body).toEqual({ error: 'BAD_REQUEST', message: 'limit: expected a positive whole number' })
    expect((await c.control('/subscriptions?limit=x')).status).toBe(400)
  })

  it('a body that is not JSON is 400 BAD_REQUEST saying so', async () => {
    const notJson = await fetch(`${c.url}/_sandbox/mo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })
    expect(await notJson.json()).toEqual({ error: 'BAD_REQUEST', message: 'the body is not valid JSON' })
  })

  it('a body that is no JSON object is 400 BAD_REQUEST saying so', async () => {
    const array = await fetch(`${c.url}/_sandbox/clock/advance`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1]' })
    expect(await array.json()).toEqual({ error: 'BAD_REQUEST', message: 'the body must be a JSON object' })
  })

  describe('a number in a query is decimal digits', () => {
    it('refuses a wait in hexadecimal, with an exponent, a sign, a space or nothing, 400 naming the parameter', async () => {
      const seconds = { error: 'BAD_REQUEST', message: 'wait: expected a number of seconds from 0 to 120' }
      // Before: Number() read these, `wait=0x10` as 16 s (0x0 here: no wait, NO_OTP).
      for (const wait of ['0x0', '0e0', '0b0', '%200', '0%20', '%2B0', '-0', '', '.5', '1.'])
        expect(await c.control(`/otp?msisdn=60123456099&wait=${wait}`), wait).toEqual({ status: 400, body: seconds })
    })

    it('refuses a limit or since in hexadecimal, with an exponent or a space, 400 naming the parameter', async () => {
      for (const [path, message] of [
        ['/requests?limit=0x10', 'limit: expected a positive whole number'],
        ['/requests?since=1e1', 'since: expected a whole number from 0'],
        ['/subscriptions?limit=%2010', 'limit: expected a positive whole number'],
        ['/messages?limit=1e3', 'limit: expected a whole number from 1 to 5000'],
      ])
        expect(await c.control(path), path).toEqual({ status: 400, body: { error: 'BAD_REQUEST', message } })
    })

    it('reads decimal digits as before, a fraction where the call takes one', async () => {
      expect((await c.control('/otp?msisdn=60123456099&wait=0')).body.error).toBe('NO_OTP')
      expect((await c.control('/otp?msisdn=60123456099&wait=0.0')).body.error).toBe('NO_OTP')
      expect((await c.control('/requests?limit=010&since=0')).status).toBe(200)
      expect((await c.control('/messages?limit=5000')).status).toBe(200)
    })
  })

  describe('a query parameter or body field the call does not take, or one given twice', () => {
    /** An OTP sent to 031, then a reset with a misspelt clock (which would otherwise reset to now, dropping everything). */
    async function misspeltReset() {
      await init('60123456031')
      const kept = (await c.control('/sms?msisdn=60123456031')).body.messages
      const refused = await c.control('/reset', { clok: '2026-01-01T00:00:00' })
      return { kept, refused, after: (await c.control('/sms?msisdn=60123456031')).body.messages }
    }
    /** A clock advance with a field it does not take; answers the offset before and after, and the answer. */
    async function advanceWithTo() {
      const offset = (await c.control('/clock')).body.offset_ms
      const refused = await c.control('/clock/advance', { by: 'P1D', to: '2030-01-01T00:00:00' })
      return { offset, refused, after: (await c.control('/clock')).body.offset_ms }
    }

    it('refuses an unknown body field by name, listing the fields the call takes', async () => {
      expect((await misspeltReset()).refused.body).toEqual({
        error: 'BAD_REQUEST',
        message: 'clok: unknown field; POST /_sandbox/reset takes clock, frozen, seed',
      })
      expect((await advanceWithTo()).refused.body).toEqual({
        error: 'BAD_REQUEST',
        message: 'to: unknown field; POST /_sandbox/clock/advance takes by',
      })
      expect((await c.control('/subscriptions/nope/cancel', { reason: 'x' })).body).toEqual({
        error: 'BAD_REQUEST',
        message: 'reason: unknown field; POST /_sandbox/subscriptions/nope/cancel takes none',
      })
    })

    it('refuses an unknown query parameter by name, listing the parameters the call takes', async () => {
      expect((await c.control('/subscriptions?stauts=ACTIVE')).body).toEqual({
        error: 'BAD_REQUEST',
        message: 'stauts: unknown query parameter; GET /_sandbox/subscriptions takes msisdn, merchant, service, status, limit, service_code',
      })
      expect((await c.control('/clock?at=now')).body).toEqual({ error: 'BAD_REQUEST', message: 'at: unknown query parameter; GET /_sandbox/clock takes none' })
    })

    it('refuses a query parameter given twice by name', async () => {
      expect((await c.control('/otp?msisdn=60123456031&msisdn=60123456032')).body).toEqual({ error: 'BAD_REQUEST', message: 'msisdn: given more than once' })
    })

    it('a reset refused for an unknown field keeps the messages', async () => {
      const { kept, after } = await misspeltReset()
      expect(kept).toHaveLength(1)
      expect(after).toEqual(kept)
    })

    it('a clock advance refused for an unknown field leaves the clock where it was', async () => {
      const { offset, after } = await advanceWithTo()
      expect(after).toBe(offset)
    })
  })

  it('405 names the methods a call takes', async () => {
    expect((await c.control('/rules/x', undefined, { method: 'GET' })).body).toEqual({
      error: 'METHOD_NOT_ALLOWED',
      message: 'GET is not allowed on /_sandbox/rules/x; use DELETE',
    })
    expect((await c.control('/rules', undefined, { method: 'PUT' })).body.message).toBe('PUT is not allowed on /_sandbox/rules; use GET or POST or DELETE')
  })

  it('HEAD answers for GET', async () => {
    const head = await fetch(`${c.url}/_sandbox/health`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toMatch(/application\/json/)
  })

  it('serves the OpenAPI document generated from the request schemas', async () => {
    const doc = await (await fetch(`${c.url}/openapi.json`)).json()
    expect(doc.openapi).toBe('3.1.0')
    const initSchema = doc.paths['/subscriptions/init'].post.requestBody.content['application/json'].schema
    expect(initSchema.required).toEqual(['msisdn', 'service_code', 'country_code'])
    expect(initSchema.properties.country_code.pattern).toBe('^[a-z]{2}$')
    expect(Object.keys(doc.paths['/subscriptions/status'].post.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '405', '413', '500']),
    )
  })
})

describe('control API access', () => {
  let p: Client
  beforeAll(async () => {
    p = await startClient({ trustProxy: 'loopback', adminToken: 's3cret' })
  })
  afterAll(() => p.close())
  const from = (ip: string, auth?: string) => p.control('/health', undefined, { headers: { 'x-forwarded-for': ip, ...(auth ? { authorization: auth } : {}) } })

  it('is open from loopback', async () => {
    expect((await from('127.0.0.1')).status).toBe(200)
    expect((await from('::1')).status).toBe(200)
  })

  it('refuses other addresses without the admin token (403)', async () => {
    expect((await from('198.51.100.4')).status).toBe(403)
    expect((await from('198.51.100.4', 'Bearer wrong')).status).toBe(403)
  })

  it('never opens to a merchant API key, as a bearer token or an api-key header', async () => {
    expect((await from('198.51.100.4', 'Bearer sandbox-demo-key')).status).toBe(403)
    const r = await p.control('/health', undefined, { headers: { 'x-forwarded-for': '198.51.100.4', 'api-key': 'sandbox-demo-key' } })
    expect(r.status).toBe(403)
  })

  it('opens to other addresses with the admin token', async () => {
    expect((await from('198.51.100.4', 'Bearer s3cret')).status).toBe(200)
  })

  it('without an admin token, other addresses are refused with a clear message', async () => {
    const q = await startClient({ trustProxy: 'loopback' })
    try {
      const r = await q.control('/health', undefined, { headers: { 'x-forwarded-for': '198.51.100.4' } })
      expect(r.status).toBe(403)
      expect(r.body.message).toMatch(/--admin-token/)
    } finally {
      await q.close()
    }
  })
})

describe('bounded memory (5 SMS in all, 2 per MSISDN, 3 verification requests)', () => {
  let s: Client
  const ids: string[] = []
  // Inits for 001 to 004, then three for 009.
  beforeAll(async () => {
    s = await startClient({ maxSms: 5, maxVerifications: 3, smsPerMsisdn: 2 })
    for (let i = 1; i <= 4; i++)
      ids.push((await s.api('/subscriptions/init', { msisdn: `6012345600${i}`, service_code: 'STREAMPLUS', country_code: 'my' })).body.payload.verif_request_id)
    for (let i = 0; i < 3; i++) await s.api('/subscriptions/init', { msisdn: '60123456009', service_code: 'STREAMPLUS', country_code: 'my' })
  })
  afterAll(() => s?.close())

  it('caps verification requests', () => {
    expect(s.sandbox.engine.state.verifs.size).toBe(3)
  })

  it('caps SMS messages in all', () => {
    expect(s.sandbox.engine.state.sms.size).toBe(5)
  })

  it('caps SMS messages per MSISDN', async () => {
    expect((await s.control('/sms?msisdn=60123456009')).body.messages).toHaveLength(2)
  })

  it('drops the oldest SMS message first', async () => {
    expect((await s.control('/sms?msisdn=60123456001')).body.messages).toHaveLength(0)
  })

  it('drops the oldest verification request first', async () => {
    // A dropped verification request is unknown now.
    expect((await s.api('/subscriptions/verify', { verif_request_id: ids[0], otp: '0000' })).body.message).toBe('INVALID_PIN')
  })
})

describe('shutdown', () => {
  it('an OTP long poll still waiting answers 503 SHUTTING_DOWN when the server shuts down, in every session, instead of holding the close', async () => {
    const s = await startClient()
    const poll = async (session?: string) => {
      const arrived = nextRequest(s.sandbox.server, '/_sandbox/otp')
      const answer = fetch(`${s.url}/_sandbox/otp?msisdn=60123456001&wait=120`, { headers: session ? { 'x-dcb-session': session } : {} }).then(async (r) => ({
        status: r.status,
        body: await r.json(),
      }))
      await arrived
      return { answer }
    }
    const waiting = [(await poll()).answer, (await poll('alpha')).answer]
    const closing = s.close()
    for (const answer of await Promise.all(waiting))
      expect(answer).toEqual({
        status: 503,
        body: { error: 'SHUTTING_DOWN', message: 'the server is shutting down: no OTP came for 60123456001 before it stopped waiting' },
      })
    await closing
  })
})
