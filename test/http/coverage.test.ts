import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FINDING_ADVICE } from '../../src/core/coverage.js'
import { DEMO, TIMESTAMP, startClient, tempDir, useSandbox, type Client } from '../helpers.js'

const c = useSandbox({ clock: '2026-01-31T09:00:00' })

const init = (msisdn: string, country = 'my', service = 'STREAMPLUS', key = DEMO) =>
  c.api('/subscriptions/init', { msisdn, service_code: service, country_code: country }, { key })
const verify = (verif_request_id: string, otp: string) => c.api('/subscriptions/verify', { verif_request_id, otp })
const status = (subscription_id: string) => c.api('/subscriptions/status', { subscription_id })
const otpOf = async (msisdn: string) => (await c.control(`/otp?msisdn=${msisdn}`)).body.otp as string
const mo = (msisdn: string, short_code: string, text: string) => c.control('/mo', { msisdn, short_code, text })
const form = (url: string, action: string) =>
  fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `action=${action}` })

async function coverage(query = '', client: Client = c, headers?: Record<string, string>) {
  const r = await client.control(`/coverage${query}`, undefined, { headers })
  expect(r.status).toBe(200)
  return r.body.coverage as any[]
}
async function of(merchant = 'demo', headers?: Record<string, string>) {
  const [m] = await coverage(`?merchant=${merchant}`, c, headers)
  return m
}
const counts = (m: any): Record<string, number> => Object.fromEntries(m.outcomes.filter((o: any) => o.count).map((o: any) => [o.id, o.count]))
const findings = (m: any): Record<string, number> => Object.fromEntries(m.findings.map((f: any) => [f.code, f.count]))

/** Init + the OTP from the inbox + Verify; answers the Verify's answer. */
async function otpFlow(msisdn: string, service = 'STREAMPLUS') {
  const i = await init(msisdn, 'my', service)
  expect(i.body.status).toBe('SUCCESS')
  return verify(i.body.payload.verif_request_id, await otpOf(msisdn))
}

/** Asks again, each time after the pending I/O ran, until `fn` answers (the test's own timeout ends a wait that never does). */
async function until<T>(fn: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    await new Promise((r) => setImmediate(r))
  }
}

