import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createSandbox, SandboxError, type Sandbox } from '../../src/index.js'

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const init = (sandbox: Pick<Sandbox, 'fetch'>, msisdn: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = H) =>
  sandbox.fetch('http://localhost/subscriptions/init', {
    method: 'POST',
    headers,
    body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my', ...extra }),
  })

describe('createSandbox: the engine in-process, no socket', () => {
  describe('an OTP flow through sandbox.fetch, then the control operations, in order', () => {
    let sandbox: Sandbox
    let payload: { verif_request_id: string }
    let sub: { subscription_id: string }
    beforeAll(async () => {
      sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
    })

    it('an Init through fetch(URL, init) answers 200 in JSON', async () => {
      const started = await init(sandbox, '60123456011')
      expect(started.status).toBe(200)
      expect(started.headers.get('content-type')).toBe('application/json; charset=utf-8')
      ;({ payload } = (await started.json()) as { payload: { verif_request_id: string } })
    })

    it('a Verify sent as a Request activates the subscription of the OTP otp() gives', async () => {
      const { otp, verif_request_id } = await sandbox.otp('60123456011')
      expect(verif_request_id).toBe(payload.verif_request_id)
      const verified = await sandbox.fetch(
        new Request('https://api.carrier.test/subscriptions/verify', { method: 'POST', headers: H, body: JSON.stringify({ verif_request_id, otp }) }),
      )
      ;({ payload: sub } = (await verified.json()) as { payload: { subscription_id: string } })
      expect((await sandbox.subscription(sub.subscription_id)).status).toBe('ACTIVE')
    })

    it('subscriptions() lists the subscription by its MSISDN', async () => {
      expect((await sandbox.subscriptions({ msisdn: '60123456011' })).subscriptions).toHaveLength(1)
    })

    it('sms() lists the OTP message sent', async () => {
      expect((await sandbox.sms('60123456011')).messages.map((m) => m.kind)).toContain('otp')
    })

    it('now() reads the clock the sandbox was made with', async () => {
      expect((await sandbox.now()).now).toBe('2026-01-31T00:00:00.000000')
    })

    it('advance() moves the clock by a month, renewing the subscription', async () => {
      const moved = await sandbox.advance('P1M')
      expect(moved.clock.now).toBe('2026-02-28T00:00:00.000000')
      expect(moved.events.map((e) => e.type)).toEqual(['renewed'])
    })

    it('cancel() cancels the subscription', async () => {
      const canceled = await sandbox.cancel(sub.subscription_id)
      expect(canceled.status).toBe('CANCELED')
    })

    it('requests() lists the Verify sent through fetch', async () => {
      expect((await sandbox.requests()).requests.map((r) => r.path)).toContain('/subscriptions/verify')
    })

    it('reset() puts back the first clock, emptying the subscriptions', async () => {
      const reset = await sandbox.reset()
      expect(reset.clock.now).toBe('2026-01-31T00:00:00.000000')
      expect((await sandbox.subscriptions()).subscriptions).toEqual([])
    })
  })

  it('throws a control API error as a SandboxError that carries its code (its HTTP status too)', async () => {
    const sandbox = await createSandbox()
    const err = await sandbox.subscription('no-such-id').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SandboxError)
    expect(err).toMatchObject({ code: 'SUBSCRIPTION_NOT_FOUND', status: 404 })
    await expect(sandbox.otp('60123456011')).rejects.toMatchObject({ code: 'NO_OTP', status: 404 })
    await expect(sandbox.advance('soon')).rejects.toMatchObject({ code: 'BAD_DURATION', status: 400 })
    await expect(sandbox.subscriptions({ merchant: 'nobody' })).rejects.toMatchObject({ code: 'MERCHANT_NOT_FOUND', status: 404 })
    await expect(sandbox.mo({ msisdn: '1', short_code: '32123', text: 'STREAM' })).rejects.toMatchObject({ code: 'INVALID_MSISDN', status: 400 })
    await expect(createSandbox({ clock: 'tomorrow' })).rejects.toMatchObject({ code: 'BAD_TIME', status: 400 })
    await expect(createSandbox({ clientIp: 'localhost' })).rejects.toMatchObject({ code: 'BAD_REQUEST' })
  })

  it('sends a number the control API reads in a query in decimal digits, a tiny wait too (String(1e-7) is "1e-7", which it refuses)', async () => {
    const sandbox = await createSandbox()
    await expect(sandbox.otp('60123456011', { wait: 1e-7 })).rejects.toMatchObject({ code: 'NO_OTP' })
    await expect(sandbox.requests({ limit: 1e21 })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: 'limit: expected a positive whole number' })
  })

  describe('the address requests count as from', () => {
    const offsite = { ...H, 'api-key': 'sandbox-offsite-key' }

    it("is 127.0.0.1 by default, which an offsite key's allowlist refuses", async () => {
      const local = await createSandbox()
      const refused = await init(local, '60123456012', {}, offsite)
      expect(refused.status).toBe(403)
      expect(await refused.json()).toEqual({ status: 'FAIL', message: 'UNAUTHORIZED', status_code: 403, payload: null })
    })

    it('is clientIp when it is given, which the allowlists check', async () => {
      const remote = await createSandbox({ clientIp: '203.0.113.9' })
      // Past the allowlist: offsite has no services, so the next check answers.
      expect(await (await init(remote, '60123456012', {}, offsite)).json()).toMatchObject({ message: 'MERCHANT_SERVICE_NOT_CONFIGURED' })
      expect((await init(remote, '60123456013')).status).toBe(403)
    })

    it('closes the control API over fetch when clientIp is off the machine', async () => {
      const remote = await createSandbox({ clientIp: '203.0.113.9' })
      // The control API over fetch from that address is closed, as on a server.
      expect((await remote.fetch('http://localhost/_sandbox/clock')).status).toBe(403)
    })

    it('leaves the control functions open whatever clientIp is', async () => {
      const remote = await createSandbox({ clientIp: '203.0.113.9' })
      // The functions are the test's own.
      expect((await remote.now()).frozen).toBe(false)
    })
  })

  describe('answers the whole HTTP surface', () => {
    let sandbox: Sandbox
    beforeEach(async () => {
      sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
    })

    it('a GET on /subscriptions/init answers 405', async () => {
      expect((await sandbox.fetch('http://localhost/subscriptions/init')).status).toBe(405)
    })

    it('an Init without an api-key answers 401', async () => {
      expect((await init(sandbox, '60123456011', {}, { 'content-type': 'application/json' })).status).toBe(401)
    })

    it('an Init for a country the service is not in answers 400', async () => {
      expect((await init(sandbox, '60123456011', { country_code: 'GB' })).status).toBe(400)
    })

    it('a body past 64 KiB answers 413 BAD_REQUEST', async () => {
      const big = await sandbox.fetch('http://localhost/subscriptions/init', { method: 'POST', headers: H, body: 'x'.repeat(70_000) })
      expect(big.status).toBe(413)
      expect(await big.json()).toMatchObject({ message: 'BAD_REQUEST', status_code: 413 })
    })

    it('an unknown path answers 404', async () => {
      expect((await sandbox.fetch('http://localhost/nope')).status).toBe(404)
    })

    it('an Init for an MSISDN ending 106 answers FAIL BLACKLISTED', async () => {
      expect(await (await init(sandbox, '60123456106')).json()).toMatchObject({ status: 'FAIL', message: 'BLACKLISTED' })
    })

    it('runtime rules', async () => {
      await sandbox.rules.add({ id: 'r1', match: { msisdn: '60123456011' }, step: 'init', effect: { error: 'BARRED' } })
      expect((await sandbox.rules.list()).runtime.map((r) => r.id)).toEqual(['r1'])
      expect(await (await init(sandbox, '60123456011')).json()).toMatchObject({ message: 'BARRED' })
      expect(await sandbox.rules.remove('r1')).toEqual({ deleted: 1 })
    })

    const consentUrl = async () =>
      ((await (await init(sandbox, '359881234011', { country_code: 'bg' })).json()) as { payload: { redirect_url: string } }).payload.redirect_url

    it('a consent link points where the Init was addressed', async () => {
      expect(await consentUrl()).toMatch(/^http:\/\/localhost\/consent\//)
    })

    it('a consent page offers Approve', async () => {
      const page = await sandbox.fetch(await consentUrl())
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('Approve')
    })

    it('Approve on a consent page redirects 303 to a SUCCESS return URL', async () => {
      const approved = await sandbox.fetch(await consentUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=approve',
      })
      expect(approved.status).toBe(303)
      expect(approved.headers.get('location')).toMatch(/status=SUCCESS&subscription_id=/)
    })

    it('a HEAD answers 200 with no body', async () => {
      const head = await sandbox.fetch('http://localhost/', { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(await head.text()).toBe('')
    })

    it('GET / serves the console page', async () => {
      expect(await (await sandbox.fetch('http://localhost/')).text()).toContain('dcb sandbox')
    })

    it('GET /openapi.json serves an OpenAPI 3.1 document', async () => {
      expect(((await (await sandbox.fetch('http://localhost/openapi.json')).json()) as { openapi: string }).openapi).toMatch(/^3\.1/)
    })
  })

  it('gives a Response whose body reads once (json() first, then text() throws)', async () => {
    const sandbox = await createSandbox()
    const res = await sandbox.fetch('http://localhost/nope')
    expect(res).toBeInstanceOf(Response)
    expect(await res.json()).toMatchObject({ message: 'NOT_FOUND' })
    expect(res.bodyUsed).toBe(true)
    await expect(res.text()).rejects.toThrow(TypeError)
  })

  it('gives a Response whose clone streams the whole body', async () => {
    const sandbox = await createSandbox()
    const copy = (await sandbox.fetch('http://localhost/nope')).clone()
    const chunks: Uint8Array[] = []
    for await (const c of copy.body!) chunks.push(c)
    expect(Buffer.concat(chunks).toString()).toBe('{"status":"FAIL","message":"NOT_FOUND","status_code":404,"payload":null}')
    expect(copy.bodyUsed).toBe(true)
  })

  it('gives a Response whose arrayBuffer() holds the body bytes', async () => {
    const sandbox = await createSandbox()
    const bytes = new Uint8Array(await (await sandbox.fetch('http://localhost/nope')).arrayBuffer())
    expect(Buffer.from(bytes).toString()).toContain('NOT_FOUND')
  })

  it('gives a Response the status line as written (status, ok, statusText)', async () => {
    const sandbox = await createSandbox()
    const res = await sandbox.fetch('http://localhost/nope')
    expect([res.status, res.ok, res.statusText]).toEqual([404, false, ''])
    expect(new Response(await res.blob(), res).status).toBe(404)
    const fine = await sandbox.fetch('http://localhost/_sandbox/clock')
    expect([fine.status, fine.ok]).toEqual([200, true])
  })

  it("gives a Response the headers as written, its content-length the body's", async () => {
    const sandbox = await createSandbox()
    const res = await sandbox.fetch('http://localhost/nope')
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('content-length')).toBe(String((await res.clone().arrayBuffer()).byteLength))
  })

  it('refuses a body past 64 KiB with 413, whether its size is declared or not', async () => {
    const sandbox = await createSandbox()
    const big = JSON.stringify({ msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my', pad: 'x'.repeat(70_000) })
    expect((await sandbox.fetch('http://localhost/subscriptions/init', { method: 'POST', headers: H, body: big })).status).toBe(413)
    expect((await sandbox.fetch(new Request('http://localhost/subscriptions/init', { method: 'POST', headers: H, body: big }))).status).toBe(413)
  })

  it('reads a lone surrogate in a string body as U+FFFD, as after the UTF-8 a socket carries', async () => {
    const sandbox = await createSandbox()
    const raw = '{"msisdn":"6012345601\ud800","service_code":"STREAMPLUS","country_code":"my"}'
    await sandbox.fetch('http://localhost/subscriptions/init', { method: 'POST', headers: H, body: raw })
    const journal = (await sandbox.requests({ limit: 1 })) as unknown as { requests: { request: { msisdn: string } }[] }
    expect(journal.requests[0]!.request.msisdn).toBe('6012345601\ufffd')
  })

  describe('session(name), in order', () => {
    let sandbox: Sandbox
    let a: ReturnType<Sandbox['session']>
    beforeAll(async () => {
      sandbox = await createSandbox({ clock: '2026-01-31T00:00:00', maxSessions: 1 })
      a = sandbox.session('worker-1')
    })

    it('gives the functions of a session of that name', () => {
      expect(a.name).toBe('worker-1')
    })

    it("keeps a session's OTP out of the default session", async () => {
      await init(a, '60123456011')
      await a.otp('60123456011')
      await expect(sandbox.otp('60123456011')).rejects.toMatchObject({ code: 'NO_OTP' })
    })

    it("keeps a session's subscription out of the default session", async () => {
      const { otp, verif_request_id } = await a.otp('60123456011')
      await a.fetch('http://localhost/subscriptions/verify', { method: 'POST', headers: H, body: JSON.stringify({ verif_request_id, otp }) })
      expect((await a.subscriptions()).subscriptions).toHaveLength(1)
      expect((await sandbox.subscriptions()).subscriptions).toHaveLength(0)
    })

    it("moves a session's clock alone", async () => {
      await a.advance('P1D')
      expect((await a.now()).now).toBe('2026-02-01T00:00:00.000000')
      expect((await sandbox.now()).now).toBe('2026-01-31T00:00:00.000000')
    })

    it('empties a session on its reset()', async () => {
      await a.reset()
      expect((await a.subscriptions()).subscriptions).toHaveLength(0)
    })

    it('throws SandboxError for a name with a space', () => {
      expect(() => sandbox.session('a b')).toThrow(SandboxError)
    })

    it('throws for . or .., which fit the characters but no URL can address', () => {
      // DELETE /_sandbox/sessions/.. would not reach the session.
      for (const dots of ['.', '..']) expect(() => sandbox.session(dots)).toThrow(`"${dots}" cannot name a new session`)
    })

    it('answers SESSION_LIMIT 429 for a new session past maxSessions', async () => {
      await expect(sandbox.session('worker-2').now()).rejects.toMatchObject({ code: 'SESSION_LIMIT', status: 429 })
    })
  })

  it('is closed by close(): later calls throw SANDBOX_CLOSED', async () => {
    const sandbox = await createSandbox()
    await sandbox.close()
    await expect(sandbox.now()).rejects.toMatchObject({ code: 'SANDBOX_CLOSED' })
    await expect(sandbox.fetch('http://localhost/')).rejects.toBeInstanceOf(SandboxError)
  })
})
