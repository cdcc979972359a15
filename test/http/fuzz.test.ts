import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, type Client } from '../helpers.js'

let c: Client
beforeAll(async () => {
  c = await startClient()
})
afterAll(() => c.close())

const ascii = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./ :;=+'.split('')), maxLength: 40 })
const msisdn = fc.oneof(fc.stringMatching(/^(6012|6013|6019|603|447700|447701|35987|35988)\d{4,8}$/), fc.string({ maxLength: 20 }), fc.integer())
const fieldValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(ascii, fc.integer(), { maxKeys: 2 }),
)
const body = fc.oneof(
  fc
    .record(
      {
        msisdn,
        service_code: fc.oneof(fc.constantFrom('STREAMPLUS', 'GAMECLUB', 'QUICKTEST', 'NEWSDAILY', ''), fieldValue),
        country_code: fc.oneof(fc.constantFrom('my', 'gb', 'bg', 'GB', 'us', ''), fieldValue),
        language: fc.oneof(fc.constantFrom('en', 'ms-MY', 'e', 'zz', 'x-'), fieldValue),
        verif_request_id: fc.oneof(fc.uuid(), fieldValue),
        otp: fc.oneof(fc.stringMatching(/^\d{4}$/), fieldValue),
        subscription_id: fc.oneof(fc.uuid(), fieldValue),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.json().map(String),
  fc.string({ maxLength: 200 }),
  fc.constant(''),
)

const request = fc.record({
  method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
  path: fc.oneof(
    fc.constantFrom('/subscriptions/init', '/subscriptions/verify', '/subscriptions/status'),
    ascii.map((s) => {
      // Random paths, but not the sandbox's own pages (front page, consent pages, control API, OpenAPI).
      const raw = '/' + s.replace(/[^A-Za-z0-9/_.-]/g, '')
      // As the client will send it (fetch resolves dot segments: "/." is "/").
      const p = new URL('http://x' + raw).pathname
      return p === '/' || /^\/(_sandbox|consent|openapi\.json)/.test(p) ? `/subscriptions${p}` : p
    }),
  ),
  key: fc.option(
    fc.oneof(fc.constantFrom('sandbox-demo-key', 'sandbox-other-key', 'sandbox-inactive-key', 'sandbox-offsite-key', 'sandbox-demo-key-2'), ascii),
    { nil: undefined },
  ),
  contentType: fc.option(fc.oneof(fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'APPLICATION/JSON'), ascii), {
    nil: undefined,
  }),
  body,
})

describe('fuzzing the merchant API', () => {
  // The 2,000 random requests are sent once; each test checks one property of every answer.
  // Each failure names the request (fast-check's shrinking is given up for that).
  type Sent = { r: typeof request extends fc.Arbitrary<infer R> ? R : never; status: number; text: string }
  const sent: Sent[] = []
  beforeAll(async () => {
    for (const r of fc.sample(request, 2000)) {
      const headers: Record<string, string> = {}
      if (r.key !== undefined) headers['api-key'] = r.key
      if (r.contentType !== undefined) headers['content-type'] = r.contentType
      const res = await fetch(c.url + r.path, { method: r.method, headers, body: r.method === 'GET' ? undefined : r.body })
      sent.push({ r, status: res.status, text: await res.text() })
    }
  }, 60_000)

  it('answers every random request with a valid envelope', () => {
    expect(sent).toHaveLength(2000)
    for (const { r, status, text } of sent) {
      const why = JSON.stringify(r)
      // An answer that is not JSON fails naming its request, not with a bare SyntaxError.
      let env: any
      try {
        env = JSON.parse(text)
      } catch {
        expect.fail(`not JSON (${text.slice(0, 200)}) for ${why}`)
      }
      expect(Object.keys(env).slice(0, 3), why).toEqual(['status', 'message', 'status_code'])
      expect(['SUCCESS', 'FAIL'], why).toContain(env.status)
      expect(env.status_code, why).toBe(status)
      expect(typeof env.message, why).toBe('string')
      if (env.status === 'SUCCESS') expect(env.message, why).toBe('')
    }
  })

  it('answers 500 only for the magic ending 150', () => {
    for (const { r, status } of sent) if (status === 500) expect(r.body, JSON.stringify(r)).toMatch(/"msisdn":"\d*150"/)
  })
})
