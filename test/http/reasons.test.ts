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
  it('405 names the method to use', async () => {
    expect(reasonOf(await c.api('/subscriptions/init', undefined, { method: 'GET' }))).toBe('method "GET" is not allowed on /subscriptions/init: use POST')
  })

  it('404 lists the paths of the merchant API', async () => {
    expect(reasonOf(await c.api('/subscriptions/cancel', {}))).toBe(
      'no merchant API path "/subscriptions/cancel" for "POST": the paths are POST /subscriptions/init, /subscriptions/verify and /subscriptions/status',
    )
  })

  it('413 names the size limit', async () => {
    const big = await c.api('/subscriptions/init', undefined, { raw: JSON.stringify({ msisdn: 'x'.repeat(70_000) }) })
    expect(big.status).toBe(413)
    expect(reasonOf(big)).toBe('the body is larger than 65536 bytes (64 KiB)')
  })

  describe('400: each problem of a request gets its own reason', () => {
    const initBody = JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })

    it('no Content-Type', async () => {
      const none = await rawPost(`${c.url}/subscriptions/init`, { 'api-key': 'sandbox-demo-key' }, initBody)
      expect(none.status).toBe(400)
      expect(none.reason).toBe('no Content-Type header: send Content-Type: application/json')
    })

    it('a Content-Type that is not JSON', async () => {
      const body = initBody
      const plain = await rawPost(`${c.url}/subscriptions/init`, { 'api-key': 'sandbox-demo-key', 'content-type': 'text/plain' }, body)
      expect(plain.reason).toBe('Content-Type "text/plain" is not application/json')
    })

    describe('Content-Encoding', () => {
      const body = initBody
      const headers = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }

      it('a compressed body is named as such, not as JSON that does not parse', async () => {
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
      })

      it('identity is a plain body', async () => {
        expect((await rawPost(`${c.url}/subscriptions/init`, { ...headers, 'content-encoding': 'identity' }, body)).status).toBe(200)
      })

      // The control API reads its bodies the same way, and says so in its error JSON.
      it('the control API names a compressed body in its error JSON', async () => {
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

  describe('401 and 403 name the check that failed', () => {
    it('401 without an API-KEY says to send one', async () => {
      expect(reasonOf(await c.api('/subscriptions/init', {}, { key: null }))).toBe('no API-KEY header: send the API-KEY of a merchant')
    })

    it('401 for an API-KEY of no merchant says so', async () => {
      expect(reasonOf(await c.api('/subscriptions/init', {}, { key: 'no-such-key' }))).toBe('the API-KEY is not the key of any merchant')
    })

    it('401 for an inactive merchant names it', async () => {
      expect(reasonOf(await c.api('/subscriptions/init', {}, { key: 'sandbox-inactive-key' }))).toBe('merchant inactive is not active')
    })

    it('403 off the allowlist names the source IP', async () => {
      const ip = await c.api('/subscriptions/init', {}, { key: 'sandbox-offsite-key' })
      expect(ip.status).toBe(403)
      expect(reasonOf(ip)).toBe('source IP 127.0.0.1 is not in the allowlist of merchant offsite')
    })
  })

  const initBody = JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })

  it('an API-KEY header sent twice is named as such, even when both copies are a merchant key (Node joins them into no key)', async () => {
    const body = initBody
    const twice = await rawPost(
      `${c.url}/subscriptions/init`,
      { 'api-key': ['sandbox-demo-key', 'sandbox-demo-key'], 'content-type': 'application/json' },
      body,
    )
    expect(twice.status).toBe(401)
    expect(twice.reason).toBe("the API-KEY header was sent 2 times: send it once, with one merchant's key")
  })

  it('an API-KEY header sent once with that key is taken', async () => {
    const body = initBody
    const once = await rawPost(`${c.url}/subscriptions/init`, { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }, body)
    expect(once.status).toBe(200)
  })

  it('403 MERCHANT_SERVICE_NOT_CONFIGURED names the service with no integration in the country', async () => {
    const r = await init({ msisdn: '359871234001', service_code: 'GAMECLUB', country_code: 'bg' })
    expect(r.status).toBe(403)
    expect(reasonOf(r)).toBe('service GAMECLUB has no integration in bg')
  })

  it('names a service the merchant does not have', async () => {
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

    describe('Verify', () => {
      /** An Init for 201 (its first charge fails), then a Verify with a wrong OTP; answers the request and that Verify. */
      async function wrongOtp() {
        const first = await init({ msisdn: '60123456201' })
        const id = first.body.payload.verif_request_id
        return { id, wrong: await c.api('/subscriptions/verify', { verif_request_id: id, otp: 'nope' }) }
      }
      /** Then a Verify with the OTP sent; answers the request, its OTP and that Verify. */
      async function charged() {
        const { id } = await wrongOtp()
        const { body: otp } = await c.control('/otp?msisdn=60123456201')
        return { id, otp, charged: await c.api('/subscriptions/verify', { verif_request_id: id, otp: otp.otp }) }
      }

      it('with a wrong OTP names the attempt', async () => {
        const { wrong } = await wrongOtp()
        expect(wrong.body.message).toBe('INVALID_PIN')
        expect(reasonOf(wrong)).toBe('otp "nope" is not the OTP sent to 60123456201 (wrong attempt 1 of 3)')
      })

      it('with a failed first charge names the rule', async () => {
        const r = (await charged()).charged
        expect(r.body.message).toBe('INSUFFICIENT_FUNDS')
        expect(reasonOf(r)).toBe('rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS')
      })

      it('of a request used already names its outcome', async () => {
        const { id, otp } = await charged()
        expect(reasonOf(await c.api('/subscriptions/verify', { verif_request_id: id, otp: otp.otp }))).toBe(
          `verification request ${id} was used already (INSUFFICIENT_FUNDS)`,
        )
      })
    })

    describe('a failed renewal', () => {
      const why = 'rule renewal-303 (ending 303): renewal INSUFFICIENT_FUNDS'
      /** A subscription for 303 (its renewal fails) and the month's clock move. */
      async function renewalFailed() {
        const sub = await c.subscribe('60123456303')
        return { sub, moved: await c.control('/clock/advance', { by: 'P1M' }) }
      }

      it('names the rule in its event in the clock move', async () => {
        const { sub, moved } = await renewalFailed()
        expect(moved.body.events).toEqual([expect.objectContaining({ type: 'renewal_failed', subscription_id: sub, code: 'INSUFFICIENT_FUNDS', reason: why })])
      })

      it('names the rule in its charge in the subscription', async () => {
        const { sub } = await renewalFailed()
        const { body } = await c.control(`/subscriptions/${sub}`)
        expect(body.charges.map((ch: { kind: string; reason?: string }) => [ch.kind, ch.reason])).toEqual([
          ['first', undefined],
          ['renewal', why],
        ])
      })
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

  describe('never names another merchant', () => {
    /** The other merchant's subscription (002) and verification (003), then demo's calls naming them, its service, and one off the allowlist. */
    async function callsOnTheirs() {
      const theirs = await c.subscribe('60123456002', 'NEWSDAILY', 'my', 'sandbox-other-key')
      const other = await c.api('/subscriptions/init', { msisdn: '60123456003', service_code: 'NEWSDAILY', country_code: 'my' }, { key: 'sandbox-other-key' })
      const theirVerif = other.body.payload.verif_request_id
      const status = await c.api('/subscriptions/status', { subscription_id: theirs })
      const unknown = await c.api('/subscriptions/status', { subscription_id: 'no-such-id' })
      const verify = await c.api('/subscriptions/verify', { verif_request_id: theirVerif, otp: '0000' })
      const service = await init({ service_code: 'NEWSDAILY' })
      const offsite = await c.api('/subscriptions/init', {}, { key: 'sandbox-offsite-key' })
      return { theirs, theirVerif, status, unknown, verify, service, offsite }
    }

    it('its subscription reads as an unknown one', async () => {
      const { theirs, status, unknown } = await callsOnTheirs()
      expect(status.body.message).toBe('SUBSCRIPTION_NOT_FOUND')
      expect(reasonOf(status)).toBe(`subscription_id "${theirs}" is unknown`)
      expect(reasonOf(unknown)).toBe('subscription_id "no-such-id" is unknown')
    })

    it('its verification reads as an unknown one', async () => {
      const { theirVerif, verify } = await callsOnTheirs()
      expect(reasonOf(verify)).toBe(`verif_request_id "${theirVerif}" is unknown`)
    })

    it('its service reads as one the merchant does not have', async () => {
      const { service } = await callsOnTheirs()
      expect(reasonOf(service)).toBe('merchant demo has no service "NEWSDAILY"')
    })

    // The request log does not tell the other merchant's MSISDN to these calls either.
    it("the request log does not tell its MSISDN to the merchant's calls", async () => {
      await callsOnTheirs()
      const { body } = await c.control('/requests?limit=10')
      const mine = body.requests.filter((e: any) => e.merchant === 'demo' && e.message !== '')
      expect(mine.map((e: any) => e.msisdn)).toEqual(expect.arrayContaining([null]))
      for (const e of mine) expect(e.msisdn).not.toBe('60123456002')
    })

    it('no reason tells its name, key, numbers or allowlist', async () => {
      const { status, verify, service, offsite } = await callsOnTheirs()
      for (const r of [status, verify, service, offsite]) {
        const why = reasonOf(r)!
        expect(why).not.toMatch(/other|sandbox-.*-key|60123456002|60123456003|127\.0\.0\.0\/8|203\.0\.113/)
      }
    })
  })

  describe('its form', () => {
    const odd = () => init({ msisdn: `6012345600\u00e9\n"${'9'.repeat(300)}` })

    it('is at most 200 characters', async () => {
      expect(reasonOf(await odd())!.length).toBeLessThanOrEqual(200)
      const long = await c.api('/subscriptions/init', { msisdn: '6'.repeat(5000), service_code: 'STREAMPLUS', country_code: 'my' })
      expect(reasonOf(long)!.length).toBeLessThanOrEqual(200)
    })

    it('is one line of printable ASCII', async () => {
      expect(reasonOf(await odd())!).toMatch(/^[\x20-\x7e]+$/)
    })

    it('JSON-escapes echoed input', async () => {
      expect(reasonOf(await odd())!).toContain('"6012345600\\u00e9\\n\\"')
    })
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

  type Answer = Awaited<ReturnType<Client['api']>>
  // Each call, answered without reasons and with them.
  const pairs: [string, Answer, Answer][] = []
  let logged: any
  beforeAll(async () => {
    await c.control('/reset', {})
    const calls: [string, unknown, string | null][] = [
      ['/subscriptions/init', { msisdn: 60123456001 }, 'sandbox-demo-key'],
      ['/subscriptions/init', {}, 'nope'],
      ['/subscriptions/init', { msisdn: '60123456107', service_code: 'STREAMPLUS', country_code: 'my' }, 'sandbox-demo-key'],
      ['/subscriptions/status', { subscription_id: 'x' }, 'sandbox-demo-key'],
      ['/nowhere', {}, 'sandbox-demo-key'],
    ]
    for (const [path, body, key] of calls) pairs.push([path, await quiet.api(path, body, { key }), await c.api(path, body, { key })])
    logged = (await quiet.control('/requests?limit=1')).body
  })

  it('sends no X-DCB-Reason header where a sandbox with reasons sends one', () => {
    for (const [, without, withReason] of pairs) {
      expect(without.headers.has('x-dcb-reason')).toBe(false)
      expect(withReason.headers.has('x-dcb-reason')).toBe(true)
    }
  })

  it('answers the same status as with reasons', () => {
    for (const [, without, withReason] of pairs) expect(without.status).toBe(withReason.status)
  })

  it('answers the same envelope bytes as with reasons', () => {
    for (const [, without, withReason] of pairs) expect(without.text).toBe(withReason.text)
  })

  // The request log keeps the reason all the same.
  it('the request log keeps the reason all the same', () => {
    expect(logged.requests[0].reason).toBe('subscription_id "x" is unknown')
  })
})
