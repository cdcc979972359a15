/**
 * What a merchant's own test suite hits with the library (issue 23): `sandbox.fetch` and the msw
 * handlers honour AbortSignal as global fetch does, a request given up is kept in the request log as a client that
 * went away; with an msw base URL with a path every link the sandbox makes stays under it; the
 * consent redirect carries the same parameters on approve and on deny; errors name library calls.
 */
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createClient, createSandbox, SandboxError, type Sandbox } from '../../src/index.js'
import { startClient } from '../helpers.js'
import { sandboxHandlers } from '../../src/msw.js'

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
/** Ending 599: every answer about this MSISDN is held back 9.9 s (the carrier is slow). */
const SLOW = '60123456599'
const initBody = (msisdn: string, country = 'my') => JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: country })

let sandbox: Sandbox
beforeAll(async () => {
  sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
})
beforeEach(() => sandbox.reset())

/** Starts a slow Init with this signal; resolves once the sandbox has done the work (the OTP was sent) and holds the answer. */
async function slowInit(send: (signal: AbortSignal) => Promise<Response>, controller: AbortController): Promise<{ answer: Promise<Response> }> {
  const answer = send(controller.signal)
  answer.catch(() => {})
  await sandbox.otp(SLOW, { wait: 5 })
  return { answer }
}

