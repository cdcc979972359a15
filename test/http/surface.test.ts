/**
 * Issue 21, the surface: nobody who has not passed a surface's checks makes the server store
 * anything (sessions), memory is bounded for the whole server (one request log budget, a default cap of
 * sessions), the DNS-rebinding rule holds on a listener on every address, and no rule can hold an
 * answer longer than 60 s. Real server over loopback, real files.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { dcb } from '../cli/run.js'

interface Raw {
  status: number
  body: any
  text: string
}

/** One request with exactly these headers (fetch would not let a test set Host). */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const u = new URL(url)
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (text += d))
      res.on('end', () => {
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {}
        resolve({ status: res.statusCode!, body, text })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

const KEY = 'sandbox-demo-key'
const JSON_TYPE = { 'content-type': 'application/json' }
const INIT = JSON.stringify({ msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' })

describe('a refused request with X-DCB-Session makes no session, before or after a restart', () => {
  // The tests run in order: refuse, look, restart, look again, then allow the same calls.
  const tmp = tempDir()
  let c: Client
  const data = () => join(tmp.dir, 'sandbox.json')
  const start = () => startClient({ data: data(), trustProxy: 'loopback', adminToken: 'secret-admin' })
  const names = async () => (await c.control('/sessions')).body.sessions.map((x: any) => x.name)
  beforeAll(async () => {
    c = await start()
  })
  afterAll(() => c.close())

  it('each refused request gets its refusal status', async () => {
    const s = (name: string) => ({ 'x-dcb-session': name })
    const refused: [string, Promise<Raw>, number][] = [
      ['no API key', raw(c.url, 'POST', '/subscriptions/init', { ...JSON_TYPE, ...s('no-key') }, INIT), 401],
      ['unknown API key', raw(c.url, 'POST', '/subscriptions/init', { ...JSON_TYPE, 'api-key': 'nope', ...s('bad-key') }, INIT), 401],
      ['address not allowed', raw(c.url, 'POST', '/subscriptions/init', { ...JSON_TYPE, 'api-key': 'sandbox-offsite-key', ...s('offsite') }, INIT), 403],
      ['wrong method (merchant)', raw(c.url, 'GET', '/subscriptions/init', { 'api-key': KEY, ...s('get') }), 405],
      ['unknown merchant path', raw(c.url, 'POST', '/subscriptions/nope', { ...JSON_TYPE, 'api-key': KEY, ...s('nope') }, INIT), 404],
      [
        'body too large (merchant)',
        raw(c.url, 'POST', '/subscriptions/init', { ...JSON_TYPE, 'api-key': KEY, ...s('large') }, JSON.stringify({ msisdn: 'x'.repeat(70_000) })),
        413,
      ],
      ['wrong content type (merchant)', raw(c.url, 'POST', '/subscriptions/init', { 'content-type': 'text/plain', 'api-key': KEY, ...s('text') }, INIT), 400],
      ['body that fails its schema', raw(c.url, 'POST', '/subscriptions/init', { ...JSON_TYPE, 'api-key': KEY, ...s('schema') }, '{"msisdn":1}'), 400],
      ['bad session name (merchant)', raw(c.url, 'POST', '/subscriptions/init', { ...JSON_TYPE, 'api-key': KEY, ...s('no/slash') }, INIT), 400],
      ['control API from an address not allowed', raw(c.url, 'GET', '/_sandbox/clock', { 'x-forwarded-for': '198.51.100.7', ...s('far') }), 403],
      ['control API, cross-site page', raw(c.url, 'POST', '/_sandbox/reset', { ...JSON_TYPE, origin: 'https://evil.example', ...s('cross') }, '{}'), 403],
      ['control API, not JSON', raw(c.url, 'POST', '/_sandbox/clock/advance', { 'content-type': 'text/plain', ...s('plain') }, '{"by":"1h"}'), 415],
      ['control API, unknown path', raw(c.url, 'GET', '/_sandbox/nothing-here', s('unknown')), 404],
      ['control API, wrong method', raw(c.url, 'PUT', '/_sandbox/clock', { ...JSON_TYPE, ...s('put') }, '{}'), 405],
      ['control API, body too large', raw(c.url, 'POST', '/_sandbox/rules', { ...JSON_TYPE, ...s('big') }, JSON.stringify({ id: 'x'.repeat(70_000) })), 413],
      ['control API, bad body', raw(c.url, 'POST', '/_sandbox/clock/advance', { ...JSON_TYPE, ...s('badbody') }, '{"by":5}'), 400],
      ['control API, bad session name', raw(c.url, 'GET', '/_sandbox/clock', s('x'.repeat(65))), 400],
      ['console stream without access', raw(c.url, 'GET', '/_sandbox/events?session=stream', { 'x-forwarded-for': '198.51.100.7' }), 403],
      ['consent page', raw(c.url, 'GET', '/consent/nope', s('consent')), 404],
    ]
    for (const [what, answer, status] of refused) expect((await answer).status, what).toBe(status)
  })

  it('the refused requests list no session', async () => {
    expect(await names()).toEqual(['default'])
  })

  it('the refused requests store no session file', async () => {
    await c.close()
    const stored = readdirSync(tmp.dir)
      .filter((f) => f.startsWith('sandbox.json.sessions'))
      .flatMap((d) => readdirSync(join(tmp.dir, d)).map((f) => readFileSync(join(tmp.dir, d, f), 'utf8')))
      .join('')
    expect(stored).not.toMatch(/no-key|bad-key|offsite|large|schema|far|cross|plain|unknown|badbody|stream|consent/)
  })

  it('after a restart the refused requests still list no session', async () => {
    c = await start()
    expect(await names()).toEqual(['default'])
  })

  it('the same calls, allowed, make their session', async () => {
    // So the refusals above are what kept them out.
    expect((await raw(c.url, 'POST', '/subscriptions/init', { ...JSON_TYPE, 'api-key': KEY, 'x-dcb-session': 'made' }, INIT)).body.status).toBe('SUCCESS')
    expect((await raw(c.url, 'GET', '/_sandbox/clock', { 'x-dcb-session': 'made-too' })).status).toBe(200)
    expect(await names()).toEqual(['default', 'made', 'made-too'])
  })
})

describe('the session cap, 1,000 by default', () => {
  // The tests run in order: fill the cap, then go past it.
  let c: Client
  const open = async (i: number) => (await c.control('/clock', undefined, { headers: { 'x-dcb-session': `s${i}` } })).status
  beforeAll(async () => {
    c = await startClient({})
  })
  afterAll(() => c.close())

  it('opens 1,000 sessions by default', async () => {
    for (let i = 0; i < 1000; i += 50) expect(await Promise.all(Array.from({ length: 50 }, (_, k) => open(i + k)))).toEqual(Array(50).fill(200))
  })

  it('refuses a merchant call in a session past the cap with 429 SESSION_LIMIT', async () => {
    const over = await c.api('/subscriptions/init', JSON.parse(INIT), { headers: { 'x-dcb-session': 'one-more' } })
    expect(over.status).toBe(429)
    expect(over.body.message).toBe('SESSION_LIMIT')
  })

  it('refuses a control call in a session past the cap with SESSION_LIMIT', async () => {
    expect((await c.control('/clock', undefined, { headers: { 'x-dcb-session': 'one-more' } })).body.error).toBe('SESSION_LIMIT')
  })

  it('stores no session refused at the cap', async () => {
    expect((await c.control('/sessions')).body.sessions).toHaveLength(1001)
  })
})

describe('one request-log budget for the whole server', () => {
  // Forty 8 kB bodies over ten sessions, sent once; each test reads what was kept.
  const budget = 64 * 1024
  const body = (tag: string) => JSON.stringify({ subscription_id: `${tag}-${'x'.repeat(8000)}` })
  const kept: string[] = []
  let c: Client
  beforeAll(async () => {
    c = await startClient({ journalBytes: budget })
    for (let round = 0; round < 4; round++)
      for (let s = 0; s < 10; s++) await c.api('/subscriptions/status', undefined, { raw: body(`r${round}s${s}`), headers: { 'x-dcb-session': `s${s}` } })
    for (let s = 0; s < 10; s++) {
      const requests = (await c.control('/requests', undefined, { headers: { 'x-dcb-session': `s${s}` } })).body.requests
      kept.push(...requests.map((r: any) => r.request.subscription_id.split('-')[0]))
    }
  })
  afterAll(() => c.close())

  it('the bodies of every session together stay within --request-log-mib', () => {
    const bytes = kept.length * body('r0s0').length
    expect(bytes).toBeLessThanOrEqual(budget)
    // Each session would keep all four of its own under a budget of its own; together only the newest fit.
    expect(kept.length).toBe(Math.floor(budget / body('r0s0').length))
  })

  it('the newest bodies are the ones kept', () => {
    expect(kept.every((tag) => tag.startsWith('r3') || tag.startsWith('r2'))).toBe(true)
    expect(kept).toContain('r3s9')
  })
})

describe('the DNS-rebinding rule on a listener on every address', () => {
  let c: Client
  afterEach(() => c.close())

  it('a loopback peer whose Host is a foreign name is not exempt from the admin token (reads, writes, the console stream)', async () => {
    c = await startClient({ host: '0.0.0.0', adminToken: 'secret-admin', allowHosts: ['sandbox.test'] })
    const base = `http://127.0.0.1:${new URL(c.url).port}`
    const port = new URL(c.url).port
    const rebound = { host: `attacker.example:${port}` }
    const requests = await raw(base, 'GET', '/_sandbox/requests', rebound)
    expect(requests.status).toBe(403)
    expect(requests.body).toEqual({ error: 'FORBIDDEN', message: expect.stringContaining('attacker.example') })
    expect((await raw(base, 'POST', '/_sandbox/reset', { ...rebound, ...JSON_TYPE }, '{}')).status).toBe(403)
    const rule = { id: 'rebound', step: 'init', effect: { error: 'BARRED' } }
    expect((await raw(base, 'POST', '/_sandbox/rules', { ...rebound, ...JSON_TYPE }, JSON.stringify(rule))).status).toBe(403)
    expect((await raw(base, 'GET', '/_sandbox/events', rebound)).status).toBe(403)
    expect((await raw(base, 'GET', '/_sandbox/sessions', rebound)).status).toBe(403)
    expect(JSON.stringify((await c.control('/rules')).body)).not.toContain('rebound')
    // The token opens it; loopback names and --allow-host names are exempt as before.
    expect((await raw(base, 'GET', '/_sandbox/requests', { ...rebound, authorization: 'Bearer secret-admin' })).status).toBe(200)
    for (const ok of [`localhost:${port}`, `127.0.0.1:${port}`, `sandbox.test:${port}`])
      expect((await raw(base, 'GET', '/_sandbox/requests', { host: ok })).status, ok).toBe(200)
    // The merchant API is not affected.
    expect((await raw(base, 'POST', '/subscriptions/init', { ...rebound, ...JSON_TYPE, 'api-key': KEY }, INIT)).body.status).toBe('SUCCESS')
  })
})

describe('every delay is bounded by name: a delay_per_unit that could hold an answer over 60 s is refused', () => {
  const tmp = tempDir()
  let c: Client
  const add = (rule: unknown) => c.control('/rules', rule)
  const ruleText = async () => JSON.stringify((await c.control('/rules')).body)
  beforeAll(async () => {
    c = await startClient({})
  })
  afterAll(() => c.close())

  it('in a fixture file', async () => {
    const f = join(tmp.dir, 'slow.json')
    writeFileSync(
      f,
      JSON.stringify({ rules: [{ id: 'days', match: { regex: '(?<n>\\d{5})$' }, step: 'api', effect: { delay_per_unit: { group: 'n', ms: 100 } } }] }),
    )
    const v = await dcb(['fixtures', 'validate', f])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain(
      `${f}: $.rules[0].effect.delay_per_unit: can hold an answer 9999900 ms (99999, the largest value group "n" can match, x 100 ms); at most 60000 ms`,
    )
  })

  it('by POST /_sandbox/rules, for a group of any number of digits', async () => {
    const unbounded = await add({ id: 'forever', match: { regex: '5(?<n>\\d+)$' }, step: 'api', effect: { delay_per_unit: { group: 'n', ms: 1 } } })
    expect(unbounded.status).toBe(400)
    expect(unbounded.body.message).toContain('effect.delay_per_unit')
    expect(unbounded.body.message).toContain('can match any number of digits')
    expect(await ruleText()).not.toMatch(/forever/)
  })

  it('by POST /_sandbox/rules, for a sum with delay_ms over 60 s', async () => {
    const sum = await add({
      id: 'sum',
      match: { regex: '5(?<n>[0-5]\\d)$' },
      step: 'api',
      effect: { delay_ms: 1001, delay_per_unit: { group: 'n', ms: 1000 } },
    })
    expect(sum.status).toBe(400)
    expect(sum.body.message).toContain('can hold an answer 60001 ms (59, the largest value group "n" can match, x 1000 ms + delay_ms 1001)')
    expect(await ruleText()).not.toMatch(/"sum"/)
  })

  it('a delay of exactly 60 s (59 x 1000 ms + delay_ms 1000) loads', async () => {
    expect(
      (await add({ id: 'fits', match: { regex: '5(?<n>[0-5]\\d)$' }, step: 'api', effect: { delay_ms: 1000, delay_per_unit: { group: 'n', ms: 1000 } } }))
        .status,
    ).toBe(200)
    expect((await c.control('/rules')).body.rules.map((r: any) => r.id)).toContain('fits')
  })
})
