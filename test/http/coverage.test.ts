import { describe, expect, it } from 'vitest'
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
  it('starts empty: no merchant has traffic; a merchant asked for has every outcome at zero, no findings', async () => {
    expect(await coverage()).toEqual([])
    const m = await of('demo')
    expect(m).toMatchObject({ merchant: 'demo', since: '2026-01-31T09:00:00.000000', covered: 0, total: m.outcomes.length, percent: 0, findings: [] })
    // Derived from the engine's tables and the world: each once, each unseen one with how to produce it.
    const ids = m.outcomes.map((o: any) => o.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual(
      expect.arrayContaining(['init.otp', 'init.BAD_REQUEST', 'init.MERCHANT_SERVICE_NOT_CONFIGURED', 'status.ERROR_500', 'retry.failed', 'client.gone']),
    )
    expect(m.outcomes.every((o: any) => o.count === 0 && typeof o.how === 'string' && o.how.length > 0)).toBe(true)
    expect(m.outcomes.find((o: any) => o.id === 'verify.INSUFFICIENT_FUNDS').how).toBe('Verify (after Init) for a number ending 201 (rule charge-201)')
    const bad = await c.control('/coverage?merchant=nobody')
    expect(bad).toMatchObject({ status: 404, body: { error: 'MERCHANT_NOT_FOUND' } })
    expect((await c.control('/coverage?merchant=')).status).toBe(400)
  })

  it('counts every outcome reached through HTTP (magic endings, rules, the clock), exactly', async () => {
    // Init: the three flows, every failure ending, HTTP 500.
    expect((await init('60123456001')).body.status).toBe('SUCCESS')
    expect((await init('60133456001')).body.status).toBe('SUCCESS')
    expect((await init('359881234001', 'bg')).body.status).toBe('SUCCESS')
    const initCodes = ['INVALID_MSISDN', 'INVALID_MSISDN_LANDLINE', 'CARRIER_NOT_SUPPORTED', 'FAILED_INIT_SUB', 'NOT_ALLOWED_CHANNEL', 'BLACKLISTED', 'BARRED']
    initCodes.push('NOT_ELIGIBLE', 'INVALID_USER', 'ERROR')
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
    const chargeCodes = ['INSUFFICIENT_FUNDS', 'BLACKLISTED', 'BARRED', 'NOT_ELIGIBLE', 'INVALID_USER', 'ALREADY_SUBSCRIBED']
    chargeCodes.push('SPENDING_LIMIT_REACHED', 'TRX_COUNT_REACHED', 'TRX_LIMIT_EXCEEDED', 'ERROR')
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

    const m = await of('demo')
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
    // QUICKTEST renews hourly: 005 and 401 renew every hour for a day and an hour (401 until the carrier cancels it
    // a day after activation); 302 fails its first renewal, and its retry a day later succeeds.
    const got = counts(m)
    expect(got['renewal.failed']).toBe(2)
    expect(m.outcomes.find((o: any) => o.id === 'renewal.failed').codes).toEqual({ INSUFFICIENT_FUNDS: 2 })
    expect(got['retry.succeeded']).toBe(1)
    expect(got['retry.failed']).toBeGreaterThanOrEqual(1)
    expect(m.outcomes.find((o: any) => o.id === 'retry.failed').codes).toEqual({ INSUFFICIENT_FUNDS: got['retry.failed'] })
    expect(got['carrier.canceled']).toBe(1)
    expect(got['renewal.succeeded']).toBe(25 + 23)
    ;(delete got['renewal.failed'], delete got['retry.succeeded'], delete got['carrier.canceled'], delete got['renewal.succeeded'], delete got['retry.failed'])
    expect(got).toEqual(expected)
    // The three 400s, the Init for an active subscription, and three subscriptions changed with no Status since (the
    // consent, the cancellation, 301's failed renewal).
    expect(findings(m)).toEqual({ INVALID_REQUEST: 3, INIT_WHILE_ACTIVE: 1, UNRECONCILED: 3 })
    expect(m.covered).toBe(m.total)
    expect(m.outcomes.some((o: any) => 'how' in o)).toBe(false)
    expect(m.percent).toBe(100)
    expect(m.since).toBe('2026-01-31T09:00:00.000000')
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

  it('LOST_ACTIVATION: a Verify that activated while its client had gone; not when the client waits for the answer', async () => {
    const msisdn = '60123456505' // answers held back 500 ms
    const first = (await init(msisdn)).body.payload.verif_request_id
    expect(await finding('LOST_ACTIVATION')).toBeUndefined()
    const entry = await abandon('/subscriptions/verify', { verif_request_id: first, otp: await otpOf(msisdn) }, async () => {
      return (await c.control(`/subscriptions?msisdn=${msisdn}`)).body.subscriptions.length === 1
    })
    expect(entry).toMatchObject({ path: '/subscriptions/verify', client_closed: true })
    const lost = await finding('LOST_ACTIVATION')
    expect(lost).toMatchObject({ code: 'LOST_ACTIVATION', count: 1, example: entry.id })
    // The advice names how long the lost answer took: the timeout to keep above.
    expect(lost.advice).toMatch(new RegExp(`^${FINDING_ADVICE.LOST_ACTIVATION.replace(/[.()]/g, '\\$&')} The slowest lost answer here took \\d+ ms\\.$`))
    expect(counts(await of('demo'))['client.gone']).toBe(1)
    // Waiting for the held-back answer is fine.
    await c.control('/reset', {})
    expect((await otpFlow(msisdn)).body.status).toBe('SUCCESS')
    expect(await finding('LOST_ACTIVATION')).toBeUndefined()
  })

  it('VERIFY_AFTER_LOCKOUT: a Verify after MAX_PIN_RETRIES or after PIN_EXPIRED; not a fresh Init after either', async () => {
    const id = (await init('60123456001')).body.payload.verif_request_id
    for (let i = 0; i < 4; i++) await verify(id, '0000')
    expect(await finding('VERIFY_AFTER_LOCKOUT')).toBeUndefined()
    const again = await verify(id, await otpOf('60123456001'))
    expect(again.body.message).toBe('MAX_PIN_RETRIES')
    const used = (await otpFlow('60123456002')).body
    expect(used.status).toBe('SUCCESS')
    const usedId = (await c.control('/otp?msisdn=60123456002')).body.verif_request_id
    expect((await verify(usedId, '1234')).body.message).toBe('PIN_EXPIRED')
    expect((await verify(usedId, '1234')).body.message).toBe('PIN_EXPIRED')
    const f = await finding('VERIFY_AFTER_LOCKOUT')
    expect(f).toMatchObject({ count: 2 })
    expect(await journalEntry(f.example)).toMatchObject({ path: '/subscriptions/verify', message: 'PIN_EXPIRED' })
    await c.control('/reset', {})
    const locked = (await init('60123456003')).body.payload.verif_request_id
    for (let i = 0; i < 4; i++) await verify(locked, '0000')
    expect((await otpFlow('60123456003')).body.status).toBe('SUCCESS')
    expect(await finding('VERIFY_AFTER_LOCKOUT')).toBeUndefined()
  })

  it('INVALID_REQUEST: a merchant call answered 400; not a valid call', async () => {
    await init('60123456001')
    expect(await finding('INVALID_REQUEST')).toBeUndefined()
    expect((await c.api('/subscriptions/init', { msisdn: 60123456001, service_code: 'STREAMPLUS', country_code: 'my' })).status).toBe(400)
    expect((await c.api('/subscriptions/status', undefined, { raw: '{' })).status).toBe(400)
    expect((await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: { 'content-type': 'text/plain' } })).status).toBe(400)
    const f = await finding('INVALID_REQUEST')
    expect(f.count).toBe(3)
    expect(await journalEntry(f.example)).toMatchObject({ http_status: 400, path: '/subscriptions/status' })
    // Each 400 is also its operation's BAD_REQUEST outcome.
    expect(counts(await of('demo'))).toEqual({ 'init.otp': 1, 'init.BAD_REQUEST': 1, 'status.BAD_REQUEST': 2 })
  })

  it('AUTH_FAILURE: 401 to an inactive merchant, 403 to an address off the allowlist; an unknown key counts nowhere', async () => {
    expect((await init('60123456001', 'my', 'STREAMPLUS', 'sandbox-inactive-key')).status).toBe(401)
    expect((await init('60123456001', 'my', 'STREAMPLUS', 'sandbox-offsite-key')).status).toBe(403)
    expect((await init('60123456001', 'my', 'STREAMPLUS', 'no-such-key')).status).toBe(401)
    expect((await c.api('/subscriptions/init', { msisdn: '60123456001' }, { key: null })).status).toBe(401)
    const all = await coverage()
    expect(all.map((m) => m.merchant)).toEqual(['inactive', 'offsite'])
    for (const m of all) expect(m.findings).toMatchObject([{ code: 'AUTH_FAILURE', count: 1 }])
    // A refused merchant's outcomes are its refusals: 401 for the inactive one, 403 for the one off its allowlist.
    expect(all.map((m: any) => counts(m))).toEqual([{ 'init.UNAUTHORIZED_401': 1 }, { 'init.UNAUTHORIZED_403': 1 }])
    // The active merchant's calls from an allowed address raise nothing.
    await init('60123456001')
    expect(await finding('AUTH_FAILURE')).toBeUndefined()
  })

  it('FAST_RETRY: the same call again within a second of its 5xx answer; not a retry after backing off, nor another call', async () => {
    const body = { msisdn: '60123456150', service_code: 'STREAMPLUS', country_code: 'my' }
    expect((await c.api('/subscriptions/init', body)).status).toBe(500)
    // Another call after the 500 is no retry.
    await init('60123456001')
    expect(await finding('FAST_RETRY')).toBeUndefined()
    expect((await c.api('/subscriptions/init', body)).status).toBe(500)
    const f = await finding('FAST_RETRY')
    expect(f.count).toBe(1)
    const retried = await journalEntry(f.example)
    expect(retried).toMatchObject({ http_status: 500, request: body })
    // Backing off a second is a good retry. FAST_RETRY is defined in wall time: the wait is the server's own
    // (a call it holds back 1.1 s for its 511 ending), not the test's.
    await c.control('/reset', {})
    expect((await c.api('/subscriptions/init', body)).status).toBe(500)
    expect((await init('60123456511')).body.status).toBe('SUCCESS')
    expect((await c.api('/subscriptions/init', body)).status).toBe(500)
    expect(await finding('FAST_RETRY')).toBeUndefined()
  })

  it('INIT_WHILE_ACTIVE: an Init answered ALREADY_SUBSCRIBED; not an Init after the subscription ended', async () => {
    const sub = (await otpFlow('60123456001')).body.payload.subscription_id
    const r = await init('60123456001')
    expect(r.body.message).toBe('ALREADY_SUBSCRIBED')
    const f = await finding('INIT_WHILE_ACTIVE')
    expect(f.count).toBe(1)
    expect(await journalEntry(f.example)).toMatchObject({ path: '/subscriptions/init', message: 'ALREADY_SUBSCRIBED' })
    await c.control('/reset', {})
    const again = (await otpFlow('60123456001')).body.payload.subscription_id
    await c.control(`/subscriptions/${again}/cancel`, {})
    expect((await status(again)).body.payload.status).toBe('CANCELED')
    expect((await init('60123456001')).body.status).toBe('SUCCESS')
    expect(await finding('INIT_WHILE_ACTIVE')).toBeUndefined()
    expect(sub).not.toBe(again)
  })

  it('UNRECONCILED: subscriptions changed outside the merchant calls with no Status since; a Status clears each', async () => {
    // An MO-made subscription: the merchant API never gave its id, so no Status could clear it and it is no finding.
    const psms = (await mo('60133456001', '32123', 'STREAM')).body.subscription_id
    expect(psms).toMatch(/\w/)
    expect(await finding('UNRECONCILED')).toBeUndefined()
    const consent = await form((await init('359881234001', 'bg')).body.payload.redirect_url, 'approve')
    const approved = new URL(consent.headers.get('location')!, c.url).searchParams.get('subscription_id')!
    let f = await finding('UNRECONCILED')
    expect(f).toMatchObject({ count: 1 })
    const expiring = (await otpFlow('60123456301', 'QUICKTEST')).body.payload.subscription_id
    expect((await finding('UNRECONCILED')).count).toBe(1)
    await c.control('/clock/advance', { by: 'PT1H' })
    f = await finding('UNRECONCILED')
    expect(f.count).toBe(2)
    expect(await journalEntry(f.example)).toMatchObject({ path: '/_sandbox/clock/advance' })
    await status(approved)
    expect((await finding('UNRECONCILED')).count).toBe(1)
    await status(expiring)
    expect(await finding('UNRECONCILED')).toBeUndefined()
    // A STOP of the MO-made one is no finding either.
    await mo('60133456001', '32123', 'STOP')
    expect(await finding('UNRECONCILED')).toBeUndefined()
  })

  it('an example the request log no longer holds reads as null; counts are not bounded by the request log', async () => {
    const small = await startClient({ journalSize: 10 })
    try {
      await small.api('/subscriptions/init', {}, { raw: '{' })
      const invalid = async () => (await coverage('?merchant=demo', small))[0].findings[0]
      expect(await invalid()).toMatchObject({ code: 'INVALID_REQUEST', example: 1 })
      for (let i = 0; i < 25; i++) await small.api('/subscriptions/status', { subscription_id: 'nope' })
      expect(await invalid()).toMatchObject({ code: 'INVALID_REQUEST', count: 1, example: null })
      expect(counts((await coverage('', small))[0])).toEqual({ 'init.BAD_REQUEST': 1, 'status.SUBSCRIPTION_NOT_FOUND': 25 })
    } finally {
      await small.close()
    }
  })
})