/** Sends a merchant call and abandons it once `done()` says the server did it (a 5NN ending holds the answer back). */
async function abandon(path: string, body: unknown, done: () => Promise<boolean>) {
  const abort = new AbortController()
  const gone = fetch(`${c.url}${path}`, {
    method: 'POST',
    headers: { 'api-key': DEMO, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: abort.signal,
  }).catch((e: Error) => e.name)
  await until(async () => ((await done()) ? true : undefined))
  abort.abort()
  expect(await gone).toBe('AbortError')
  // The server logs the request once it sees the client gone.
  return until(async () => (await c.control(`/requests?limit=5`)).body.requests.find((e: any) => e.client_closed))
}

describe('GET /_sandbox/coverage', () => {
  describe('before any traffic', () => {
    it('lists no merchant', async () => {
      expect(await coverage()).toEqual([])
    })

    it('answers an empty summary for a merchant asked for', async () => {
      const m = await of('demo')
      expect(m).toMatchObject({ merchant: 'demo', since: '2026-01-31T09:00:00.000000', covered: 0, total: m.outcomes.length, percent: 0, findings: [] })
    })

    // Derived from the engine's tables and the world: each once, each unseen one with how to produce it.
    it('lists each outcome once', async () => {
      const ids = (await of('demo')).outcomes.map((o: any) => o.id)
      expect(new Set(ids).size).toBe(ids.length)
    })

    it('lists the outcomes the engine can reach', async () => {
      const ids = (await of('demo')).outcomes.map((o: any) => o.id)
      expect(ids).toEqual(
        expect.arrayContaining(['init.otp', 'init.BAD_REQUEST', 'init.MERCHANT_SERVICE_NOT_CONFIGURED', 'status.ERROR_500', 'retry.failed', 'client.gone']),
      )
    })

    it('counts every outcome at zero', async () => {
      const m = await of('demo')
      expect(m.outcomes.every((o: any) => o.count === 0)).toBe(true)
    })

    it('tells how to produce each unseen outcome', async () => {
      const m = await of('demo')
      expect(m.outcomes.every((o: any) => typeof o.how === 'string' && o.how.length > 0)).toBe(true)
      expect(m.outcomes.find((o: any) => o.id === 'verify.INSUFFICIENT_FUNDS').how).toBe('Verify (after Init) for a number ending 201 (rule charge-201)')
    })
  })

  it('refuses a merchant the world does not have with 404 MERCHANT_NOT_FOUND', async () => {
    const bad = await c.control('/coverage?merchant=nobody')
    expect(bad).toMatchObject({ status: 404, body: { error: 'MERCHANT_NOT_FOUND' } })
  })

  it('refuses an empty merchant with 400', async () => {
    expect((await c.control('/coverage?merchant=')).status).toBe(400)
  })

  describe('after every outcome reached through HTTP (magic endings, rules, the clock)', () => {
    const initCodes = ['INVALID_MSISDN', 'INVALID_MSISDN_LANDLINE', 'CARRIER_NOT_SUPPORTED', 'FAILED_INIT_SUB', 'NOT_ALLOWED_CHANNEL', 'BLACKLISTED', 'BARRED']
    initCodes.push('NOT_ELIGIBLE', 'INVALID_USER', 'ERROR')
    const chargeCodes = ['INSUFFICIENT_FUNDS', 'BLACKLISTED', 'BARRED', 'NOT_ELIGIBLE', 'INVALID_USER', 'ALREADY_SUBSCRIBED']
    chargeCodes.push('SPENDING_LIMIT_REACHED', 'TRX_COUNT_REACHED', 'TRX_LIMIT_EXCEEDED', 'ERROR')
    let m: any

    beforeAll(async () => {
      await c.control('/reset', {})
      // Init: the three flows, every failure ending, HTTP 500.
      expect((await init('60123456001')).body.status).toBe('SUCCESS')
      expect((await init('60133456001')).body.status).toBe('SUCCESS')
      expect((await init('359881234001', 'bg')).body.status).toBe('SUCCESS')
      for (const [i, code] of initCodes.entries()) expect((await init(`6012345${6101 + i}`)).body.message).toBe(code)
      expect((await init('60123456150')).status).toBe(500)
      // The SMS channel: an OTP never delivered (631), one delivered late (632).
      expect((await init('60123456631')).body.status).toBe('SUCCESS')
      expect((await init('60123456632')).body.status).toBe('SUCCESS')
      // Verify: success, a wrong OTP, an expired one, the lock-out, every charge failure, HTTP 500.
      const sub = (await verify((await init('60123456002')).body.payload.verif_request_id, await otpOf('60123456002'))).body.payload.subscription_id
      expect((await init('60123456002')).body.message).toBe('ALREADY_SUBSCRIBED')
      const wrong = (await init('60123456003')).body.payload.verif_request_id
      for (let i = 0; i < 3; i++) expect((await verify(wrong, '0000')).body.message).toBe('INVALID_PIN')
      expect((await verify(wrong, '0000')).body.message).toBe('MAX_PIN_RETRIES')
      const late = (await init('60123456004')).body.payload.verif_request_id
      await c.control('/clock/advance', { by: 'PT6M' })
      expect((await verify(late, await otpOf('60123456004'))).body.message).toBe('PIN_EXPIRED')
      for (const [i, code] of chargeCodes.entries()) expect((await otpFlow(`6012345${6201 + i}`)).body.message).toBe(code)
      expect((await otpFlow('60123456250')).status).toBe(500)
      // A runtime rule reaches an outcome too: a first charge refused NOT_ELIGIBLE for one more number.
      expect((await c.control('/rules', { match: { msisdn: '60123456077' }, step: 'charge', effect: { error: 'NOT_ELIGIBLE' } })).status).toBe(200)
      expect((await otpFlow('60123456077')).body.message).toBe('NOT_ELIGIBLE')
      // Status: each state, and an unknown id.
      expect((await status(sub)).body.payload.status).toBe('ACTIVE')
      expect((await status('nope')).body.message).toBe('SUBSCRIPTION_NOT_FOUND')
      // The protocol answers: a body failing the schema at each operation, a service not configured, a Status answering 500.
      for (const op of ['init', 'verify', 'status']) expect((await c.api(`/subscriptions/${op}`, { msisdn: 1 })).status).toBe(400)
      expect((await init('60123456001', 'my', 'NOPE')).body.message).toBe('MERCHANT_SERVICE_NOT_CONFIGURED')
      expect((await c.control('/rules', { match: { msisdn: '60123456002' }, step: 'status', effect: { http: 500 } })).status).toBe(200)
      expect((await status(sub)).status).toBe(500)
      // The subscriber's side: PSMS keyword, a failed charge at the MO, STOP; consent approved, denied, failed.
      const psms = (await mo('60133456001', '32123', 'STREAM')).body.subscription_id
      expect((await mo('60133456201', '32123', 'STREAM')).body.action).toBe('charge_failed')
      expect((await mo('60133456001', '32123', 'STOP')).body.action).toBe('stop')
      expect((await status(psms)).body.payload.status).toBe('CANCELED')
      const approved = await form((await init('359881234002', 'bg')).body.payload.redirect_url, 'approve')
      expect(new URL(approved.headers.get('location')!, c.url).searchParams.get('status')).toBe('SUCCESS')
      await form((await init('359881234003', 'bg')).body.payload.redirect_url, 'deny')
      await form((await init('359881234201', 'bg')).body.payload.redirect_url, 'approve')
      // Lifecycle: an hourly renewal that succeeds, one that fails (then its retry a day later succeeds), a carrier cancellation.
      expect((await otpFlow('60123456005', 'QUICKTEST')).body.status).toBe('SUCCESS')
      const failing = (await otpFlow('60123456302', 'QUICKTEST')).body.payload.subscription_id
      // 301 fails its first renewal and its first retry.
      expect((await otpFlow('60123456301', 'QUICKTEST')).body.status).toBe('SUCCESS')
      expect((await otpFlow('60123456401', 'QUICKTEST')).body.status).toBe('SUCCESS')
      await c.control('/clock/advance', { by: 'PT1H' })
      expect((await status(failing)).body.payload.status).toBe('EXPIRED')
      await c.control('/clock/advance', { by: 'P1D' })
      // A client gone before its answer (a 5NN ending holds the answer back 1 s).
      await abandon('/subscriptions/init', { msisdn: '60123456510', service_code: 'STREAMPLUS', country_code: 'my' }, async () => {
        return (await c.control('/otp?msisdn=60123456510')).status === 200
      })
      // Answers a rule replaced: a fault and a gateway's answer at each call (6NN endings; a rule for a Status).
      await expect(init('60123456601')).rejects.toThrow(TypeError)
      expect((await init('60123456603')).status).toBe(429)
      const started = async (msisdn: string) => [(await init(msisdn)).body.payload.verif_request_id, await otpOf(msisdn)] as const
      await expect(verify(...(await started('60123456611')))).rejects.toThrow(TypeError)
      expect((await verify(...(await started('60123456613')))).status).toBe(504)
      const cut = (await verify(...(await started('60123456621')))).body.payload.subscription_id
      await expect(status(cut)).rejects.toThrow(TypeError)
      const gated = (await verify(...(await started('60123456078')))).body.payload.subscription_id
      await c.control('/rules', { match: { msisdn: '60123456078' }, step: 'status', effect: { http: 503 } })
      expect((await status(gated)).status).toBe(503)

      m = await of('demo')
    })

    // QUICKTEST renews hourly: 005 and 401 renew every hour for a day and an hour (401 until the carrier cancels it
    // a day after activation); 302 fails its first renewal, and its retry a day later succeeds.
    it('counts two failed renewals, each INSUFFICIENT_FUNDS', () => {
      expect(counts(m)['renewal.failed']).toBe(2)
      expect(m.outcomes.find((o: any) => o.id === 'renewal.failed').codes).toEqual({ INSUFFICIENT_FUNDS: 2 })
    })

    it('counts the one retry that succeeded', () => {
      expect(counts(m)['retry.succeeded']).toBe(1)
    })

    it('counts the failed retries, each INSUFFICIENT_FUNDS', () => {
      const got = counts(m)
      expect(got['retry.failed']).toBeGreaterThanOrEqual(1)
      expect(m.outcomes.find((o: any) => o.id === 'retry.failed').codes).toEqual({ INSUFFICIENT_FUNDS: got['retry.failed'] })
    })

    it('counts the one carrier cancellation', () => {
      expect(counts(m)['carrier.canceled']).toBe(1)
    })

    it('counts every hourly renewal that succeeded', () => {
      expect(counts(m)['renewal.succeeded']).toBe(25 + 23)
    })

    it('counts every other outcome exactly', () => {
      const expected: Record<string, number> = {
        'init.psms': 1,
        'init.redirect': 4,
        'init.ALREADY_SUBSCRIBED': 1,
        'init.ERROR_500': 1,
        'verify.SUCCESS': 8, // 002, 005, 302, 301, 401, and 611 (its answer reset), 621, 078
        'init.fault': 1,
        'init.gateway': 1,
        'verify.fault': 1,
        'verify.gateway': 1,
        'status.fault': 1,
        'status.gateway': 1,
        'verify.INVALID_PIN': 3,
        'verify.PIN_EXPIRED': 1,
        'verify.MAX_PIN_RETRIES': 1,
        'verify.ERROR_500': 1,
        'status.ACTIVE': 1,
        'status.CANCELED': 1,
        'status.EXPIRED': 1,
        'status.SUBSCRIPTION_NOT_FOUND': 1,
        'init.BAD_REQUEST': 1,
        'verify.BAD_REQUEST': 1,
        'status.BAD_REQUEST': 1,
        'init.MERCHANT_SERVICE_NOT_CONFIGURED': 1,
        'status.ERROR_500': 1,
        'mo.subscribed': 1,
        'mo.charge_failed': 1,
        'mo.stop': 1,
        'consent.approved': 1,
        'consent.denied': 1,
        'consent.charge_failed': 1,
        'client.gone': 1,
        'otp.undelivered': 1,
        'otp.late': 1,
      }
      // 001-004, 631, 632, the ten charge endings, 250, the rule's 077, the four QUICKTEST, 510, 611, 613, 621, 078
      expected['init.otp'] = 4 + 2 + 10 + 1 + 1 + 4 + 1 + 4
      for (const code of initCodes) expected[`init.${code}`] = 1
      for (const code of chargeCodes) expected[`verify.${code}`] = 1
      expected['verify.NOT_ELIGIBLE'] = 2
      const got = counts(m)
      ;(delete got['renewal.failed'],
        delete got['retry.succeeded'],
        delete got['carrier.canceled'],
        delete got['renewal.succeeded'],
        delete got['retry.failed'])
      expect(got).toEqual(expected)
    })

    it('raises exactly the findings the traffic earned', () => {
      // The three 400s, the Init for an active subscription, and three subscriptions changed with no Status since (the
      // consent, the cancellation, 301's failed renewal).
      expect(findings(m)).toEqual({ INVALID_REQUEST: 3, INIT_WHILE_ACTIVE: 1, UNRECONCILED: 3 })
    })

    it('covers every outcome, at 100 percent', () => {
      expect(m.covered).toBe(m.total)
      expect(m.percent).toBe(100)
    })

    it('drops how to produce an outcome once seen', () => {
      expect(m.outcomes.some((o: any) => 'how' in o)).toBe(false)
    })

    it('keeps counting since the sandbox start', () => {
      expect(m.since).toBe('2026-01-31T09:00:00.000000')
    })
  })
})

describe('findings: each provoked, and a traffic pattern that must not raise it', () => {
  const journalEntry = async (id: number) => (await c.control(`/requests?limit=1&since=${id - 1}`)).body.requests.find((e: any) => e.id === id)
  const finding = async (code: string, merchant = 'demo') => (await of(merchant)).findings.find((f: any) => f.code === code)

  it('a correct integration (every flow, failures handled, reconciled with Status) has no findings', async () => {
    const ok = (await otpFlow('60123456001')).body.payload.subscription_id
    await status(ok)
    expect((await otpFlow('60123456201')).body.message).toBe('INSUFFICIENT_FUNDS')
    const id = (await init('60123456002')).body.payload.verif_request_id
    expect((await verify(id, '0000')).body.message).toBe('INVALID_PIN')
    expect((await verify(id, await otpOf('60123456002'))).body.status).toBe('SUCCESS')
    await init('60133456003')
    const psms = (await mo('60133456003', '32123', 'STREAM')).body.subscription_id
    await status(psms)
    const consent = await form((await init('359881234004', 'bg')).body.payload.redirect_url, 'approve')
    await status(new URL(consent.headers.get('location')!, c.url).searchParams.get('subscription_id')!)
    expect((await of('demo')).findings).toEqual([])
  })

  describe('LOST_ACTIVATION', () => {
    const msisdn = '60123456505' // answers held back 500 ms

    describe('after a Verify that activated while its client had gone', () => {
      let entry: any
      let lost: any
      let after: any
      beforeAll(async () => {
        await c.control('/reset', {})
        const first = (await init(msisdn)).body.payload.verif_request_id
        expect(await finding('LOST_ACTIVATION')).toBeUndefined()
        entry = await abandon('/subscriptions/verify', { verif_request_id: first, otp: await otpOf(msisdn) }, async () => {
          return (await c.control(`/subscriptions?msisdn=${msisdn}`)).body.subscriptions.length === 1
        })
        after = await of('demo')
        lost = after.findings.find((f: any) => f.code === 'LOST_ACTIVATION')
      })

      it('is raised once, its example the abandoned Verify', () => {
        expect(entry).toMatchObject({ path: '/subscriptions/verify', client_closed: true })
        expect(lost).toMatchObject({ code: 'LOST_ACTIVATION', count: 1, example: entry.id })
      })

      it('advises a timeout above the slowest lost answer, naming how long it took', () => {
        expect(lost.advice).toMatch(new RegExp(`^${FINDING_ADVICE.LOST_ACTIVATION.replace(/[.()]/g, '\\$&')} The slowest lost answer here took \\d+ ms\\.$`))
      })

      it('counts the gone client as client.gone', () => {
        expect(counts(after)['client.gone']).toBe(1)
      })
    })

    it('is not raised when the client waits for the held-back answer', async () => {
      expect((await otpFlow(msisdn)).body.status).toBe('SUCCESS')
      expect(await finding('LOST_ACTIVATION')).toBeUndefined()
    })
  })

  describe('VERIFY_AFTER_LOCKOUT', () => {
    /** Locks one verification out (4 wrong OTPs), Verifies it again, then Verifies a used one twice. */
    async function verifyAfterLockouts() {
      const id = (await init('60123456001')).body.payload.verif_request_id
      for (let i = 0; i < 4; i++) await verify(id, '0000')
      const whileLocking = await finding('VERIFY_AFTER_LOCKOUT')
      const again = await verify(id, await otpOf('60123456001'))
      expect(again.body.message).toBe('MAX_PIN_RETRIES')
      const used = (await otpFlow('60123456002')).body
      expect(used.status).toBe('SUCCESS')
      const usedId = (await c.control('/otp?msisdn=60123456002')).body.verif_request_id
      expect((await verify(usedId, '1234')).body.message).toBe('PIN_EXPIRED')
      expect((await verify(usedId, '1234')).body.message).toBe('PIN_EXPIRED')
      return { whileLocking, f: await finding('VERIFY_AFTER_LOCKOUT') }
    }

    it('is not raised by the Verifys that lock a verification out', async () => {
      expect((await verifyAfterLockouts()).whileLocking).toBeUndefined()
    })

    it('counts each Verify after MAX_PIN_RETRIES or after PIN_EXPIRED', async () => {
      expect((await verifyAfterLockouts()).f).toMatchObject({ count: 2 })
    })

    it('points its example at the latest such Verify', async () => {
      const { f } = await verifyAfterLockouts()
      expect(await journalEntry(f.example)).toMatchObject({ path: '/subscriptions/verify', message: 'PIN_EXPIRED' })
    })

    it('is not raised by a fresh Init after a lockout', async () => {
      const locked = (await init('60123456003')).body.payload.verif_request_id
      for (let i = 0; i < 4; i++) await verify(locked, '0000')
      expect((await otpFlow('60123456003')).body.status).toBe('SUCCESS')
      expect(await finding('VERIFY_AFTER_LOCKOUT')).toBeUndefined()
    })
  })

  describe('INVALID_REQUEST', () => {
    /** A valid Init, then three merchant calls answered 400 (a number MSISDN, a body not JSON, not JSON at all). */
    async function threeInvalidCalls() {
      await init('60123456001')
      expect((await c.api('/subscriptions/init', { msisdn: 60123456001, service_code: 'STREAMPLUS', country_code: 'my' })).status).toBe(400)
      expect((await c.api('/subscriptions/status', undefined, { raw: '{' })).status).toBe(400)
      expect((await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: { 'content-type': 'text/plain' } })).status).toBe(400)
      return finding('INVALID_REQUEST')
    }

    it('is not raised by a valid call', async () => {
      await init('60123456001')
      expect(await finding('INVALID_REQUEST')).toBeUndefined()
    })

    it('counts each merchant call answered 400', async () => {
      expect((await threeInvalidCalls()).count).toBe(3)
    })

    it('points its example at the latest call answered 400', async () => {
      const f = await threeInvalidCalls()
      expect(await journalEntry(f.example)).toMatchObject({ http_status: 400, path: '/subscriptions/status' })
    })

    it("counts each 400 as its operation's BAD_REQUEST outcome", async () => {
      await threeInvalidCalls()
      expect(counts(await of('demo'))).toEqual({ 'init.otp': 1, 'init.BAD_REQUEST': 1, 'status.BAD_REQUEST': 2 })
    })
  })

  describe('AUTH_FAILURE', () => {
    /** Inits refused: an inactive merchant (401), one off its allowlist (403), an unknown key and none (401). */
    async function refusedCalls() {
      expect((await init('60123456001', 'my', 'STREAMPLUS', 'sandbox-inactive-key')).status).toBe(401)
      expect((await init('60123456001', 'my', 'STREAMPLUS', 'sandbox-offsite-key')).status).toBe(403)
      expect((await init('60123456001', 'my', 'STREAMPLUS', 'no-such-key')).status).toBe(401)
      expect((await c.api('/subscriptions/init', { msisdn: '60123456001' }, { key: null })).status).toBe(401)
      return coverage()
    }

    it('counts a call with an unknown key or none under no merchant', async () => {
      const all = await refusedCalls()
      expect(all.map((m) => m.merchant)).toEqual(['inactive', 'offsite'])
    })

    it('is raised once for each merchant refused, with 401 or 403', async () => {
      for (const m of await refusedCalls()) expect(m.findings).toMatchObject([{ code: 'AUTH_FAILURE', count: 1 }])
    })

    it("counts each refusal as its merchant's UNAUTHORIZED_401 or UNAUTHORIZED_403 outcome", async () => {
      const all = await refusedCalls()
      expect(all.map((m: any) => counts(m))).toEqual([{ 'init.UNAUTHORIZED_401': 1 }, { 'init.UNAUTHORIZED_403': 1 }])
    })

    it('is not raised by the active merchant calling from an allowed address', async () => {
      await refusedCalls()
      await init('60123456001')
      expect(await finding('AUTH_FAILURE')).toBeUndefined()
    })
  })

  describe('FAST_RETRY', () => {
    const body = { msisdn: '60123456150', service_code: 'STREAMPLUS', country_code: 'my' }
    /** A call answered 500, another call, then the first call again at once; answers the finding before and after the retry. */
    async function fastRetry() {
      expect((await c.api('/subscriptions/init', body)).status).toBe(500)
      // Another call after the 500 is no retry.
      await init('60123456001')
      const afterOther = await finding('FAST_RETRY')
      expect((await c.api('/subscriptions/init', body)).status).toBe(500)
      return { afterOther, f: await finding('FAST_RETRY') }
    }

    it('is not raised by another call after a 5xx', async () => {
      expect((await fastRetry()).afterOther).toBeUndefined()
    })

    it('is raised once by the same call again within a second of its 5xx answer', async () => {
      expect((await fastRetry()).f.count).toBe(1)
    })

    it('points its example at the retried call', async () => {
      const { f } = await fastRetry()
      const retried = await journalEntry(f.example)
      expect(retried).toMatchObject({ http_status: 500, request: body })
    })

    it('is not raised by a retry after backing off a second', async () => {
      // FAST_RETRY is defined in wall time: the wait is the server's own (a call it holds back 1.1 s for its 511
      // ending), not the test's.
      expect((await c.api('/subscriptions/init', body)).status).toBe(500)
      expect((await init('60123456511')).body.status).toBe('SUCCESS')
      expect((await c.api('/subscriptions/init', body)).status).toBe(500)
      expect(await finding('FAST_RETRY')).toBeUndefined()
    })
  })

  describe('INIT_WHILE_ACTIVE', () => {
    /** Subscribes 001, then Inits it again; answers the subscription and the finding. */
    async function initWhileActive() {
      const sub = (await otpFlow('60123456001')).body.payload.subscription_id
      const r = await init('60123456001')
      expect(r.body.message).toBe('ALREADY_SUBSCRIBED')
      return { sub, f: await finding('INIT_WHILE_ACTIVE') }
    }

    it('is raised once by an Init answered ALREADY_SUBSCRIBED', async () => {
      expect((await initWhileActive()).f.count).toBe(1)
    })

    it('points its example at the Init answered ALREADY_SUBSCRIBED', async () => {
      const { f } = await initWhileActive()
      expect(await journalEntry(f.example)).toMatchObject({ path: '/subscriptions/init', message: 'ALREADY_SUBSCRIBED' })
    })

    it('is not raised by an Init after the subscription ended', async () => {
      const { sub } = await initWhileActive()
      await c.control('/reset', {})
      const again = (await otpFlow('60123456001')).body.payload.subscription_id
      await c.control(`/subscriptions/${again}/cancel`, {})
      expect((await status(again)).body.payload.status).toBe('CANCELED')
      expect((await init('60123456001')).body.status).toBe('SUCCESS')
      expect(await finding('INIT_WHILE_ACTIVE')).toBeUndefined()
      expect(sub).not.toBe(again)
    })
  })

  describe('UNRECONCILED', () => {
    // Each step's finding, in order: an MO-made subscription, a consent approved, a Verify activated, an hour's
    // renewals, a Status of each changed one, a STOP of the MO-made one.
    const seen: Record<string, any> = {}
    let psms: string
    beforeAll(async () => {
      await c.control('/reset', {})
      psms = (await mo('60133456001', '32123', 'STREAM')).body.subscription_id
      seen.mo = await finding('UNRECONCILED')
      const consent = await form((await init('359881234001', 'bg')).body.payload.redirect_url, 'approve')
      const approved = new URL(consent.headers.get('location')!, c.url).searchParams.get('subscription_id')!
      seen.consent = await finding('UNRECONCILED')
      const expiring = (await otpFlow('60123456301', 'QUICKTEST')).body.payload.subscription_id
      seen.verify = await finding('UNRECONCILED')
      await c.control('/clock/advance', { by: 'PT1H' })
      seen.renewal = await finding('UNRECONCILED')
      seen.renewalExample = await journalEntry(seen.renewal.example)
      await status(approved)
      seen.oneStatus = await finding('UNRECONCILED')
      await status(expiring)
      seen.bothStatus = await finding('UNRECONCILED')
      await mo('60133456001', '32123', 'STOP')
      seen.stop = await finding('UNRECONCILED')
    })

    it('is not raised by a subscription an MO made (the merchant API never gave its id)', () => {
      expect(psms).toMatch(/\w/)
      expect(seen.mo).toBeUndefined()
    })

    it('counts a subscription a consent approved outside the merchant calls', () => {
      expect(seen.consent).toMatchObject({ count: 1 })
    })

    it('does not count a subscription a Verify activated', () => {
      expect(seen.verify.count).toBe(1)
    })

    it('counts a subscription a renewal changed', () => {
      expect(seen.renewal.count).toBe(2)
    })

    it('points its example at the call that changed the latest one', () => {
      expect(seen.renewalExample).toMatchObject({ path: '/_sandbox/clock/advance' })
    })

    it('clears a subscription at each Status of it', () => {
      expect(seen.oneStatus.count).toBe(1)
      expect(seen.bothStatus).toBeUndefined()
    })

    it('is not raised by a STOP of an MO-made subscription', () => {
      expect(seen.stop).toBeUndefined()
    })
  })

  describe('with a request log of 10', () => {
    let small: Client
    const invalid = async () => (await coverage('?merchant=demo', small))[0].findings[0]
    let held: any
    let dropped: any
    let all: any[]
    beforeAll(async () => {
      small = await startClient({ journalSize: 10 })
      await small.api('/subscriptions/init', {}, { raw: '{' })
      held = await invalid()
      for (let i = 0; i < 25; i++) await small.api('/subscriptions/status', { subscription_id: 'nope' })
      dropped = await invalid()
      all = await coverage('', small)
    })
    afterAll(() => small?.close())

    it('points an example at its request while the request log holds it', () => {
      expect(held).toMatchObject({ code: 'INVALID_REQUEST', example: 1 })
    })

    it('reads an example the request log no longer holds as null', () => {
      expect(dropped).toMatchObject({ code: 'INVALID_REQUEST', count: 1, example: null })
    })

    it('counts more calls than the request log holds', () => {
      expect(counts(all[0])).toEqual({ 'init.BAD_REQUEST': 1, 'status.SUBSCRIPTION_NOT_FOUND': 25 })
    })
  })
})

