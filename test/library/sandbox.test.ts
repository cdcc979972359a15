import { beforeEach, describe, expect, it } from 'vitest'
import { createSandbox, SandboxError, type Sandbox } from '../../src/index.js'

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const init = (sandbox: Pick<Sandbox, 'fetch'>, msisdn: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = H) =>
  sandbox.fetch('http://localhost/subscriptions/init', {
    method: 'POST',
    headers,
    body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my', ...extra }),
  })

describe('createSandbox: the engine in-process, no socket', () => {
  it('runs the OTP flow through sandbox.fetch (a Request, or a URL and init) and the control operations', async () => {
    const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
    const started = await init(sandbox, '60123456011')
    expect(started.status).toBe(200)
    expect(started.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const { payload } = (await started.json()) as { payload: { verif_request_id: string } }
    const { otp, verif_request_id } = await sandbox.otp('60123456011')
    expect(verif_request_id).toBe(payload.verif_request_id)
    const verified = await sandbox.fetch(
      new Request('https://api.carrier.test/subscriptions/verify', { method: 'POST', headers: H, body: JSON.stringify({ verif_request_id, otp }) }),
    )
    const { payload: sub } = (await verified.json()) as { payload: { subscription_id: string } }
    expect((await sandbox.subscription(sub.subscription_id)).status).toBe('ACTIVE')
    expect((await sandbox.subscriptions({ msisdn: '60123456011' })).subscriptions).toHaveLength(1)
    expect((await sandbox.sms('60123456011')).messages.map((m) => m.kind)).toContain('otp')
    expect((await sandbox.now()).now).toBe('2026-01-31T00:00:00.000000')
    const moved = await sandbox.advance('P1M')
    expect(moved.clock.now).toBe('2026-02-28T00:00:00.000000')
    expect(moved.events.map((e) => e.type)).toEqual(['renewed'])
    const canceled = await sandbox.cancel(sub.subscription_id)
    expect(canceled.status).toBe('CANCELED')
    expect((await sandbox.requests()).requests.map((r) => r.path)).toContain('/subscriptions/verify')
    const reset = await sandbox.reset()
    expect(reset.clock.now).toBe('2026-01-31T00:00:00.000000')
    expect((await sandbox.subscriptions()).subscriptions).toEqual([])
  })

  it('throws SandboxError with the control API code and status', async () => {
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

  it('counts requests as from 127.0.0.1 unless clientIp says otherwise (allowlists see it; the control operations still work)', async () => {
    const offsite = { ...H, 'api-key': 'sandbox-offsite-key' }
    const local = await createSandbox()
    const refused = await init(local, '60123456012', {}, offsite)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toEqual({ status: 'FAIL', message: 'UNAUTHORIZED', status_code: 403, payload: null })
    const remote = await createSandbox({ clientIp: '203.0.113.9' })
    // Past the allowlist: offsite has no services, so the next check answers.
    expect(await (await init(remote, '60123456012', {}, offsite)).json()).toMatchObject({ message: 'MERCHANT_SERVICE_NOT_CONFIGURED' })
    expect((await init(remote, '60123456013')).status).toBe(403)
    // The control API over fetch from that address is closed, as on a server; the functions are the test's own.
    expect((await remote.fetch('http://localhost/_sandbox/clock')).status).toBe(403)
    expect((await remote.now()).frozen).toBe(false)
  })

  describe('answers the whole HTTP surface', () => {
    let sandbox: Sandbox
    beforeEach(async () => {
      sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
    })

    it('errors: method, key, body, size, path and a magic ending', async () => {
      expect((await sandbox.fetch('http://localhost/subscriptions/init')).status).toBe(405)
      expect((await init(sandbox, '60123456011', {}, { 'content-type': 'application/json' })).status).toBe(401)
      expect((await init(sandbox, '60123456011', { country_code: 'GB' })).status).toBe(400)
      const big = await sandbox.fetch('http://localhost/subscriptions/init', { method: 'POST', headers: H, body: 'x'.repeat(70_000) })
      expect(big.status).toBe(413)
      expect(await big.json()).toMatchObject({ message: 'BAD_REQUEST', status_code: 413 })
      expect((await sandbox.fetch('http://localhost/nope')).status).toBe(404)
      expect(await (await init(sandbox, '60123456106')).json()).toMatchObject({ status: 'FAIL', message: 'BLACKLISTED' })
    })

    it('runtime rules', async () => {
      await sandbox.rules.add({ id: 'r1', match: { msisdn: '60123456011' }, step: 'init', effect: { error: 'BARRED' } })
      expect((await sandbox.rules.list()).runtime.map((r) => r.id)).toEqual(['r1'])
      expect(await (await init(sandbox, '60123456011')).json()).toMatchObject({ message: 'BARRED' })
      expect(await sandbox.rules.remove('r1')).toEqual({ deleted: 1 })
    })

    it('consent pages: the link points where the request was addressed; Approve redirects 303', async () => {
      const r = (await (await init(sandbox, '359881234011', { country_code: 'bg' }).then((x) => x)).json()) as { payload: { redirect_url: string } }
      expect(r.payload.redirect_url).toMatch(/^http:\/\/localhost\/consent\//)
      const page = await sandbox.fetch(r.payload.redirect_url)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('Approve')
      const approved = await sandbox.fetch(r.payload.redirect_url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=approve',
      })
      expect(approved.status).toBe(303)
      expect(approved.headers.get('location')).toMatch(/status=SUCCESS&subscription_id=/)
    })

    it('HEAD, the console page and the OpenAPI document', async () => {
      const head = await sandbox.fetch('http://localhost/', { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(await head.text()).toBe('')
      expect(await (await sandbox.fetch('http://localhost/')).text()).toContain('dcb sandbox')
      expect(((await (await sandbox.fetch('http://localhost/openapi.json')).json()) as { openapi: string }).openapi).toMatch(/^3\.1/)
    })
  })

  it('gives Responses that read like any other (json, text, arrayBuffer, body stream, clone; a body is read once)', async () => {
    const sandbox = await createSandbox()
    const res = await sandbox.fetch('http://localhost/nope')
    expect(res).toBeInstanceOf(Response)
    const copy = res.clone()
    expect(await res.json()).toMatchObject({ message: 'NOT_FOUND' })
    expect(res.bodyUsed).toBe(true)
    await expect(res.text()).rejects.toThrow(TypeError)
    const chunks: Uint8Array[] = []
    for await (const c of copy.body!) chunks.push(c)
    expect(Buffer.concat(chunks).toString()).toBe('{"status":"FAIL","message":"NOT_FOUND","status_code":404,"payload":null}')
    expect(copy.bodyUsed).toBe(true)
    const bytes = new Uint8Array(await (await sandbox.fetch('http://localhost/nope')).arrayBuffer())
    expect(Buffer.from(bytes).toString()).toContain('NOT_FOUND')
  })

  it('gives status, ok, statusText and headers as written, and a body in memory as a socket would carry it', async () => {
    const sandbox = await createSandbox()
    const res = await sandbox.fetch('http://localhost/nope')
    expect([res.status, res.ok, res.statusText]).toEqual([404, false, ''])
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('content-length')).toBe(String((await res.clone().arrayBuffer()).byteLength))
    expect(new Response(await res.blob(), res).status).toBe(404)
    const fine = await sandbox.fetch('http://localhost/_sandbox/clock')
    expect([fine.status, fine.ok]).toEqual([200, true])
    // Past the 64 KiB body limit: 413, whether the size is declared or not.
    const big = JSON.stringify({ msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my', pad: 'x'.repeat(70_000) })
    expect((await sandbox.fetch('http://localhost/subscriptions/init', { method: 'POST', headers: H, body: big })).status).toBe(413)
    expect((await sandbox.fetch(new Request('http://localhost/subscriptions/init', { method: 'POST', headers: H, body: big }))).status).toBe(413)
    // A lone surrogate in a string body reads as U+FFFD, as after the UTF-8 a socket carries.
    const raw = '{"msisdn":"6012345601\ud800","service_code":"STREAMPLUS","country_code":"my"}'
    await sandbox.fetch('http://localhost/subscriptions/init', { method: 'POST', headers: H, body: raw })
    const journal = (await sandbox.requests({ limit: 1 })) as unknown as { requests: { request: { msisdn: string } }[] }
    expect(journal.requests[0]!.request.msisdn).toBe('6012345601\ufffd')
  })

  it('session(name) gives the same functions bound to an isolated session; a bad name throws', async () => {
    const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00', maxSessions: 1 })
    const a = sandbox.session('worker-1')
    expect(a.name).toBe('worker-1')
    await init(a, '60123456011')
    const { otp, verif_request_id } = await a.otp('60123456011')
    await expect(sandbox.otp('60123456011')).rejects.toMatchObject({ code: 'NO_OTP' })
    await a.fetch('http://localhost/subscriptions/verify', { method: 'POST', headers: H, body: JSON.stringify({ verif_request_id, otp }) })
    expect((await a.subscriptions()).subscriptions).toHaveLength(1)
    expect((await sandbox.subscriptions()).subscriptions).toHaveLength(0)
    await a.advance('P1D')
    expect((await a.now()).now).toBe('2026-02-01T00:00:00.000000')
    expect((await sandbox.now()).now).toBe('2026-01-31T00:00:00.000000')
    await a.reset()
    expect((await a.subscriptions()).subscriptions).toHaveLength(0)
    expect(() => sandbox.session('a b')).toThrow(SandboxError)
    // . and .. fit the characters but a URL cannot address them (DELETE /_sandbox/sessions/..).
    for (const dots of ['.', '..']) expect(() => sandbox.session(dots)).toThrow(`"${dots}" cannot name a new session`)
    await expect(sandbox.session('worker-2').now()).rejects.toMatchObject({ code: 'SESSION_LIMIT', status: 429 })
  })

  it('is closed by close(): later calls throw SANDBOX_CLOSED', async () => {
    const sandbox = await createSandbox()
    await sandbox.close()
    await expect(sandbox.now()).rejects.toMatchObject({ code: 'SANDBOX_CLOSED' })
    await expect(sandbox.fetch('http://localhost/')).rejects.toBeInstanceOf(SandboxError)
  })
})
