import { describe, expect, it } from 'vitest'
import { checkBody, type MerchantOperation } from '../../src/contract/merchant-calls.js'
import { bodyReason, REASON_MAX } from '../../src/http/reason.js'
import { useSandbox } from '../helpers.js'

const reasonOf = (op: MerchantOperation, body: unknown) => {
  const r = checkBody(op, body as Record<string, unknown>)
  if (!('problem' in r)) throw new Error('parsed')
  return bodyReason(r.problem, body as Record<string, unknown>)
}

describe('why a schema failure was answered', () => {
  const init = { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }

  it('says which rule of which field the body broke, echoing the input', () => {
    expect(reasonOf('init', { ...init, country_code: 'MY' })).toBe('country_code: must be lower case (got "MY")')
    expect(reasonOf('init', { ...init, country_code: 'mys' })).toBe('country_code: must be two lower-case letters (ISO-3166-1 alpha-2, e.g. "my") (got "mys")')
    expect(reasonOf('init', { ...init, msisdn: undefined })).toBe('msisdn: required')
    expect(reasonOf('init', { ...init, msisdn: 60123456001 })).toBe('msisdn: must be a string (got number 60123456001)')
    expect(reasonOf('init', { ...init, service_code: '' })).toBe('service_code: must not be empty')
    expect(reasonOf('verify', { verif_request_id: 'x', otp: ['1'] })).toBe('otp: must be a string (got an array)')
  })

  it('is one line of printable ASCII, at most 200 characters, whatever the input', () => {
    const r = reasonOf('init', { ...init, country_code: 'é\n"' + 'x'.repeat(500) })
    expect(r).toMatch(/^[\x20-\x7e]+$/)
    expect(r.length).toBeLessThanOrEqual(REASON_MAX)
    expect(r).toContain('(got "\\u00e9\\n\\"xx')
  })
})

describe('the request log keeps why a 400 was answered', () => {
  const c = useSandbox()

  it('as reason, on the merchant call that failed its schema only', async () => {
    await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'MY' })
    await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    const [ok, bad] = (await c.control('/requests')).body.requests
    expect(bad.http_status).toBe(400)
    expect(bad.reason).toBe('country_code: must be lower case (got "MY")')
    expect(ok.http_status).toBe(200)
    expect(ok.reason).toBeNull()
  })
})