describe('isolation, reset and restart', () => {
  describe('sessions and merchants', () => {
    const a = { 'x-dcb-session': 'cov-a' }
    const b = { 'x-dcb-session': 'cov-b' }
    let inDefault: any[]
    let inA: any[]
    let inB: any[]
    let otherInB: any[]
    let bReset: any[]
    let bResetDemo: any[]
    let aAfterReset: any[]
    beforeAll(async () => {
      await c.control('/reset', {})
      await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: a })
      await c.api('/subscriptions/init', { msisdn: '60123456101', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: b })
      await c.api('/subscriptions/init', { msisdn: '60123456102', service_code: 'NEWSDAILY', country_code: 'my' }, { key: 'sandbox-other-key', headers: b })
      inDefault = await coverage()
      inA = await coverage('', c, a)
      inB = await coverage('', c, b)
      otherInB = await coverage('?merchant=other', c, b)
      // A reset of one session starts its counts over, from the time it starts over at; the other keeps its own.
      await c.control('/reset', { clock: '2027-02-01T00:00:00' }, { headers: b })
      bReset = await coverage('', c, b)
      bResetDemo = await coverage('?merchant=demo', c, b)
      aAfterReset = await coverage('', c, a)
    })
    afterAll(async () => {
      await c.control('/sessions/cov-a', undefined, { method: 'DELETE' })
      await c.control('/sessions/cov-b', undefined, { method: 'DELETE' })
    })

    it('the default session counts no traffic of a named one', () => {
      expect(inDefault).toEqual([])
    })

    it('each session counts its own traffic', () => {
      expect(inA.map((m) => [m.merchant, counts(m)])).toEqual([['demo', { 'init.otp': 1 }]])
    })

    it('each merchant counts its own traffic', () => {
      expect(inB.map((m) => [m.merchant, counts(m)])).toEqual([
        ['demo', { 'init.INVALID_MSISDN': 1 }],
        ['other', { 'init.INVALID_MSISDN_LANDLINE': 1 }],
      ])
    })

    it('?merchant= answers that merchant only', () => {
      expect(counts(otherInB[0])).toEqual({ 'init.INVALID_MSISDN_LANDLINE': 1 })
    })

    it('a reset of one session starts its counts over', () => {
      expect(bReset).toEqual([])
    })

    it('a reset session counts from the time it starts over at', () => {
      expect(bResetDemo[0].since).toBe('2027-02-01T00:00:00.000000')
    })

    it('a reset of one session keeps the counts of another', () => {
      expect(aAfterReset).toHaveLength(1)
    })
  })

  describe('a restart', () => {
    const session = { 'x-dcb-session': 'kept' }
    let cleanup = () => {}
    let s: Client | undefined
    let before: any[][]
    let after: any[][]
    beforeAll(async () => {
      const temp = tempDir()
      cleanup = temp.cleanup
      const data = `${temp.dir}/sandbox.json`
      s = await startClient({ data, clock: '2026-01-31T09:00:00' })
      const sub = await s.subscribe('60123456001')
      await s.api('/subscriptions/status', { subscription_id: sub })
      await s.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: session })
      await s.api('/subscriptions/init', {}, { raw: '{', headers: session })
      before = [await coverage('', s), await coverage('', s, session)]
      await s.close()
      s = undefined
      s = await startClient({ data })
      after = [await coverage('', s), await coverage('', s, session)]
    })
    afterAll(async () => {
      await s?.close()
      cleanup()
    })

    it("keeps every session's coverage, its examples null", () => {
      // The examples pointed into the request log of the server that stopped: null now.
      const noExamples = (list: any[]) => list.map((m) => ({ ...m, findings: m.findings.map((f: any) => ({ ...f, example: null })) }))
      expect(after).toEqual(before.map(noExamples))
    })

    it("keeps the default session's counts, a Status read while it ran included", () => {
      expect(counts(after[0][0])).toEqual({ 'init.otp': 1, 'verify.SUCCESS': 1, 'status.ACTIVE': 1 })
    })

    it("keeps a named session's counts", () => {
      expect(counts(after[1][0])).toEqual({ 'init.otp': 1, 'init.BAD_REQUEST': 1 })
    })

    it("keeps a named session's findings, their example null", () => {
      expect(after[1][0].findings).toMatchObject([{ code: 'INVALID_REQUEST', count: 1, example: null }])
    })

    it('keeps a since timestamp', () => {
      expect(after[0][0].since).toMatch(TIMESTAMP)
    })
  })
})
