import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { InitBody, StatusBody, VerifyBody } from '../../src/contract/merchant.js'
import { checkBody, type MerchantOperation } from '../../src/contract/merchant-calls.js'

/** The input `checkBody` makes of a body, or undefined when it refuses it. */
const checked = (op: MerchantOperation) => (b: Record<string, unknown>) => {
  const r = checkBody(op, b)
  return 'input' in r ? r.input : undefined
}
const quickInit = checked('init')
const quickVerify = checked('verify')
const quickStatus = checked('status')

const text = fc.oneof(
  fc.constantFrom('', 'my', 'MY', 'gb', 'm', 'myy', 'en', 'ms-MY', 'zh-Hant-TW', 'e', 'x-', 'en-', 'STREAMPLUS', '60123456001', '1234'),
  fc.string({ maxLength: 12 }),
)
const value = fc.oneof(
  text,
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(text, fc.integer(), { maxKeys: 2 }),
)
/** A field: often a value the schema takes, else anything. */
const field = (good: fc.Arbitrary<unknown>) => fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: value })
const body = fc.record(
  {
    msisdn: field(fc.constantFrom('60123456001', '', 'x')),
    service_code: field(fc.constantFrom('STREAMPLUS', 'Q')),
    country_code: field(fc.constantFrom('my', 'gb')),
    language: field(fc.constantFrom('en', 'ms-MY', 'zh-Hant-TW', null)),
    verif_request_id: field(fc.uuid()),
    otp: field(fc.constantFrom('1234', '0')),
    subscription_id: field(fc.uuid()),
    extra: value,
  },
  { requiredKeys: [] },
)

/** The one check takes a body exactly when the schema (OpenAPI's, made from the same fields) does, and answers the schema's output, key order included. */
function agrees(quick: (b: Record<string, unknown>) => unknown, schema: { safeParse(v: unknown): { success: boolean; data?: unknown } }) {
  let taken = 0
  fc.assert(
    fc.property(body, (b) => {
      const fast = quick(b)
      const slow = schema.safeParse(b)
      if (fast === undefined) return void expect(slow.success).toBe(false)
      taken++
      expect(slow.success).toBe(true)
      expect(JSON.stringify(fast)).toBe(JSON.stringify(slow.data))
    }),
    { numRuns: 3000 },
  )
  return taken
}

describe('a merchant body checked once, from its declared fields', () => {
  it('takes the Init bodies the schema takes, as the schema makes them', () => {
    expect(agrees(quickInit, InitBody)).toBeGreaterThan(0)
  })

  it('takes the Verify bodies the schema takes, as the schema makes them', () => {
    expect(agrees(quickVerify, VerifyBody)).toBeGreaterThan(0)
  })

  it('takes the Status bodies the schema takes, as the schema makes them', () => {
    expect(agrees(quickStatus, StatusBody)).toBeGreaterThan(0)
  })

  it('takes an Init body with an extra field but no language as the schema makes it', () => {
    expect(quickInit({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my', note: 1 })).toEqual(
      InitBody.parse({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my', note: 1 }),
    )
  })

  it('keeps a null language of an Init body', () => {
    expect(quickInit({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my', language: null })).toEqual({
      msisdn: '60123456001',
      service_code: 'STREAMPLUS',
      country_code: 'my',
      language: null,
    })
  })

  it('takes a Verify body with a language', () => {
    expect(quickVerify({ verif_request_id: 'a', otp: '1234', language: 'ms-MY' })).toEqual({ verif_request_id: 'a', otp: '1234', language: 'ms-MY' })
  })

  it('leaves extra fields out of a Status body', () => {
    expect(quickStatus({ subscription_id: 'x', more: true })).toEqual({ subscription_id: 'x' })
  })

  it('refuses the bodies the schema refuses', () => {
    expect(quickInit({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'MY' })).toBeUndefined()
    expect(quickInit({ msisdn: 60123456001, service_code: 'STREAMPLUS', country_code: 'my' })).toBeUndefined()
    expect(quickInit({ msisdn: '60123456001', service_code: '', country_code: 'my' })).toBeUndefined()
    expect(quickInit({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my', language: 'e' })).toBeUndefined()
    expect(quickVerify({ verif_request_id: 'a', otp: '' })).toBeUndefined()
    expect(quickStatus({ subscription_id: 7 })).toBeUndefined()
  })
})
