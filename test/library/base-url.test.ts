/**
 * `createSandbox({ baseUrl })`: `sandbox.fetch` serves a base URL with a path as the msw handlers do.
 * Without it, `sandbox.fetch('https://x/v1/subscriptions/init')` answered 404 NOT_FOUND where msw
 * strips the path; a request outside the base is refused by name, before anything is sent.
 */
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox, SandboxError, type Sandbox } from '../../src/index.js'
import { sandboxHandlers } from '../../src/msw.js'

const BASE = 'https://gw.carrier.test/dcb/v1'
const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const OTP_INIT = { msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' }
const REDIRECT_INIT = { msisdn: '359881234011', service_code: 'STREAMPLUS', country_code: 'bg' }
const post = (body: unknown): RequestInit => ({ method: 'POST', headers: H, body: JSON.stringify(body) })
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'answered',
    (e: unknown) => (e instanceof SandboxError ? `${e.code}: ${e.message}` : String(e)),
  )

describe('createSandbox({ baseUrl }): fetch under a base URL with a path', () => {
  let sandbox: Sandbox
  beforeAll(async () => {
    sandbox = await createSandbox({ clock: '2026-01-31T00:00:00', baseUrl: `${BASE}/` })
  })
  afterAll(() => sandbox.close())

  it('answers a request under the base with the prefix removed: the OTP flow, a query, a Request', async () => {
    const started = await sandbox.fetch(`${BASE}/subscriptions/init`, post(OTP_INIT))
    expect(started.status).toBe(200)
    const { payload } = (await started.json()) as { payload: { verif_request_id: string } }
    const { otp } = await sandbox.otp(OTP_INIT.msisdn)
    const verified = await sandbox.fetch(new Request(`${BASE}/subscriptions/verify`, post({ verif_request_id: payload.verif_request_id, otp })))
    expect(((await verified.json()) as { status: string }).status).toBe('SUCCESS')
    const listed = await sandbox.fetch(`${BASE}/_sandbox/subscriptions?msisdn=${OTP_INIT.msisdn}`)
    expect(((await listed.json()) as { subscriptions: unknown[] }).subscriptions).toHaveLength(1)
    expect((await sandbox.requests()).requests.map((r) => r.path)).toEqual(['/subscriptions/verify', '/subscriptions/init'])
    await sandbox.reset()
  })

  it('answers as the msw handlers of the same base do, byte for byte', async () => {
    const server = setupServer(...sandboxHandlers(sandbox, { baseUrl: BASE }))
    server.listen({ onUnhandledRequest: 'error' })
    try {
      for (const [path, init] of [
        ['/subscriptions/init', { method: 'GET' }],
        ['/subscriptions/status', post({ subscription_id: 'nope' })],
        ['/nope?x=1', { method: 'DELETE' }],
        ['/_sandbox/clock', {}],
      ] as const) {
        const [a, b] = await Promise.all([sandbox.fetch(BASE + path, init), fetch(BASE + path, init)])
        expect([a.status, a.headers.get('content-type'), await a.text()]).toEqual([b.status, b.headers.get('content-type'), await b.text()])
      }
    } finally {
      server.close()
    }
  })

  it("keeps the links it makes under the base: redirect_url, the consent form's action, the 303; init() goes there too", async () => {
    const started = await sandbox.fetch(`${BASE}/subscriptions/init`, post(REDIRECT_INIT))
    const { payload } = (await started.json()) as { payload: { redirect_url: string } }
    expect(payload.redirect_url.startsWith(`${BASE}/consent/`)).toBe(true)
    const page = await (await sandbox.fetch(payload.redirect_url)).text()
    expect(page).toContain('action="/dcb/v1/consent/')
    const { location } = await sandbox.consent(payload.redirect_url, 'approve')
    expect(location?.startsWith('/dcb/v1/_sandbox/return?')).toBe(true)
    const again = await sandbox.init({ ...REDIRECT_INIT, msisdn: '359881234012' })
    expect(again.envelope.status === 'SUCCESS' && again.envelope.payload.redirect_url?.startsWith(`${BASE}/consent/`)).toBe(true)
    await sandbox.reset()
  })

  it('refuses a URL outside the base (another origin, another path, a longer segment) before sending it, naming both URLs', async () => {
    for (const url of ['https://other.test/dcb/v1/subscriptions/init', 'https://gw.carrier.test/dcb/v2/subscriptions/init', `${BASE}0/subscriptions/init`])
      expect(await refusal(sandbox.fetch(url, post(OTP_INIT)))).toBe(
        `BAD_REQUEST: sandbox.fetch: ${url} is not under the sandbox's baseUrl ${BASE} (createSandbox({ baseUrl })): address it as ${BASE}/…`,
      )
    expect((await sandbox.requests()).requests).toEqual([])
  })

  it('refuses a Request outside the base before sending it, naming its URL', async () => {
    expect(await refusal(sandbox.fetch(new Request('http://localhost/subscriptions/init', post(OTP_INIT))))).toMatch(
      /^BAD_REQUEST: sandbox\.fetch: http:\/\/localhost\//,
    )
    expect((await sandbox.requests()).requests).toEqual([])
  })

  it('a session of the sandbox serves the same base', async () => {
    const w1 = sandbox.session('w1')
    expect((await w1.fetch(`${BASE}/subscriptions/init`, post(OTP_INIT))).status).toBe(200)
    expect((await w1.otp(OTP_INIT.msisdn)).msisdn).toBe(OTP_INIT.msisdn)
    await expect(sandbox.otp(OTP_INIT.msisdn)).rejects.toMatchObject({ code: 'NO_OTP' })
    expect(await refusal(w1.fetch('https://other.test/subscriptions/init', post(OTP_INIT)))).toMatch(/not under the sandbox's baseUrl/)
  })

  describe('at an origin alone', () => {
    let rooted: Sandbox
    beforeAll(async () => {
      rooted = await createSandbox({ baseUrl: 'https://api.carrier.test' })
    })
    afterAll(() => rooted.close())

    it('answers every path of it', async () => {
      expect((await rooted.fetch('https://api.carrier.test/subscriptions/init', post(OTP_INIT))).status).toBe(200)
    })

    it('refuses another origin (another port)', async () => {
      expect(await refusal(rooted.fetch('https://api.carrier.test:8443/subscriptions/init', post(OTP_INIT)))).toMatch(
        /not under the sandbox's baseUrl https:\/\/api\.carrier\.test /,
      )
    })
  })
})

describe('baseUrl is checked by one rule in createSandbox and sandboxHandlers', () => {
  const cases: [unknown, string][] = [
    [5, "baseUrl must be an http(s) URL such as 'https://api.carrier.test/v1' (got number)"],
    ['/dcb/v1', `baseUrl "/dcb/v1" is not an absolute URL: give an http(s) URL such as 'https://api.carrier.test/v1'`],
    ['ftp://gw.test/v1', `baseUrl "ftp://gw.test/v1" must be http(s), e.g. 'https://api.carrier.test/v1'`],
    ['https://gw.test/v1?env=test', `baseUrl "https://gw.test/v1?env=test" has a query or fragment: give the origin and path only, e.g. 'https://gw.test/v1'`],
    ['https://gw.test/v1#x', `baseUrl "https://gw.test/v1#x" has a query or fragment: give the origin and path only, e.g. 'https://gw.test/v1'`],
    ['https://u:p@gw.test/v1', 'baseUrl "https://u:p@gw.test/v1" has credentials: give the origin and path only'],
  ]

  it('createSandbox refuses a baseUrl that is not an http(s) base URL, by name (BAD_REQUEST)', async () => {
    for (const [baseUrl, text] of cases) expect(await refusal(createSandbox({ baseUrl: baseUrl as string }))).toBe(`BAD_REQUEST: createSandbox: ${text}`)
  })

  it('sandboxHandlers refuses the same ones in the same words (a TypeError, as its other options)', async () => {
    const sandbox = await createSandbox()
    for (const [baseUrl, text] of cases)
      expect(() => sandboxHandlers(sandbox, { baseUrl: baseUrl as string })).toThrow(new TypeError(`sandboxHandlers: ${text}`))
    await sandbox.close()
  })
})
