/**
 * Issue 14: a sandbox that cannot be turned against its host. Each test here failed on the code
 * before the hardening (proxy trust, cross-site guard, memory by bytes, linear-time regexes, pages,
 * protocol edges).
 */
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, type Client } from '../helpers.js'

interface Raw {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  body: any
}

/** One request with exactly these headers (fetch would not let a test set Host). */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const u = new URL(url)
    const req = httpRequest({ host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port, method, path, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (text += d))
      res.on('end', () => {
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {}
        resolve({ status: res.statusCode!, headers: res.headers, text, body: parsed })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

const JSON_TYPE = { 'content-type': 'application/json' }

describe('cross-site guard of the control API and console', () => {
  let c: Client
  beforeAll(async () => {
    c = await startClient({ allowHosts: ['sandbox.test'] })
  })
  afterAll(() => c.close())
  const host = () => new URL(c.url).host

  it('refuses a POST typed text/plain (415) without running it', async () => {
    const before = (await c.control('/clock')).body.offset_ms
    const plain = await raw(c.url, 'POST', '/_sandbox/clock/advance', { 'content-type': 'text/plain' }, '{"by":"P1Y"}')
    expect(plain.status).toBe(415)
    expect(plain.body).toEqual({ error: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining('application/json') })
    expect((await c.control('/clock')).body.offset_ms).toBe(before)
  })

  it('refuses a POST of a form (415)', async () => {
    const form = await raw(c.url, 'POST', '/_sandbox/reset', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1')
    expect(form.status).toBe(415)
  })

  it('refuses a POST with no body, no Content-Type (415)', async () => {
    const empty = await raw(c.url, 'POST', '/_sandbox/reset', {})
    expect(empty.status).toBe(415)
  })

  it('refuses a rule typed text/plain (415) without adding it', async () => {
    const rule = await raw(c.url, 'POST', '/_sandbox/rules', { 'content-type': 'text/plain' }, '{"id":"page-made","step":"init","effect":{"error":"BARRED"}}')
    expect(rule.status).toBe(415)
    expect(JSON.stringify((await c.control('/rules')).body)).not.toContain('page-made')
  })

  it('takes JSON with a charset parameter', async () => {
    expect((await raw(c.url, 'POST', '/_sandbox/reset', { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200)
  })

  it('takes a DELETE without a body', async () => {
    expect((await raw(c.url, 'DELETE', '/_sandbox/rules', {})).status).toBe(200)
  })

  it('refuses a foreign Origin (403), reads included', async () => {
    const evil = await raw(c.url, 'POST', '/_sandbox/reset', { ...JSON_TYPE, origin: 'https://evil.example' }, '{}')
    expect(evil.status).toBe(403)
    expect(evil.body.error).toBe('FORBIDDEN_ORIGIN')
    expect((await raw(c.url, 'GET', '/_sandbox/requests', { origin: 'https://evil.example' })).status).toBe(403)
    expect((await raw(c.url, 'GET', '/_sandbox/health', { origin: 'null' })).status).toBe(403)
  })

  it('lets a request from its own origin pass', async () => {
    expect((await raw(c.url, 'POST', '/_sandbox/reset', { ...JSON_TYPE, origin: `http://${host()}` }, '{}')).status).toBe(200)
  })

  it('lets a request with no Origin pass', async () => {
    expect((await raw(c.url, 'GET', '/_sandbox/health', {})).status).toBe(200)
  })

  it('on a loopback listener, refuses a Host that is not a loopback name or an --allow-host name (DNS rebinding), reads included', async () => {
    const port = new URL(c.url).port
    const rebound = await raw(c.url, 'GET', '/_sandbox/requests', { host: `attacker.example:${port}` })
    expect(rebound.status).toBe(403)
    expect(rebound.body).toEqual({ error: 'FORBIDDEN_HOST', message: expect.stringContaining('attacker.example') })
    expect((await raw(c.url, 'GET', '/', { host: `attacker.example:${port}` })).status).toBe(403)
    for (const ok of [`localhost:${port}`, `app.localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `SANDBOX.test:${port}`, 'localhost'])
      expect((await raw(c.url, 'GET', '/_sandbox/health', { host: ok })).status, ok).toBe(200)
    // The merchant API and the consent pages are not affected.
    const merchant = await raw(
      c.url,
      'POST',
      '/subscriptions/status',
      { ...JSON_TYPE, host: `api.carrier.test:${port}`, 'api-key': 'sandbox-demo-key' },
      '{"subscription_id":"x"}',
    )
    expect(merchant.status).toBe(404)
    expect((await raw(c.url, 'GET', '/consent/nope', { host: `api.carrier.test:${port}` })).status).toBe(404)
  })

  it('on a server listening on every address, answers any Host, but a foreign one from loopback needs the admin token (DNS rebinding)', async () => {
    const open = await startClient({ host: '0.0.0.0' })
    try {
      const port = new URL(open.url).port
      const rebound = await raw(`http://127.0.0.1:${port}`, 'GET', '/_sandbox/health', { host: `lan-name.example:${port}` })
      expect(rebound.status).toBe(403)
      expect(rebound.body.error).toBe('FORBIDDEN')
      expect((await raw(`http://127.0.0.1:${port}`, 'GET', '/_sandbox/health', { host: `localhost:${port}` })).status).toBe(200)
    } finally {
      await open.close()
    }
  })
})

describe('proxy trust (--trust-proxy, proxy-addr semantics)', () => {
  it('reads X-Forwarded-For only from a trusted peer: from any other it is ignored', async () => {
    // Only 10.0.0.0/8 is trusted; the test's own loopback peer is not, so its X-Forwarded-For is not read.
    const c = await startClient({ trustProxy: '10.0.0.0/8' })
    try {
      expect((await raw(c.url, 'GET', '/_sandbox/health', { 'x-forwarded-for': '198.51.100.4' })).status).toBe(200)
    } finally {
      await c.close()
    }
  })

  it('reads X-Forwarded-For right to left from a trusted peer: a forged left-most entry never counts', async () => {
    const c = await startClient({ trustProxy: 'loopback' })
    try {
      const forged = await raw(c.url, 'GET', '/_sandbox/health', { 'x-forwarded-for': '127.0.0.1, 198.51.100.4' })
      expect(forged.status).toBe(403)
      expect(forged.body.error).toBe('FORBIDDEN')
      // A merchant allowlist sees the real client too (demo allows loopback only).
      const r = await raw(
        c.url,
        'POST',
        '/subscriptions/status',
        { ...JSON_TYPE, 'api-key': 'sandbox-demo-key', 'x-forwarded-for': '127.0.0.1, 198.51.100.4' },
        '{"subscription_id":"x"}',
      )
      expect(r.status).toBe(403)
      expect((await raw(c.url, 'GET', '/_sandbox/health', { 'x-forwarded-for': '127.0.0.1' })).status).toBe(200)
    } finally {
      await c.close()
    }
  })

  it('takes a list of CIDRs with words such as loopback', async () => {
    const c = await startClient({ trustProxy: '10.0.0.0/8, loopback', adminToken: 't' })
    try {
      expect((await raw(c.url, 'GET', '/_sandbox/health', { 'x-forwarded-for': '198.51.100.4, 10.1.2.3' })).status).toBe(403)
      expect((await raw(c.url, 'GET', '/_sandbox/health', { 'x-forwarded-for': '::1, 10.1.2.3' })).status).toBe(200)
    } finally {
      await c.close()
    }
  })

  it('refuses a bad entry, naming it', async () => {
    await expect(startClient({ trustProxy: 'loopback, my-proxy' })).rejects.toThrow(/--trust-proxy: "my-proxy" is not an address/)
  })

  it('matches the Bearer scheme in any case', async () => {
    const c = await startClient({ trustProxy: 'loopback', adminToken: 's3cret' })
    try {
      for (const scheme of ['Bearer', 'bearer', 'BEARER'])
        expect((await raw(c.url, 'GET', '/_sandbox/health', { 'x-forwarded-for': '198.51.100.4', authorization: `${scheme} s3cret` })).status).toBe(200)
      expect((await raw(c.url, 'GET', '/_sandbox/health', { 'x-forwarded-for': '198.51.100.4', authorization: 'Basic s3cret' })).status).toBe(403)
    } finally {
      await c.close()
    }
  })
})

describe('memory bounded by bytes', () => {
  it('the request log keeps request bodies within its byte budget, newest first', async () => {
    const c = await startClient({ journalBytes: 256 * 1024 })
    try {
      const pad = 'x'.repeat(60 * 1024)
      for (let i = 0; i < 12; i++) await c.api('/subscriptions/status', { subscription_id: `id-${i}`, pad })
      const list = (await c.control('/requests?limit=100')).body.requests
      expect(list.length).toBeGreaterThanOrEqual(3)
      expect(list.length).toBeLessThanOrEqual(5)
      expect(list[0].request.subscription_id).toBe('id-11')
      expect(c.sandbox.sessions.default.requestLog.bodyBytes).toBeLessThanOrEqual(256 * 1024)
    } finally {
      await c.close()
    }
  })

  it('a body nested 5,000 deep does not make GET /_sandbox/requests a 500', async () => {
    const c = await startClient()
    try {
      const deep = `{"subscription_id":"x","n":${'['.repeat(5000)}${']'.repeat(5000)}}`
      const r = await c.api('/subscriptions/status', undefined, { raw: deep })
      expect(r.status).toBe(404)
      const list = await c.control('/requests')
      expect(list.status).toBe(200)
      expect(list.body.requests[0].request).toBe(deep)
    } finally {
      await c.close()
    }
  })
})

describe('connections', () => {
  it('caps concurrent connections', async () => {
    const c = await startClient({ maxConnections: 2 })
    const sockets = [0, 1, 2].map(() => connect(Number(new URL(c.url).port), '127.0.0.1'))
    try {
      let closed = 0
      const refused = await new Promise((resolve) => {
        for (const s of sockets)
          s.on('close', () => {
            closed++
            resolve(s)
          })
      })
      // The other two are served.
      for (const s of sockets.filter((s) => s !== refused)) {
        const answer = new Promise<string>((resolve) => s.once('data', (d) => resolve(String(d))))
        s.write('GET /_sandbox/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
        expect(await answer).toMatch(/^HTTP\/1\.1 200 /)
      }
      expect(closed).toBe(1)
    } finally {
      for (const s of sockets) s.destroy()
      await c.close()
    }
  })

  it('closes a connection that sends nothing (idle timeout), but keeps a long poll open', async () => {
    const c = await startClient({ idleTimeoutMs: 1000 })
    try {
      const idle = connect(Number(new URL(c.url).port), '127.0.0.1')
      // Sends nothing: the server closes it once its idle timeout passes (a socket it keeps is the test's timeout).
      const closedBy = await new Promise<string>((resolve) => idle.on('close', () => resolve(idle.readableEnded ? 'the server' : 'an error')))
      expect(closedBy).toBe('the server')
      const poll = c.control('/otp?msisdn=60123456001&wait=3')
      expect((await poll).body.error).toBe('NO_OTP')
    } finally {
      await c.close()
    }
  })
})

describe('protocol edges', () => {
  let c: Client
  beforeAll(async () => {
    c = await startClient()
  })
  afterAll(() => c.close())

  it('405 on a merchant path says Allow: POST', async () => {
    const r = await c.api('/subscriptions/status', undefined, { method: 'GET' })
    expect(r.status).toBe(405)
    expect(r.headers.get('allow')).toBe('POST')
    expect(r.body).toMatchObject({ status: 'FAIL', message: 'METHOD_NOT_ALLOWED', status_code: 405 })
  })

  // Both would otherwise get a bare close from Node's parser; every FAIL envelope says why, these too.
  it('oversized headers get a 431 envelope with a reason', async () => {
    const big = await sendRaw(c.url, `GET /subscriptions/status HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(big).toMatch(/^HTTP\/1\.1 431 /)
    expect(JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4))).toEqual({ status: 'FAIL', message: 'BAD_REQUEST', status_code: 431, payload: null })
    expect(big).toMatch(/\r\nx-dcb-reason: the request's headers are larger than /i)
  })

  it('a malformed request gets a 400 envelope with a reason', async () => {
    const bad = await sendRaw(c.url, 'NOT HTTP AT ALL\r\n\r\n')
    expect(bad).toMatch(/^HTTP\/1\.1 400 /)
    expect(JSON.parse(bad.slice(bad.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 'FAIL', message: 'BAD_REQUEST', status_code: 400 })
    expect(bad).toMatch(/\r\nx-dcb-reason: the request is not valid HTTP/i)
  })

  it('a request answered while the next one on its connection is malformed keeps its answer (the Init it made is not answered 400)', async () => {
    const body = JSON.stringify({ msisdn: '60123456071', service_code: 'STREAMPLUS', country_code: 'my' })
    const init = `POST /subscriptions/init HTTP/1.1\r\nHost: localhost\r\nAPI-KEY: sandbox-demo-key\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
    const got = await sendRaw(c.url, `${init}NOT HTTP AT ALL\r\n\r\n`)
    const answers = got.split(/(?=HTTP\/1\.1 \d{3} )/)
    expect(answers).toHaveLength(2)
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200 /)
    const envelope = JSON.parse(answers[0]!.slice(answers[0]!.indexOf('\r\n\r\n') + 4))
    expect(envelope).toMatchObject({ status: 'SUCCESS', payload: { verif_request_id: expect.any(String) } })
    expect(answers[1]).toMatch(/^HTTP\/1\.1 400 /)
    // The Init the client was told about is the one the sandbox made.
    expect((await c.control('/otp?msisdn=60123456071')).body.verif_request_id).toBe(envelope.payload.verif_request_id)
  })

  it('pages forbid framing (consent, return, front page)', async () => {
    for (const path of ['/consent/nope', '/_sandbox/return?status=SUCCESS', '/']) {
      const r = await fetch(c.url + path)
      expect(r.headers.get('x-frame-options'), path).toBe('DENY')
      expect(r.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'")
    }
  })

  it('a rule regex RE2 cannot run in linear time (a backreference) is refused by name', async () => {
    const back = await c.control('/rules', { match: { regex: '(\\d)\\1' }, step: 'init', effect: { error: 'BARRED' } })
    expect(back.status).toBe(400)
    expect(back.body).toMatchObject({ error: 'BAD_RULE', message: expect.stringMatching(/match\.regex.*RE2/) })
  })
})

function sendRaw(url: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(Number(new URL(url).port), '127.0.0.1')
    let out = ''
    s.on('data', (d) => (out += d))
    s.on('end', () => resolve(out))
    s.on('close', () => resolve(out))
    s.on('error', reject)
    s.write(text)
  })
}