describe('isolation, reset and restart', () => {
  it('each session and each merchant counts its own traffic', async () => {
    const a = { 'x-dcb-session': 'cov-a' }
    const b = { 'x-dcb-session': 'cov-b' }
    await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: a })
    await c.api('/subscriptions/init', { msisdn: '60123456101', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: b })
    await c.api('/subscriptions/init', { msisdn: '60123456102', service_code: 'NEWSDAILY', country_code: 'my' }, { key: 'sandbox-other-key', headers: b })
    expect(await coverage()).toEqual([])
    const inA = await coverage('', c, a)
    expect(inA.map((m) => [m.merchant, counts(m)])).toEqual([['demo', { 'init.otp': 1 }]])
    const inB = await coverage('', c, b)
    expect(inB.map((m) => [m.merchant, counts(m)])).toEqual([
      ['demo', { 'init.INVALID_MSISDN': 1 }],
      ['other', { 'init.INVALID_MSISDN_LANDLINE': 1 }],
    ])
    expect(counts((await coverage('?merchant=other', c, b))[0])).toEqual({ 'init.INVALID_MSISDN_LANDLINE': 1 })
    // A reset of one session starts its counts over, from the time it starts over at; the other keeps its own.
    await c.control('/reset', { clock: '2027-02-01T00:00:00' }, { headers: b })
    expect(await coverage('', c, b)).toEqual([])
    expect((await coverage('?merchant=demo', c, b))[0].since).toBe('2027-02-01T00:00:00.000000')
    expect(await coverage('', c, a)).toHaveLength(1)
    await c.control('/sessions/cov-a', undefined, { method: 'DELETE' })
    await c.control('/sessions/cov-b', undefined, { method: 'DELETE' })
  })

  it('counts survive a restart (the default session and a named one); a read counted while it ran is kept too', async () => {
    const { dir, cleanup } = tempDir()
    const data = `${dir}/sandbox.json`
    try {
      let s = await startClient({ data, clock: '2026-01-31T09:00:00' })
      const session = { 'x-dcb-session': 'kept' }
      const sub = await s.subscribe('60123456001')
      await s.api('/subscriptions/status', { subscription_id: sub })
      await s.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: session })
      await s.api('/subscriptions/init', {}, { raw: '{', headers: session })
      const before = [await coverage('', s), await coverage('', s, session)]
      await s.close()
      s = await startClient({ data })
      const after = [await coverage('', s), await coverage('', s, session)]
      // The examples pointed into the request log of the server that stopped: null now.
      const noExamples = (list: any[]) => list.map((m) => ({ ...m, findings: m.findings.map((f: any) => ({ ...f, example: null })) }))
      expect(after).toEqual(before.map(noExamples))
      expect(counts(after[0][0])).toEqual({ 'init.otp': 1, 'verify.SUCCESS': 1, 'status.ACTIVE': 1 })
      expect(counts(after[1][0])).toEqual({ 'init.otp': 1, 'init.BAD_REQUEST': 1 })
      expect(after[1][0].findings).toMatchObject([{ code: 'INVALID_REQUEST', count: 1, example: null }])
      expect(after[0][0].since).toMatch(TIMESTAMP)
      await s.close()
    } finally {
      cleanup()
    }
  })
})