describe('sandbox.fetch honours AbortSignal', () => {
  const url = 'http://localhost/subscriptions/init'

  it('a signal already aborted, given in init, rejects with its reason before reaching the sandbox', async () => {
    const reason = new Error('gave up before sending')
    await expect(sandbox.fetch(url, { method: 'POST', headers: H, body: initBody('60123456001'), signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
    expect((await sandbox.requests()).requests).toEqual([])
  })

  it('a signal already aborted, on a Request, rejects with its reason before reaching the sandbox', async () => {
    const reason = new Error('gave up before sending')
    await expect(
      sandbox.fetch(new Request(url, { method: 'POST', headers: H, body: initBody('60123456001'), signal: AbortSignal.abort(reason) })),
    ).rejects.toBe(reason)
    expect((await sandbox.requests()).requests).toEqual([])
  })

  /** A slow Init through sandbox.fetch, given up with `reason` once the sandbox holds its answer. */
  async function givenUp(reason: Error) {
    const controller = new AbortController()
    const { answer } = await slowInit((signal) => sandbox.fetch(url, { method: 'POST', headers: H, body: initBody(SLOW), signal }), controller)
    controller.abort(reason)
    return answer
  }

  it('a signal that aborts while the answer is delayed rejects with its reason', async () => {
    const reason = new Error('the user closed the tab')
    await expect(givenUp(reason)).rejects.toBe(reason)
  })

  it('a request given up while the answer is delayed is logged as client_closed', async () => {
    await givenUp(new Error('the user closed the tab')).catch(() => {})
    const [entry] = (await sandbox.requests()).requests
    expect(entry).toMatchObject({ path: '/subscriptions/init', msisdn: SLOW, client_closed: true, http_status: 200, message: '' })
  })

  it('a Request carrying the signal (the default reason: an AbortError)', async () => {
    const controller = new AbortController()
    const { answer } = await slowInit(
      (signal) => sandbox.fetch(new Request('http://localhost/subscriptions/init', { method: 'POST', headers: H, body: initBody(SLOW), signal })),
      controller,
    )
    controller.abort()
    await expect(answer).rejects.toMatchObject({ name: 'AbortError' })
    expect((await sandbox.requests()).requests[0]).toMatchObject({ client_closed: true })
  })
})

describe('through msw', () => {
  const BASE = 'https://x.test/v1'
  const server = setupServer()
  beforeAll(() => {
    server.use(...sandboxHandlers(sandbox, { baseUrl: BASE }))
    server.listen({ onUnhandledRequest: 'error' })
  })
  afterAll(() => server.close())

  /** A slow Init through global fetch, given up with `reason` once the sandbox holds its answer. */
  async function givenUp(reason: Error) {
    const controller = new AbortController()
    const { answer } = await slowInit((signal) => fetch(`${BASE}/subscriptions/init`, { method: 'POST', headers: H, body: initBody(SLOW), signal }), controller)
    controller.abort(reason)
    return answer
  }

  it('global fetch aborted while the answer is delayed rejects with its reason', async () => {
    const reason = new Error('timeout in the merchant code')
    await expect(givenUp(reason)).rejects.toBe(reason)
  })

  it('global fetch aborted while the answer is delayed is logged as client_closed', async () => {
    await givenUp(new Error('timeout in the merchant code')).catch(() => {})
    expect((await sandbox.requests()).requests[0]).toMatchObject({ path: '/subscriptions/init', client_closed: true })
  })

  it('every link stays under the base URL: redirect_url, the consent form action, the 303 to the default return path', async () => {
    const init = await fetch(`${BASE}/subscriptions/init`, { method: 'POST', headers: H, body: initBody('359881234011', 'bg') })
    const { payload } = (await init.json()) as { payload: { redirect_url: string } }
    expect(payload.redirect_url).toMatch(/^https:\/\/x\.test\/v1\/consent\//)
    const page = await (await fetch(payload.redirect_url)).text()
    const action = /<form method="post" action="([^"]+)"/.exec(page)![1]!
    expect(action).toBe(new URL(payload.redirect_url).pathname)
    const approved = await fetch(new URL(action, payload.redirect_url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=approve',
      redirect: 'manual',
    })
    expect(approved.status).toBe(303)
    const location = approved.headers.get('location')!
    expect(location).toMatch(/^\/v1\/_sandbox\/return\?status=SUCCESS&subscription_id=/)
    // Followed as a browser would: still answered by the sandbox (msw errors on anything unhandled).
    const back = await fetch(new URL(location, payload.redirect_url))
    expect(back.status).toBe(200)
    expect(await back.text()).toContain('Back at the merchant')
  })

  it("sandbox.consent takes the redirect_url msw's Init answered, its base URL's path included", async () => {
    const init = await fetch(`${BASE}/subscriptions/init`, { method: 'POST', headers: H, body: initBody('359881234011', 'bg') })
    const { payload } = (await init.json()) as { payload: { redirect_url: string } }
    const decided = await sandbox.consent(payload.redirect_url, 'approve')
    expect(decided).toMatchObject({ status: 303, location: expect.stringMatching(/status=SUCCESS&subscription_id=/) })
    expect((await sandbox.subscriptions({ msisdn: '359881234011' })).subscriptions).toMatchObject([{ status: 'ACTIVE' }])
  })

  /** A consent Init for `msisdn`, then `action` on its page; answers the redirect's parameters. */
  const decide = async (msisdn: string, action: 'approve' | 'deny') => {
    const init = await fetch(`${BASE}/subscriptions/init`, { method: 'POST', headers: H, body: initBody(msisdn, 'bg') })
    const { payload } = (await init.json()) as { payload: { redirect_url: string; verif_request_id: string | null } }
    // A consent flow has no verification request, so no redirect can carry one.
    expect(payload.verif_request_id).toBeNull()
    const r = await fetch(payload.redirect_url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `action=${action}`,
      redirect: 'manual',
    })
    return [...new URL(r.headers.get('location')!, BASE).searchParams]
  }

  it('the consent redirect on approve carries only its parameters (status, subscription_id)', async () => {
    const approve = await decide('359881234011', 'approve')
    expect(approve.map(([k]) => k)).toEqual(['status', 'subscription_id'])
  })

  it('the consent redirect on deny carries only its parameters (status, message)', async () => {
    const deny = await decide('359881234012', 'deny')
    expect(deny).toEqual([
      ['status', 'FAIL'],
      ['message', 'FAILED_INIT_SUB'],
    ])
  })
})

describe('errors thrown by the library name library calls', () => {
  it('CLOCK_BACKWARDS from setTime points to sandbox.reset({ clock })', async () => {
    const err = await sandbox.setTime('2025-12-01T00:00:00').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SandboxError)
    expect(err).toMatchObject({ code: 'CLOCK_BACKWARDS', status: 409 })
    expect((err as Error).message).toBe(
      "the sandbox clock cannot move backwards (now 2026-01-31T00:00:00.000000); to start over at an earlier time, call sandbox.reset({ clock: '2025-12-01T00:00:00' })",
    )
  })

  it('createClient against dcb serve says it the same way', async () => {
    const served = await startClient({ clock: '2026-01-31T00:00:00' })
    try {
      const err = await createClient({ baseUrl: served.url })
        .setTime('2025-12-01T00:00:00')
        .catch((e: unknown) => e)
      expect(err).toMatchObject({ code: 'CLOCK_BACKWARDS', status: 409 })
      expect((err as Error).message).toMatch(/to start over at an earlier time, call sandbox\.reset\(\{ clock: '2025-12-01T00:00:00' \}\)$/)
      // The control API itself still names its route and the CLI.
      expect((await served.control('/clock/set', { to: '2025-12-01T00:00:00' })).body.message).toMatch(/POST \/_sandbox\/reset .* or dcb reset --clock/)
    } finally {
      await served.close()
    }
  })

  it('SESSION_LIMIT points to the maxSessions option', async () => {
    const one = await createSandbox({ maxSessions: 1 })
    await one.session('a').now()
    const err = await one
      .session('b')
      .now()
      .catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'SESSION_LIMIT', status: 429 })
    expect((err as Error).message).toBe(
      'the sandbox holds its limit of 1 session (createSandbox({ maxSessions })); raise maxSessions or use fewer session names',
    )
  })
})
