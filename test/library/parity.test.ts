/**
 * Byte parity: one call sequence (success and every error class) through `dcb serve` over loopback,
 * through `sandbox.fetch` and through the msw handlers gives the same status, content type, the
 * headers that matter and the same body bytes. The clock is frozen; ids are random (UUIDs), so each
 * transcript names them in order of first appearance (`<id1>`, ...) and the base URL as `<base>`.
 */
import { setupServer } from 'msw/node'
import { beforeAll, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/index.js'
import { sandboxHandlers } from '../../src/msw.js'
import { startSandbox } from '../../src/server.js'

const CLOCK = '2026-01-31T00:00:00'
const JSON_H = { 'content-type': 'application/json' }
const H = { 'api-key': 'sandbox-demo-key', ...JSON_H }
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g

type Fetch = (url: string, init?: RequestInit) => Promise<Response>

interface Step {
  name: string
  status: number
  type: string | null
  location?: string | null
  allow?: string | null
  reason: string | null
  body: string
}

/** Runs the sequence against one target; answers the transcript with ids and the base URL named. */
async function transcript(base: string, fetchIn: Fetch): Promise<Step[]> {
  const steps: Step[] = []
  const ids = new Map<string, string>()
  // The path of a base URL (msw's `https://api.carrier.test/dcb`) prefixes the paths the sandbox links to
  // (the consent form's action, the return page): named away like the base.
  const prefix = new URL(base).pathname.replace(/\/+$/, '')
  const name = (text: string) =>
    text
      .split(base)
      .join('<base>')
      .split(prefix ? `${prefix}/` : '\0')
      .join('/')
      .replace(UUID, (id) => {
        if (!ids.has(id)) ids.set(id, `<id${ids.size + 1}>`)
        return ids.get(id)!
      })
  const call = async (step: string, path: string, init: RequestInit = {}, rewrite?: (body: string) => string): Promise<string> => {
    const res = await fetchIn(path.startsWith('http') ? path : base + path, { redirect: 'manual', ...init })
    const body = await res.text()
    steps.push({
      name: step,
      status: res.status,
      type: res.headers.get('content-type'),
      location: res.headers.get('location') && name(res.headers.get('location')!),
      allow: res.headers.get('allow'),
      // A wrong OTP is made from the right one, which is random: named like the ids.
      reason: res.headers.get('x-dcb-reason') && name(res.headers.get('x-dcb-reason')!).replace(/otp "\d{4}"/, 'otp "<wrong>"'),
      body: name(rewrite ? rewrite(body) : body),
    })
    return body
  }
  const post = (path: string, body: unknown, headers: Record<string, string> = H): RequestInit => ({
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const init = (msisdn: string, extra: Record<string, unknown> = {}) =>
    post('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my', ...extra })

  // The OTP flow, with a wrong OTP first.
  const started = JSON.parse(await call('init', '/subscriptions/init', init('60123456011')))
  const verif = started.payload.verif_request_id as string
  let otp = ''
  await call('otp', '/_sandbox/otp?msisdn=60123456011', {}, (body) => {
    const o = JSON.parse(body)
    otp = o.otp
    return JSON.stringify({ ...o, otp: '<otp>', text: o.text.replace(o.otp, '<otp>') })
  })
  const wrong = String((Number(otp) + 1) % 10_000).padStart(4, '0')
  await call('verify wrong OTP', '/subscriptions/verify', post('/subscriptions/verify', { verif_request_id: verif, otp: wrong }))
  const verified = JSON.parse(await call('verify', '/subscriptions/verify', post('/subscriptions/verify', { verif_request_id: verif, otp })))
  const sub = verified.payload.subscription_id as string
  await call('verify again', '/subscriptions/verify', post('/subscriptions/verify', { verif_request_id: verif, otp }))
  await call('status', '/subscriptions/status', post('/subscriptions/status', { subscription_id: sub }))
  await call(
    'status of another merchant',
    '/subscriptions/status',
    post('/subscriptions/status', { subscription_id: sub }, { ...H, 'api-key': 'sandbox-other-key' }),
  )
  await call('init already subscribed', '/subscriptions/init', init('60123456011'))

  // Every error class before the engine.
  await call('400 bad JSON', '/subscriptions/init', post('/subscriptions/init', '{"msisdn":'))
  await call('400 schema', '/subscriptions/init', init('60123456011', { country_code: 'GB' }))
  await call(
    '400 content type',
    '/subscriptions/init',
    post('/subscriptions/init', { msisdn: '60123456011' }, { 'api-key': 'sandbox-demo-key', 'content-type': 'text/plain' }),
  )
  await call('401 no key', '/subscriptions/init', post('/subscriptions/init', {}, JSON_H))
  await call('401 inactive', '/subscriptions/init', post('/subscriptions/init', {}, { ...JSON_H, 'api-key': 'sandbox-inactive-key' }))
  await call('403 allowlist', '/subscriptions/init', post('/subscriptions/init', {}, { ...JSON_H, 'api-key': 'sandbox-offsite-key' }))
  await call('403 not configured', '/subscriptions/init', init('359871234011', { service_code: 'GAMECLUB', country_code: 'bg' }))
  await call('404 path', '/subscriptions/list', post('/subscriptions/list', {}))
  await call('405 GET', '/subscriptions/init')
  await call('405 PUT', '/subscriptions/status', { method: 'PUT', headers: H, body: '{}' })
  await call('413', '/subscriptions/init', post('/subscriptions/init', JSON.stringify({ pad: 'x'.repeat(70_000) })))
  await call('400 bad session', '/subscriptions/status', post('/subscriptions/status', { subscription_id: 'x' }, { ...H, 'x-dcb-session': 'no way' }))

  // Carrier failures and magic endings.
  await call('init INVALID_MSISDN', '/subscriptions/init', init('6012345'))
  await call('init landline', '/subscriptions/init', init('6031234567'))
  await call('init BLACKLISTED (106)', '/subscriptions/init', init('60123456106'))
  await call('init HTTP 500 (150)', '/subscriptions/init', init('60123456150'))
  const failing = JSON.parse(await call('init 201', '/subscriptions/init', init('60123456201')))
  const otp201 = JSON.parse(await (await fetchIn(`${base}/_sandbox/otp?msisdn=60123456201`)).text()).otp
  await call(
    'verify INSUFFICIENT_FUNDS (201)',
    '/subscriptions/verify',
    post('/subscriptions/verify', { verif_request_id: failing.payload.verif_request_id, otp: otp201 }),
  )
  await call('init delayed 100 ms (501)', '/subscriptions/init', init('60123456501'))

  // PSMS and redirect flows, the control API, pages.
  await call('init PSMS', '/subscriptions/init', init('60133456011'))
  await call('mo', '/_sandbox/mo', post('/_sandbox/mo', { msisdn: '60133456011', short_code: '32123', text: 'STREAM' }, JSON_H))
  const redirect = JSON.parse(await call('init redirect', '/subscriptions/init', init('359881234011', { country_code: 'bg' })))
  await call('consent page', redirect.payload.redirect_url)
  await call('consent approve', redirect.payload.redirect_url, post('', 'action=approve', { 'content-type': 'application/x-www-form-urlencoded' }))
  await call('consent used', redirect.payload.redirect_url)
  await call('clock advance', '/_sandbox/clock/advance', post('/_sandbox/clock/advance', { by: 'P1M' }, JSON_H))
  await call('subscriptions', '/_sandbox/subscriptions')
  await call('control 404', `/_sandbox/subscriptions/nope`)
  await call('control 400', '/_sandbox/clock/advance', post('/_sandbox/clock/advance', { by: 'soon' }, JSON_H))
  await call('control 405', '/_sandbox/clock/advance')
  await call('sessions', '/_sandbox/sessions')
  await call('scenarios', '/_sandbox/scenarios')
  await call('front page', '/')
  await call('openapi', '/openapi.json')
  await call('reset', '/_sandbox/reset', post('/_sandbox/reset', {}, JSON_H))
  return steps
}

describe('byte parity: dcb serve, sandbox.fetch and msw answer the same', () => {
  let overSocket: Step[]
  let inProcess: Step[]
  let viaMsw: Step[]
  // The three transcripts are taken once; each test compares or checks its part.
  beforeAll(async () => {
    const served = await startSandbox({ port: 0, inMemory: true, clock: CLOCK, onError: () => {} })
    try {
      overSocket = await transcript(served.url, (url, init) => fetch(url, init))
    } finally {
      await served.close()
    }

    const sandbox = await createSandbox({ clock: CLOCK })
    inProcess = await transcript('http://localhost', (url, init) => sandbox.fetch(url, init))

    const mocked = await createSandbox({ clock: CLOCK })
    const server = setupServer(...sandboxHandlers(mocked, { baseUrl: 'https://api.carrier.test/dcb' }))
    server.listen({ onUnhandledRequest: 'error' })
    try {
      viaMsw = await transcript('https://api.carrier.test/dcb', (url, init) => fetch(url, init))
    } finally {
      server.close()
    }
  }, 30_000)

  it('the sequence covers over 40 steps, every status class the API answers', () => {
    expect(overSocket.length).toBeGreaterThan(40)
    expect(overSocket.map((s) => s.status)).toEqual(expect.arrayContaining([200, 303, 400, 401, 403, 404, 405, 410, 413, 500]))
  })

  it('every FAIL envelope says why (X-DCB-Reason)', () => {
    expect(overSocket.filter((s) => s.body.includes('"status":"FAIL"')).every((s) => s.reason)).toBe(true)
  })

  it('sandbox.fetch gives what dcb serve gives: status, content type, location, X-DCB-Reason, body bytes (ids named in order)', () => {
    expect(inProcess).toEqual(overSocket)
  })

  it('msw gives what dcb serve gives: status, content type, location, X-DCB-Reason, body bytes (ids named in order)', () => {
    expect(viaMsw).toEqual(overSocket)
  })
})
