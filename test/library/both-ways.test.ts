/**
 * One suite, run both ways: against a sandbox from `createSandbox` (in-process) and against
 * `dcb serve` (the real binary) through `createClient`, one session per test there. A test written
 * against one runs against the other by changing the factory.
 */
import { createServer, type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, createSandbox, SandboxError, type SandboxClient, type Sandbox } from '../../src/index.js'
import { serve, type Served } from '../cli/run.js'

const CLOCK = '2026-01-31T00:00:00'
type Target = Sandbox | SandboxClient

let server: Served | undefined
let sessions = 0
beforeAll(async () => {
  server = await serve(['--in-memory', '--clock', CLOCK])
}, 20_000)
afterAll(async () => {
  await server?.stop()
})

const FACTORIES: [string, () => Promise<Target>][] = [
  ['createSandbox', () => createSandbox({ clock: CLOCK })],
  ['createClient against dcb serve', async () => createClient({ baseUrl: server!.url, session: `both-ways-${++sessions}` })],
]

/** An OTP flow for 60123456011 (init, otp, verify, status), each step checked. */
async function otpFlow(sandbox: Target) {
  const init = await sandbox.init({ msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' })
  expect(init.httpStatus).toBe(200)
  expect(init.envelope.status).toBe('SUCCESS')
  if (init.envelope.status !== 'SUCCESS') return
  const { otp, verif_request_id } = await sandbox.otp('60123456011')
  expect(verif_request_id).toBe(init.envelope.payload.verif_request_id)
  const verified = await sandbox.verify({ verif_request_id, otp })
  expect(verified).toMatchObject({ httpStatus: 200, envelope: { status: 'SUCCESS', message: '' } })
  if (verified.envelope.status !== 'SUCCESS') return
  const status = await sandbox.status({ subscription_id: verified.envelope.payload.subscription_id })
  expect(status.envelope).toMatchObject({ status: 'SUCCESS', payload: { status: 'ACTIVE', msisdn: '60123456011' } })
}

describe.each(FACTORIES)('%s', (_, make) => {
  it('runs an OTP flow: init, otp, verify, status', async () => {
    await otpFlow(await make())
  })

  it('lists the request log of one MSISDN only', async () => {
    const sandbox = await make()
    await otpFlow(sandbox)
    await sandbox.init({ msisdn: '60123456012', service_code: 'STREAMPLUS', country_code: 'my' })
    const journal = await sandbox.requests({ msisdn: '60123456011' })
    expect(journal.requests.map((r) => r.path)).toEqual(['/subscriptions/status', '/subscriptions/verify', '/subscriptions/init'])
  })

  it('answers a failure as the API does, with the reason', async () => {
    const sandbox = await make()
    const r = await sandbox.init({ msisdn: '60123456107', service_code: 'STREAMPLUS', country_code: 'my' })
    expect(r).toMatchObject({ httpStatus: 200, envelope: { status: 'FAIL', message: 'BARRED' } })
    expect(r.reason).toMatch(/107/)
    const bad = await sandbox.status({ subscription_id: 'nope' })
    expect(bad).toMatchObject({ httpStatus: 404, envelope: { status: 'FAIL', message: 'SUBSCRIPTION_NOT_FOUND' } })
  })

  it('throws a control API error as a SandboxError that carries its code (its HTTP status too)', async () => {
    const sandbox = await make()
    const e = await sandbox.subscription('nope').catch((err: unknown) => err)
    expect(e).toBeInstanceOf(SandboxError)
    expect(e).toMatchObject({ code: 'SUBSCRIPTION_NOT_FOUND', status: 404 })
    await expect(sandbox.setTime('2020-01-01T00:00:00')).rejects.toMatchObject({ code: 'CLOCK_BACKWARDS', status: 409 })
  })

  it('approving a consent page redirects 303 to the return URL with SUCCESS', async () => {
    const sandbox = await make()
    const first = await sandbox.init({ msisdn: '359881234001', service_code: 'STREAMPLUS', country_code: 'bg' })
    if (first.envelope.status !== 'SUCCESS') throw new Error(JSON.stringify(first))
    const approved = await sandbox.consent(first.envelope.payload.redirect_url!, 'approve')
    expect(approved.status).toBe(303)
    expect(approved.location).toMatch(/status=SUCCESS/)
  })

  it('denying a consent page redirects 303 to the return URL with FAIL', async () => {
    const sandbox = await make()
    const second = await sandbox.init({ msisdn: '359881234002', service_code: 'STREAMPLUS', country_code: 'bg' })
    if (second.envelope.status !== 'SUCCESS') throw new Error(JSON.stringify(second))
    const denied = await sandbox.consent(second.envelope.payload.redirect_url!, 'deny')
    expect(denied.status).toBe(303)
    expect(denied.location).toMatch(/status=FAIL/)
  })

  it('throws CONSENT_NOT_FOUND for a consent page it never made', async () => {
    const sandbox = await make()
    await expect(sandbox.consent('no-such-consent', 'approve')).rejects.toMatchObject({ code: 'CONSENT_NOT_FOUND' })
  })

  it('renews a subscription when the clock advances a month', async () => {
    const sandbox = await make()
    const r = await sandbox.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' })
    expect(r).toMatchObject({ action: 'subscribed' })
    const moved = await sandbox.advance('P1M')
    expect(moved.events.map((e) => e.type)).toContain('renewed')
  })

  it('keeps the state of a session apart from another', async () => {
    const sandbox = await make()
    const r = await sandbox.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' })
    expect(r).toMatchObject({ action: 'subscribed' })
    const other = sandbox.session(`${sandbox.name}-other`)
    expect((await other.subscriptions()).subscriptions).toEqual([])
    expect((await sandbox.subscriptions({ msisdn: '60133456001' })).subscriptions).toHaveLength(1)
  })
})

describe('createClient against no server', () => {
  it('rejects naming the unreachable URL with its cause, not a bare "fetch failed"', async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as AddressInfo
        s.close(() => resolve(port))
      })
    })
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}` })
    const message = `cannot reach http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port} (is dcb serve running there?)`
    await expect(client.now()).rejects.toThrow(message)
    await expect(client.init({ msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' })).rejects.toThrow(message)
  })
})

describe('createClient with a key or token no HTTP header can carry', () => {
  it('throws BAD_REQUEST naming the option when it is made, not a TypeError of fetch at the first call', () => {
    const made = (opts: { apiKey?: string; adminToken?: string }) => {
      try {
        createClient({ baseUrl: 'http://127.0.0.1:7700', ...opts })
      } catch (e) {
        return e
      }
    }
    const accepted = 'a header carries tab and U+0020 to U+00FF except U+007F (printable ASCII and Latin-1)'
    expect(made({ apiKey: 'ключ' })).toMatchObject({
      code: 'BAD_REQUEST',
      message: `apiKey has a character an HTTP header cannot carry: "к" (U+043A); ${accepted}`,
    })
    expect(made({ adminToken: 'a\nb' })).toMatchObject({
      code: 'BAD_REQUEST',
      message: `adminToken has a character an HTTP header cannot carry: "\\n" (U+000A); ${accepted}`,
    })
    expect(made({ apiKey: 'sandbox-demo-key', adminToken: 'token with spaces' })).toBeUndefined()
    // Latin-1 is carried, as the message says.
    expect(made({ apiKey: 'clé', adminToken: 'tab\tµ' })).toBeUndefined()
  })
})
