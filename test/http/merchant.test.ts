import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, useSandbox, type Client } from '../helpers.js'
import { expectFail, initWith } from './merchant-calls.js'

const c = useSandbox()
const init = initWith(c)

describe('envelope and routing', () => {
  it('answers success with the envelope keys in order, as JSON', async () => {
    const r = await init('60123456001')
    expect(r.status).toBe(200)
    expect(r.text.startsWith('{"status":"SUCCESS","message":"","status_code":200,"payload":{')).toBe(true)
    expect(r.headers.get('content-type')).toContain('application/json')
  })

  it('answers all five init payload keys in order', async () => {
    const r = await init('60123456001')
    expect(Object.keys(r.body.payload)).toEqual(['verif_request_id', 'short_code', 'keyword', 'carrier_code', 'redirect_url'])
    expect(r.body.payload.verif_request_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(r.body.payload).toMatchObject({ short_code: null, keyword: null, carrier_code: 'sbx-my-otp', redirect_url: null })
  })

  it.each(['init', 'verify', 'status'])('answers 405 METHOD_NOT_ALLOWED for GET, PUT and DELETE on /subscriptions/%s', async (op) => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const r = await c.api(`/subscriptions/${op}`, undefined, { method })
      expectFail(r, 405, 'METHOD_NOT_ALLOWED', 'null')
    }
  })

  it('answers 405 before checking the API key', async () => {
    expectFail(await c.api('/subscriptions/init', undefined, { method: 'GET', key: null }), 405, 'METHOD_NOT_ALLOWED', 'null')
  })

  it('answers 404 NOT_FOUND with the envelope for an unknown path', async () => {
    expectFail(await c.api('/subscriptions/cancel', {}), 404, 'NOT_FOUND', 'null')
    expectFail(await c.api('/nope', undefined, { method: 'GET' }), 404, 'NOT_FOUND', 'null')
  })
})

