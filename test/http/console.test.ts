/**
 * The console over HTTP: its files, its access rules (loopback, admin token cookie, cross-site
 * refusals, no framing) and the live event stream.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadWorld } from '../../src/world/load.js'
import { createSandboxApp } from '../../src/http/app.js'
import { createHost, memorySessions } from '../../src/runtime/host.js'
import { CONSOLE_FILES, PAGE_CALLS } from '../../src/http/console.js'
import { DEFAULT_BASE_URL } from '../../src/contract/defaults.js'
import { serve } from '../cli/run.js'
import { startClient, useSandbox, type Client } from '../helpers.js'
import { closed, nextRequest } from '../wait.js'
import { openStream } from '../sse.js'

describe('the console page and its files', () => {
  const c = useSandbox()

  it('serves the console page at / as HTML that may not be framed', async () => {
    const res = await fetch(c.url + '/')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const html = await res.text()
    expect(html).toContain('href="#/messages"')
  })

  it('sends a strict CSP with the page: its own origin only, framed by none', async () => {
    const csp = (await fetch(c.url + '/')).headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
  })

  const files = () => CONSOLE_FILES.filter((f) => f !== 'index.html').map((f) => `/_console/${f}`)

  it('serves every file of src/console', async () => {
    for (const path of files()) expect((await fetch(c.url + path)).status, path).toBe(200)
    expect([...CONSOLE_FILES].sort()).toEqual(readdirSync(join('src', 'console')).sort())
  })

  it('forbids framing of every console file', async () => {
    for (const path of files()) expect((await fetch(c.url + path)).headers.get('x-frame-options'), path).toBe('DENY')
  })

  it('names no URL of another origin in any console file', async () => {
    for (const path of files()) {
      const text = await (await fetch(c.url + path)).text()
      // No URL of another origin anywhere in the files (the SVG namespace is a name, not a fetch).
      expect(text.replace('http://www.w3.org/2000/svg', ''), path).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i)
    }
  })

  it("lists every handset's messages, newest first", async () => {
    await c.subscribe('60123456001')
    await c.subscribe('60123456002')
    const all = (await c.control('/messages')).body.messages
    expect(all.map((m: any) => m.msisdn)).toContain('60123456001')
    expect(all.map((m: any) => m.msisdn)).toContain('60123456002')
    expect(all[0].msisdn).toBe('60123456002')
  })

  it("lists one handset's messages only with ?msisdn", async () => {
    await c.subscribe('60123456001')
    await c.subscribe('60123456002')
    const one = (await c.control('/messages?msisdn=60123456001')).body.messages
    expect(new Set(one.map((m: any) => m.msisdn))).toEqual(new Set(['60123456001']))
  })

  it('refuses a list of no messages (?limit=0) with a 400', async () => {
    expect((await c.control('/messages?limit=0')).status).toBe(400)
  })

  it('includes renewal notices among every handset messages', async () => {
    await c.subscribe('60123456001')
    await c.control('/clock/advance', { by: 'P1M' })
    const all = (await c.control('/messages?limit=5')).body.messages
    expect(all[0].kind).toBe('renewal')
    expect(all).toHaveLength(3)
  })
})

describe('the console refuses cross-site use', () => {
  const c = useSandbox()

  it('refuses a request from another origin or another site (403)', async () => {
    expect((await fetch(c.url + '/_sandbox/events', { headers: { origin: 'http://evil.example' } })).status).toBe(403)
    expect((await fetch(c.url + '/_sandbox/events', { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(403)
  })

  it('refuses a Host that is not a loopback name (403), against DNS rebinding', async () => {
    // fetch cannot set Host: a plain request does.
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(c.url + '/_sandbox/events', { headers: { host: 'evil.example:7700' } }, (res) => {
        let body = ''
        res.on('data', (d) => (body += d))
        res.on('end', () => resolve({ status: res.statusCode!, body }))
      })
      req.on('error', reject)
      req.end()
    })
    expect(rebound.status).toBe(403)
    expect(JSON.parse(rebound.body).message).toMatch(/not a loopback name/)
  })

  it('refuses a sign-in POST that is not JSON (415)', async () => {
    const login = await fetch(c.url + '/_console/login', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"token":"x"}' })
    expect(login.status).toBe(415)
  })
})

describe('the console from another address', () => {
  let c: Client
  const far = { 'x-forwarded-for': '10.1.2.3' }
  beforeAll(async () => {
    c = await startClient({ trustProxy: 'loopback', adminToken: 'sesame' })
  })
  afterAll(() => c.close())

  it('needs the admin token, then keeps it in an HttpOnly, SameSite=Strict cookie', async () => {
    expect((await fetch(c.url + '/_sandbox/messages', { headers: far })).status).toBe(403)
    // The page itself loads (it asks for the token); its data does not.
    expect((await fetch(c.url + '/', { headers: far })).status).toBe(200)
    const post = (token: string) =>
      fetch(c.url + '/_console/login', { method: 'POST', headers: { ...far, 'content-type': 'application/json' }, body: JSON.stringify({ token }) })
    const wrong = await post('open')
    expect(wrong.status).toBe(403)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    const right = await post('sesame')
    expect(right.status).toBe(200)
    const cookie = right.headers.get('set-cookie')!
    expect(cookie).toMatch(/HttpOnly/)
    expect(cookie).toMatch(/SameSite=Strict/)
    // Plain HTTP: a Secure cookie would never come back.
    expect(cookie).not.toMatch(/Secure/)
    expect(cookie).not.toContain('sesame')
    const pair = cookie.split(';')[0]!
    const withCookie = { ...far, cookie: pair }
    expect((await fetch(c.url + '/_sandbox/messages', { headers: withCookie })).status).toBe(200)
    // The control API takes the cookie too (the console's pages use it)...
    expect((await fetch(c.url + '/_sandbox/clock', { headers: withCookie })).status).toBe(200)
    // ...but not from another site's page.
    expect((await fetch(c.url + '/_sandbox/clock', { headers: { ...withCookie, origin: 'http://evil.example' } })).status).toBe(403)
    expect((await fetch(c.url + '/_sandbox/clock', { headers: { ...withCookie, 'sec-fetch-site': 'cross-site' } })).status).toBe(403)
    // A cookie made for another token opens nothing.
    expect((await fetch(c.url + '/_sandbox/messages', { headers: { ...far, cookie: 'dcb_console=00' } })).status).toBe(403)
    // The bearer token works as on the control API.
    expect((await fetch(c.url + '/_sandbox/messages', { headers: { ...far, authorization: 'Bearer sesame' } })).status).toBe(200)
  })
})

describe('the live stream', () => {
  const c = useSandbox()

  describe('what it sends', () => {
    let s: Awaited<ReturnType<typeof openStream>>
    beforeEach(async () => {
      s = await openStream(c.url + '/_sandbox/events')
      await s.event('hello')
    })
    afterEach(() => s.close())

    it('is an event stream that sends each SMS', async () => {
      expect(s.res.headers.get('content-type')).toMatch(/^text\/event-stream/)
      const init = await c.api('/subscriptions/init', { msisdn: '60123456007', service_code: 'STREAMPLUS', country_code: 'my' })
      const otp = await s.event('sms', (d) => d.message.msisdn === '60123456007')
      expect(otp.message.kind).toBe('otp')
      expect(otp.message.verif_request_id).toBe(init.body.payload.verif_request_id)
    })

    it('sends the requests logged, with why a 400 was answered', async () => {
      await c.api('/subscriptions/init', { msisdn: '60123456007', service_code: 'STREAMPLUS', country_code: 'MY' })
      const bad = await s.event('requests', (d) => d.requests.some((r: any) => r.http_status === 400))
      expect(bad.requests.find((r: any) => r.http_status === 400).reason).toBe('country_code: must be lower case (got "MY")')
    })

    it('sends which subscriptions changed: a new one, then a canceled one', async () => {
      const id = await c.subscribe('60123456008')
      await s.event('subscriptions', (d) => d.ids.includes(id))
      await c.control(`/subscriptions/${id}/cancel`, {})
      const n = s.events.filter((e) => e.event === 'subscriptions').length
      await s.next(() => (s.events.filter((e) => e.event === 'subscriptions' && e.data.ids.includes(id)).length > 1 ? true : undefined))
      expect(n).toBeGreaterThan(0)
    })

    it('sends clock moves', async () => {
      await c.control('/clock/advance', { by: '36h' })
      await s.event('clock')
    })

    it('sends resets', async () => {
      await c.control('/reset', {})
      await s.event('reset')
    })
  })

  it("follows one session's changes with ?session=", async () => {
    const s = await openStream(c.url + '/_sandbox/events?session=team-b')
    await s.event('hello')
    await c.api('/subscriptions/init', { msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' })
    await c.api('/subscriptions/init', { msisdn: '60123456012', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: { 'x-dcb-session': 'team-b' } })
    await s.event('sms', (d) => d.message.msisdn === '60123456012')
    expect(s.events.some((e) => e.event === 'sms' && e.data.message.msisdn === '60123456011')).toBe(false)
    s.close()
    const bad = await fetch(c.url + '/_sandbox/events?session=no%20spaces')
    expect(bad.status).toBe(400)
    // A typo, two sessions or a query and a header that disagree would follow the wrong session without a word.
    const refused = async (query: string, headers: Record<string, string> = {}) => {
      const r = await fetch(`${c.url}/_sandbox/events${query}`, { headers })
      return [r.status, (await r.json()).message]
    }
    expect(await refused('?sesion=team-b')).toEqual([400, 'sesion: unknown query parameter; GET /_sandbox/events takes session'])
    expect(await refused('?session=team-b&session=team-c')).toEqual([400, 'session: given more than once'])
    expect(await refused('?session=team-b', { 'x-dcb-session': 'team-c' })).toEqual([
      400,
      'session: ?session=team-b and X-DCB-Session: team-c name two sessions; give one',
    ])
    expect((await c.control('/sessions')).body.sessions.map((x: { name: string }) => x.name)).not.toContain('team-c')
  })

  it('summarises a burst instead of sending each event', async () => {
    const s = await openStream(c.url + '/_sandbox/events')
    await s.event('hello')
    for (let i = 0; i < 30; i++) await c.api('/subscriptions/status', { subscription_id: 'nope' })
    const got = await s.next(() => {
      const batches = s.events.filter((e) => e.event === 'requests')
      const seen = batches.reduce((n, e) => n + e.data.requests.length + e.data.skipped, 0)
      return seen >= 30 ? batches : undefined
    })
    for (const b of got) expect(b.data.requests.length).toBeLessThanOrEqual(20)
    s.close()
  })

  it('listens to the engine only while a client is connected', async () => {
    const journal = c.sandbox.sessions.default.requestLog
    expect(journal.onAdd).toBeNull()
    const onServer = nextRequest(c.sandbox.server, '/_sandbox/events')
    const s = await openStream(c.url + '/_sandbox/events')
    await s.event('hello')
    expect(journal.onAdd).not.toBeNull()
    expect(c.sandbox.sessions.default.live().clientCount).toBe(1)
    const { res } = await onServer
    s.close()
    await closed(res)
    expect(journal.onAdd).toBeNull()
    expect(c.sandbox.sessions.default.live().clientCount).toBe(0)
  })
})

describe('the live stream keeps itself alive', () => {
  let server: Server
  let url: string
  beforeAll(async () => {
    const host = createHost(memorySessions(), { engine: { world: loadWorld([]).world }, version: 'test', live: { heartbeatMs: 100 } })
    const app = createSandboxApp({ host, version: 'test' })
    server = createServer(app.listener)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })

  it('writes a comment line at its interval while nothing happens', async () => {
    const s = await openStream(url + '/_sandbox/events')
    await s.next(() => (s.comments.filter((l) => l === ': keep-alive').length >= 2 ? true : undefined))
    s.close()
  })
})

describe('dcb serve (the built package)', () => {
  let s: Awaited<ReturnType<typeof serve>>
  beforeAll(async () => {
    s = await serve(['--in-memory'])
  })
  afterAll(() => s?.stop('SIGKILL'))

  it('serves the console files from dist as shipped, the defaults filled in', async () => {
    for (const [path, file] of [
      ['/', 'index.html'],
      ['/_console/app.js', 'app.js'],
      ['/_console/app.css', 'app.css'],
    ]) {
      const res = await fetch(s.url + path)
      expect(res.status, path).toBe(200)
      // The page as shipped, with the CLI's default base URL and the declared calls filled in.
      const shipped = readFileSync(join('src', 'console', file!), 'utf8')
        .replace('content="DEFAULT_BASE_URL"', `content="${DEFAULT_BASE_URL}"`)
        .replace('PAGE_CALLS', () => PAGE_CALLS)
      expect(await res.text()).toBe(shipped)
    }
  })

  it('ends an open event stream at once on SIGTERM', async () => {
    const stream = await openStream(s.url + '/_sandbox/events')
    await stream.event('hello')
    // Ended by the server as it stops, not cut when its grace period for requests in flight runs out.
    const [how, code] = await Promise.all([stream.ended, s.stop()])
    expect(code).toBe(0)
    expect(how).toBe('end')
    stream.close()
  })
})
