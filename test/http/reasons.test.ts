import { request } from 'node:http'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, useSandbox, type Client } from '../helpers.js'

const c = useSandbox({ clock: '2026-01-31T09:00:00' })

const init = (body: Record<string, unknown>, key?: string) =>
  c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my', ...body }, { key })
const reasonOf = (r: { headers: Headers }) => r.headers.get('x-dcb-reason')

/** A POST with exactly these headers (fetch always adds a Content-Type to a string body). */
function rawPost(url: string, headers: Record<string, string | string[]>, body: string): Promise<{ status: number; reason: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode!, reason: res.headers['x-dcb-reason'] as string | undefined, text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('X-DCB-Reason: every FAIL answer says why', () => {
  it('405, 404 and 413 carry a reason', async () => {
    expect(reasonOf(await c.api('/subscriptions/init', undefined, { method: 'GET' }))).toBe('method "GET" is not allowed on /subscriptions/init: use POST')
    expect(reasonOf(await c.api('/subscriptions/cancel', {}))).toBe(
      'no merchant API path "/subscriptions/cancel" for "POST": the paths are POST /subscriptions/init, /subscriptions/verify and /subscriptions/status',
    )
    const big = await c.api('/subscriptions/init', undefined, { raw: JSON.stringify({ msisdn: 'x'.repeat(70_000) }) })
    expect(big.status).toBe(413)
    expect(reasonOf(big)).toBe('the body is larger than 65536 bytes (64 KiB)')
  })

  describe('400: each problem of a request gets its own reason', () => {
    it('no Content-Type, or one that is not JSON', async () => {
      const body = JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
      const none = await rawPost(`${c.url}/subscriptions/init`, { 'api-key': 'sandbox-demo-key' }, body)
      expect(none.status).toBe(400)
      expect(none.reason).toBe('no Content-Type header: send Content-Type: application/json')
      const plain = await rawPost(`${c.url}/subscriptions/init`, { 'api-key': 'sandbox-demo-key', 'content-type': 'text/plain' }, body)
      expect(plain.reason).toBe('Content-Type "text/plain" is not application/json')
    })

    it('a compressed body (Content-Encoding) is named as such, not as JSON that does not parse; identity is plain', async () => {
      const body = JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
      const headers = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
      const gzipped = await new Promise<{ status: number; reason: string | undefined }>((resolve, reject) => {
        const data = gzipSync(body)
        const req = request(
          `${c.url}/subscriptions/init`,
          { method: 'POST', headers: { ...headers, 'content-encoding': 'gzip', 'content-length': String(data.length) } },
          (res) => {
            res.resume()
            res.on('end', () => resolve({ status: res.statusCode!, reason: res.headers['x-dcb-reason'] as string | undefined }))
          },
        )
        req.on('error', reject)
        req.end(data)
      })
      expect(gzipped.status).toBe(400)
      expect(gzipped.reason).toBe('Content-Encoding "gzip" is not taken: send the JSON body uncompressed')
      expect((await rawPost(`${c.url}/subscriptions/init`, { ...headers, 'content-encoding': 'identity' }, body)).status).toBe(200)
      // The control API reads its bodies the same way, and says so in its error JSON.
      const rule = gzipSync(JSON.stringify({ step: 'init', effect: { error: 'BARRED' } }))
      const control = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          `${c.url}/_sandbox/rules`,
          { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(rule.length) } },
          (res) => {
            let text = ''
            res.on('data', (d) => (text += d))
            res.on('end', () => resolve({ status: res.statusCode!, text }))
          },
        )
        req.on('error', reject)
        req.end(rule)
      })
      expect([control.status, JSON.parse(control.text)]).toEqual([
        400,
        { error: 'BAD_REQUEST', message: 'Content-Encoding "gzip" is not taken: send the JSON body uncompressed' },
      ])
    })

    it('msisdn as a number', async () => {
      const number = await init({ msisdn: 60123456001 })
      expect(number.status).toBe(400)
      expect(reasonOf(number)).toBe('msisdn: must be a string (got number 60123456001)')
    })

    it.each([
      [
        'service instead of service_code',
        () => c.api('/subscriptions/init', { msisdn: '60123456001', service: 'STREAMPLUS', country_code: 'my' }),
        'service_code: required (the body has "service": did you mean service_code?)',
      ],
      ['an upper-case country code', () => init({ country_code: 'MY' }), 'country_code: must be lower case (got "MY")'],
      [
        'a language that is no tag',
        () => init({ language: 'en_GB!' }),
        'language: must be an ISO-639-1 code or BCP-47 tag (e.g. "ms" or "ms-MY") (got "en_GB!")',
      ],
      ['an array for a body', () => c.api('/subscriptions/init', ['x']), 'the body must be a JSON object, not an array'],
      ['an OTP as a number', () => c.api('/subscriptions/verify', { verif_request_id: 'x', otp: 1234 }), 'otp: must be a string (got number 1234)'],
      [
        'a number too large to read (not echoed as null)',
        () => c.api('/subscriptions/verify', undefined, { raw: '{"verif_request_id":"x","otp":1e999}' }),
        'otp: must be a string (got a number too large to read)',
      ],
    ])('%s', async (_what, send, reason) => {
      expect(reasonOf(await send())).toBe(reason)
    })

    it('a body that is not JSON', async () => {
      expect(reasonOf(await c.api('/subscriptions/init', undefined, { raw: '{"msisdn":' }))).toMatch(/^the body is not valid JSON/)
    })
  })

  it('401 and 403 name the check that failed', async () => {
    expect(reasonOf(await c.api('/subscriptions/init', {}, { key: null }))).toBe('no API-KEY header: send the API-KEY of a merchant')
    expect(reasonOf(await c.api('/subscriptions/init', {}, { key: 'no-such-key' }))).toBe('the API-KEY is not the key of any merchant')
    expect(reasonOf(await c.api('/subscriptions/init', {}, { key: 'sandbox-inactive-key' }))).toBe('merchant inactive is not active')
    const ip = await c.api('/subscriptions/init', {}, { key: 'sandbox-offsite-key' })
    expect(ip.status).toBe(403)
    expect(reasonOf(ip)).toBe('source IP 127.0.0.1 is not in the allowlist of merchant offsite')
  })

  it('an API-KEY header sent twice is named as such, even when both copies are a merchant key (Node joins them into no key)', async () => {
    const body = JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    const twice = await rawPost(
      `${c.url}/subscriptions/init`,
      { 'api-key': ['sandbox-demo-key', 'sandbox-demo-key'], 'content-type': 'application/json' },
      body,
    )
    expect(twice.status).toBe(401)
    expect(twice.reason).toBe("the API-KEY header was sent 2 times: send it once, with one merchant's key")
    // Once, the same key is taken.
    const once = await rawPost(`${c.url}/subscriptions/init`, { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }, body)
    expect(once.status).toBe(200)
  })

  it('403 MERCHANT_SERVICE_NOT_CONFIGURED names service and country', async () => {
    const r = await init({ msisdn: '359871234001', service_code: 'GAMECLUB', country_code: 'bg' })
    expect(r.status).toBe(403)
    expect(reasonOf(r)).toBe('service GAMECLUB has no integration in bg')
    expect(reasonOf(await init({ service_code: 'NOPE' }))).toBe('merchant demo has no service "NOPE"')
  })

  describe('carrier failures name the rule or magic ending, the lookup or the OTP check that decided', () => {
    it.each([
      ['60123456107', 'rule init-107 (ending 107): Init BARRED'],
      ['60123456150', 'rule init-150 (ending 150): Init HTTP 500 ERROR'],
      ['6012345', 'msisdn "6012345" has 7 digits; sbx-my-otp numbers have 11 or 12'],
      ['6031234567', 'msisdn "6031234567" is a landline number (prefix 603)'],
      ['60193456001', 'carrier sbx-my-legacy is not provisioned'],
    ])('Init of %s', async (msisdn, reason) => {
      expect(reasonOf(await init({ msisdn }))).toBe(reason)
    })

    it('Verify: a wrong OTP, a failed first charge, a request used already', async () => {
      const first = await init({ msisdn: '60123456201' })
      const id = first.body.payload.verif_request_id
      const wrong = await c.api('/subscriptions/verify', { verif_request_id: id, otp: 'nope' })
      expect(wrong.body.message).toBe('INVALID_PIN')
      expect(reasonOf(wrong)).toBe('otp "nope" is not the OTP sent to 60123456201 (wrong attempt 1 of 3)')
      const { body: otp } = await c.control('/otp?msisdn=60123456201')
      const charged = await c.api('/subscriptions/verify', { verif_request_id: id, otp: otp.otp })
      expect(charged.body.message).toBe('INSUFFICIENT_FUNDS')
      expect(reasonOf(charged)).toBe('rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS')
      expect(reasonOf(await c.api('/subscriptions/verify', { verif_request_id: id, otp: otp.otp }))).toBe(
        `verification request ${id} was used already (INSUFFICIENT_FUNDS)`,
      )
    })

    it('a failed renewal: its event in the clock move and its charge in the subscription name the rule', async () => {
      const sub = await c.subscribe('60123456303')
      const moved = await c.control('/clock/advance', { by: 'P1M' })
      const why = 'rule renewal-303 (ending 303): renewal INSUFFICIENT_FUNDS'
      expect(moved.body.events).toEqual([expect.objectContaining({ type: 'renewal_failed', subscription_id: sub, code: 'INSUFFICIENT_FUNDS', reason: why })])
      const { body } = await c.control(`/subscriptions/${sub}`)
      expect(body.charges.map((ch: { kind: string; reason?: string }) => [ch.kind, ch.reason])).toEqual([
        ['first', undefined],
        ['renewal', why],
      ])
    })

    it('Init for an MSISDN with an active subscription names it', async () => {
      const sub = await c.subscribe('60123456001')
      expect(reasonOf(await init({}))).toBe(`msisdn 60123456001 has ACTIVE subscription ${sub} to STREAMPLUS`)
    })
  })

  it('a runtime rule is named by its id', async () => {
    await c.control('/rules', { id: 'ticket-4711', match: { msisdn: '60123456011' }, step: 'init', effect: { error: 'NOT_ELIGIBLE' } })
    expect(reasonOf(await init({ msisdn: '60123456011' }))).toBe('rule ticket-4711 (MSISDN 60123456011): Init NOT_ELIGIBLE')
  })

  it('never names another merchant: its subscription and verification read as unknown ones', async () => {
    const theirs = await c.subscribe('60123456002', 'NEWSDAILY', 'my', 'sandbox-other-key')
    const other = await c.api('/subscriptions/init', { msisdn: '60123456003', service_code: 'NEWSDAILY', country_code: 'my' }, { key: 'sandbox-other-key' })
    const theirVerif = other.body.payload.verif_request_id
    const status = await c.api('/subscriptions/status', { subscription_id: theirs })
    expect(status.body.message).toBe('SUBSCRIPTION_NOT_FOUND')
    expect(reasonOf(status)).toBe(`subscription_id "${theirs}" is unknown`)
    const unknown = await c.api('/subscriptions/status', { subscription_id: 'no-such-id' })
    expect(reasonOf(unknown)).toBe('subscription_id "no-such-id" is unknown')
    const verify = await c.api('/subscriptions/verify', { verif_request_id: theirVerif, otp: '0000' })
    expect(reasonOf(verify)).toBe(`verif_request_id "${theirVerif}" is unknown`)
    const service = await init({ service_code: 'NEWSDAILY' })
    expect(reasonOf(service)).toBe('merchant demo has no service "NEWSDAILY"')
    const offsite = await c.api('/subscriptions/init', {}, { key: 'sandbox-offsite-key' })
    // The request log does not tell the other merchant's MSISDN to these calls either.
    const { body } = await c.control('/requests?limit=10')
    const mine = body.requests.filter((e: any) => e.merchant === 'demo' && e.message !== '')
    expect(mine.map((e: any) => e.msisdn)).toEqual(expect.arrayContaining([null]))
    for (const e of mine) expect(e.msisdn).not.toBe('60123456002')
    for (const r of [status, verify, service, offsite]) {
      const why = reasonOf(r)!
      expect(why).not.toMatch(/other|sandbox-.*-key|60123456002|60123456003|127\.0\.0\.0\/8|203\.0\.113/)
    }
  })

  it('is one line of printable ASCII, at most 200 characters, with echoed input JSON-escaped', async () => {
    const r = await init({ msisdn: `6012345600\u00e9\n"${'9'.repeat(300)}` })
    const why = reasonOf(r)!
    expect(why.length).toBeLessThanOrEqual(200)
    expect(why).toMatch(/^[\x20-\x7e]+$/)
    expect(why).toContain('"6012345600\\u00e9\\n\\"')
    const long = await c.api('/subscriptions/init', { msisdn: '6'.repeat(5000), service_code: 'STREAMPLUS', country_code: 'my' })
    expect(reasonOf(long)!.length).toBeLessThanOrEqual(200)
  })

  it('no header on success', async () => {
    const r = await init({})
    expect(r.body.status).toBe('SUCCESS')
    expect(r.headers.has('x-dcb-reason')).toBe(false)
  })
})