describe('authentication (401) and allowlist (403)', () => {
  it('answers 401 for a missing key', async () => {
    expectFail(await init('60123456001', {}, null as unknown as string), 401, 'UNAUTHORIZED', 'null')
    expectFail(await c.api('/subscriptions/init', {}, { key: null }), 401, 'UNAUTHORIZED', 'null')
  })

  it('answers 401 for an unknown key', async () => {
    expectFail(await c.api('/subscriptions/status', { subscription_id: 'x' }, { key: 'nope' }), 401, 'UNAUTHORIZED', 'null')
  })

  it('answers 401 for the key of an inactive merchant', async () => {
    expectFail(await c.api('/subscriptions/verify', { verif_request_id: 'x', otp: '1' }, { key: 'sandbox-inactive-key' }), 401, 'UNAUTHORIZED', 'null')
  })

  it('checks the key before the body', async () => {
    expectFail(await c.api('/subscriptions/init', undefined, { key: 'nope', raw: 'not json' }), 401, 'UNAUTHORIZED', 'null')
  })

  it('answers 403 UNAUTHORIZED when the source IP is not allowlisted, before the body is checked', async () => {
    expectFail(await c.api('/subscriptions/init', undefined, { key: 'sandbox-offsite-key', raw: '{' }), 403, 'UNAUTHORIZED', 'null')
  })

  it('accepts the second key of the same merchant (rotation overlap)', async () => {
    const id = await c.subscribe('60123456002')
    const r = await c.api('/subscriptions/status', { subscription_id: id }, { key: 'sandbox-demo-key-2' })
    expect(r.body.status).toBe('SUCCESS')
  })

  it('ignores X-Forwarded-For unless --trust-proxy', async () => {
    const r = await init('60123456001', {}, undefined)
    expect(r.status).toBe(200)
    const spoof = await c.api(
      '/subscriptions/init',
      { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' },
      { key: 'sandbox-offsite-key', headers: { 'x-forwarded-for': '203.0.113.7' } },
    )
    expectFail(spoof, 403, 'UNAUTHORIZED', 'null')
  })
})

describe('a server listening on ::1', () => {
  let v6: Client
  beforeAll(async () => {
    v6 = await startClient({ host: '::1' })
  })
  afterAll(() => v6.close())

  it('is reached at http://[::1]:PORT', () => {
    expect(v6.url).toMatch(/^http:\/\/\[::1\]:\d+$/)
  })

  it('accepts real IPv6 loopback clients of a merchant that allows ::1', async () => {
    expect((await v6.api('/subscriptions/status', { subscription_id: 'x' })).body.message).toBe('SUBSCRIPTION_NOT_FOUND')
  })

  it('refuses IPv6 loopback clients of a merchant that does not allow ::1', async () => {
    expectFail(await v6.api('/subscriptions/status', { subscription_id: 'x' }, { key: 'sandbox-offsite-key' }), 403, 'UNAUTHORIZED', 'null')
  })

  it('serves the control API to IPv6 loopback clients', async () => {
    expect((await v6.control('/health')).status).toBe(200)
  })
})

describe('allowlists behind a trusted proxy: CIDR, IPv6, IPv4-mapped', () => {
  let p: Client
  beforeAll(async () => {
    p = await startClient({ trustProxy: 'loopback, 10.0.0.0/8', fixtures: ['test/fixtures/ipv6-merchant.json'] })
  })
  afterAll(() => p.close())
  const call = (ip: string, key: string) =>
    p.api('/subscriptions/status', { subscription_id: 'none' }, { key, headers: { 'x-forwarded-for': `${ip}, 10.0.0.1` } })

  it('uses the first untrusted X-Forwarded-For address from the right', async () => {
    expectFail(await call('203.0.113.9', 'sandbox-offsite-key'), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
    expectFail(await call('203.0.114.9', 'sandbox-offsite-key'), 403, 'UNAUTHORIZED', 'null')
    expectFail(await call('198.51.100.1', 'sandbox-demo-key'), 403, 'UNAUTHORIZED', 'null')
  })

  it('accepts a key stored as its SHA-256 in the fixtures', async () => {
    expectFail(await call('2001:db8:1::42', 'sandbox-hashed-key'), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
    expectFail(await call('2001:db8:1::42', '7eff01ef108fbfcaf879a0015db9736f84b4de7da756e385501546301436658a'), 401, 'UNAUTHORIZED', 'null')
  })

  it('matches IPv6 ranges', async () => {
    expectFail(await call('2001:db8:1::42', 'sandbox-v6-key'), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
    expectFail(await call('2001:db8:2::42', 'sandbox-v6-key'), 403, 'UNAUTHORIZED', 'null')
  })

  it('matches IPv4-mapped IPv6 addresses as their IPv4 address', async () => {
    expectFail(await call('::ffff:192.0.2.10', 'sandbox-v6-key'), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
    expectFail(await call('::ffff:127.0.0.1', 'sandbox-demo-key'), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
  })

  it('matches the IPv6 loopback ::1 as loopback', async () => {
    expectFail(await call('::1', 'sandbox-demo-key'), 404, 'SUBSCRIPTION_NOT_FOUND', 'null')
  })
})

describe('400 BAD_REQUEST and 413', () => {
  it('rejects a missing or other Content-Type', async () => {
    const body = JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp']) {
      expectFail(await c.api('/subscriptions/init', undefined, { raw: body, headers: { 'content-type': ct } }), 400, 'BAD_REQUEST', 'null')
    }
    const res = await fetch(`${c.url}/subscriptions/init`, {
      method: 'POST',
      headers: { 'api-key': 'sandbox-demo-key' },
      body: new Uint8Array(Buffer.from(body)),
    })
    expect(res.status).toBe(400)
    const ok = await c.api('/subscriptions/init', undefined, { raw: body, headers: { 'content-type': 'application/json; charset=utf-8' } })
    expect(ok.body.status).toBe('SUCCESS')
  })

  it('rejects a body that is not JSON', async () => {
    for (const raw of ['{', '']) {
      expectFail(await c.api('/subscriptions/init', undefined, { raw }), 400, 'BAD_REQUEST', 'null')
    }
  })

  it('rejects a JSON body that is not an object', async () => {
    for (const raw of ['null', '[]', '"x"', '42', '[{"msisdn":"60123456001"}]']) {
      expectFail(await c.api('/subscriptions/init', undefined, { raw }), 400, 'BAD_REQUEST', 'null')
    }
  })

  it('rejects bodies that fail the schema of each operation', async () => {
    const bad: [string, unknown][] = [
      ['init', { service_code: 'STREAMPLUS', country_code: 'my' }],
      ['init', { msisdn: '60123456001', country_code: 'my' }],
      ['init', { msisdn: '60123456001', service_code: 'STREAMPLUS' }],
      ['init', { msisdn: 60123456001, service_code: 'STREAMPLUS', country_code: 'my' }],
      ['init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'MY' }],
      ['init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'GB' }],
      ['init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'mys' }],
      ['init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my', language: 'e' }],
      ['init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my', language: 'en_GB!' }],
      ['init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my', language: 5 }],
      ['verify', { verif_request_id: 'x' }],
      ['verify', { otp: '1234' }],
      ['verify', { verif_request_id: 'x', otp: 1234 }],
      ['status', {}],
      ['status', { subscription_id: 5 }],
      ['status', { subscription_id: null }],
    ]
    for (const [op, body] of bad) expectFail(await c.api(`/subscriptions/${op}`, body), 400, 'BAD_REQUEST', 'null')
  })

  it('ignores extra fields', async () => {
    const r = await init('60123456001', { extra: { deep: true } })
    expect(r.body.status).toBe('SUCCESS')
  })

  it('accepts a BCP-47 language tag', async () => {
    const r = await init('60123456001', { language: 'ms-MY' })
    expect(r.body.status).toBe('SUCCESS')
  })

  it('answers 413 with the envelope for a body over 64 KiB (declared length)', async () => {
    const big = JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my', pad: 'x'.repeat(70 * 1024) })
    const r = await c.api('/subscriptions/init', undefined, { raw: big })
    expectFail(r, 413, 'BAD_REQUEST', 'null')
  })

  it('answers 413 for a chunked body that grows past 64 KiB, without reading it all', async () => {
    const url = new URL(c.url)
    let sent = 0
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/subscriptions/init',
          method: 'POST',
          headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let body = ''
          res.on('data', (d) => (body += d))
          res.on('end', () => resolve({ status: res.statusCode!, body }))
        },
      )
      req.on('error', reject)
      const chunk = 'x'.repeat(16 * 1024)
      let answered = false
      const pump = () => {
        // Keep sending up to 1 MiB unless the server has answered; it must answer long before.
        while (sent < 1024 * 1024 && !answered) {
          sent += chunk.length
          if (!req.write(chunk)) return req.once('drain', pump)
        }
        req.end()
      }
      req.on('response', () => (answered = true))
      pump()
    })
    expect(result.status).toBe(413)
    expect(JSON.parse(result.body)).toEqual({ status: 'FAIL', message: 'BAD_REQUEST', status_code: 413, payload: null })
    // The server is still fine.
    expect((await init('60123456001')).status).toBe(200)
  })
})

describe('403 MERCHANT_SERVICE_NOT_CONFIGURED', () => {
  it('for a service without that country', async () => {
    expectFail(
      await c.api('/subscriptions/init', { msisdn: '359871234001', service_code: 'GAMECLUB', country_code: 'bg' }),
      403,
      'MERCHANT_SERVICE_NOT_CONFIGURED',
      'null',
    )
    expectFail(
      await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'us' }),
      403,
      'MERCHANT_SERVICE_NOT_CONFIGURED',
      'null',
    )
  })

  it('for an unknown service', async () => {
    expectFail(
      await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'NOPE', country_code: 'my' }),
      403,
      'MERCHANT_SERVICE_NOT_CONFIGURED',
      'null',
    )
  })

  it('for another merchant’s service', async () => {
    expectFail(
      await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'NEWSDAILY', country_code: 'my' }),
      403,
      'MERCHANT_SERVICE_NOT_CONFIGURED',
      'null',
    )
  })

  it('checks the integration before the MSISDN', async () => {
    expectFail(
      await c.api('/subscriptions/init', { msisdn: 'garbage', service_code: 'GAMECLUB', country_code: 'bg' }),
      403,
      'MERCHANT_SERVICE_NOT_CONFIGURED',
      'null',
    )
  })
})