describe('--no-reasons', () => {
  let quiet: Client
  beforeAll(async () => {
    quiet = await startClient({ reasons: false, clock: '2026-01-31T09:00:00' })
  })
  afterAll(() => quiet.close())

  it('sends no X-DCB-Reason header, and the envelope bytes are the same as with it', async () => {
    const calls: [string, unknown, string | null][] = [
      ['/subscriptions/init', { msisdn: 60123456001 }, 'sandbox-demo-key'],
      ['/subscriptions/init', {}, 'nope'],
      ['/subscriptions/init', { msisdn: '60123456107', service_code: 'STREAMPLUS', country_code: 'my' }, 'sandbox-demo-key'],
      ['/subscriptions/status', { subscription_id: 'x' }, 'sandbox-demo-key'],
      ['/nowhere', {}, 'sandbox-demo-key'],
    ]
    for (const [path, body, key] of calls) {
      const without = await quiet.api(path, body, { key })
      const withReason = await c.api(path, body, { key })
      expect(without.headers.has('x-dcb-reason')).toBe(false)
      expect(withReason.headers.has('x-dcb-reason')).toBe(true)
      expect(without.status).toBe(withReason.status)
      expect(without.text).toBe(withReason.text)
    }
    // The request log keeps the reason all the same.
    const { body } = await quiet.control('/requests?limit=1')
    expect(body.requests[0].reason).toBe('subscription_id "x" is unknown')
  })
})