describe('numbering-plan lookup', () => {
  it.each([
    ['non-digits', '+60123456001'],
    ['spaces', '6012 3456001'],
    ['empty', ''],
    ['too short', '6012345600'],
    ['too long', '6012345600123'],
    ['calling code of another country', '44770012345'],
    ['no carrier owns the prefix', '60173456001'],
  ])('INVALID_MSISDN with payload null: %s', async (_why, msisdn) => {
    expectFail(await init(msisdn), 200, 'INVALID_MSISDN', 'null')
  })

  it('INVALID_MSISDN_LANDLINE for 603 numbers of landline length', async () => {
    expectFail(await init('60321234567'), 200, 'INVALID_MSISDN_LANDLINE', 'null')
    expectFail(await init('6032123456'), 200, 'INVALID_MSISDN_LANDLINE', 'null')
    expectFail(await init('603212345678'), 200, 'INVALID_MSISDN', 'null')
  })

  it('CARRIER_NOT_SUPPORTED with payload null for an unprovisioned carrier', async () => {
    expectFail(await init('60193456001'), 200, 'CARRIER_NOT_SUPPORTED', 'null')
  })

  it('detects the carrier of each sandbox country', async () => {
    const cases: [string, string, string][] = [
      ['601234567001', 'my', 'sbx-my-otp'],
      ['447700900001', 'gb', 'sbx-gb-otp'],
      ['359871234001', 'bg', 'sbx-bg-otp'],
    ]
    for (const [msisdn, country, carrier] of cases) {
      const r = await init(msisdn, { country_code: country })
      expect(r.body.payload.carrier_code).toBe(carrier)
    }
  })
})
