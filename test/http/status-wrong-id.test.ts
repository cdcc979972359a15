/**
 * Status with the id of a verification or consent request, not a subscription's: 404
 * SUBSCRIPTION_NOT_FOUND as for any unknown id, and the reason (header and request log) says what
 * the id is and where the subscription_id comes from. Another merchant's request still reads as unknown.
 */
import { describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'

const c = useSandbox()
const status = (subscription_id: string, key?: string) => c.api('/subscriptions/status', { subscription_id }, key ? { key } : {})

describe('Status with a verification or consent request id', () => {
  const initOtp = async () => {
    const otp = await c.api('/subscriptions/init', { msisdn: '60123456302', service_code: 'STREAMPLUS', country_code: 'my' })
    return otp.body.payload.verif_request_id as string
  }
  const verifyOtp = async (id: string) => {
    const code = (await c.control('/otp?msisdn=60123456302')).body.otp
    return (await c.api('/subscriptions/verify', { verif_request_id: id, otp: code })).body.payload.subscription_id as string
  }

  it("an OTP verification's id before its Verify: 404, the reason saying to Verify it", async () => {
    const id = await initOtp()
    const before = await status(id)
    expect(before.status).toBe(404)
    expect(before.body).toMatchObject({ status: 'FAIL', message: 'SUBSCRIPTION_NOT_FOUND' })
    expect(before.headers.get('x-dcb-reason')).toBe(
      `subscription_id "${id}" is a verification's id (verif_request_id of an Init for 60123456302), not a subscription's: Verify it to get a subscription_id`,
    )
  })

  it("an OTP verification's id after its Verify: 404, the reason naming the subscription it gave", async () => {
    const id = await initOtp()
    const sub = await verifyOtp(id)
    const after = await status(id)
    expect(after.status).toBe(404)
    expect(after.headers.get('x-dcb-reason')).toBe(
      `subscription_id "${id}" is a verification's id (verif_request_id of an Init for 60123456302), not a subscription's: its Verify gave ${sub}`,
    )
  })

  it("an OTP verification's id: the request log keeps the reason of the header", async () => {
    const id = await initOtp()
    await verifyOtp(id)
    const reason = (await status(id)).headers.get('x-dcb-reason')
    const log = await c.control('/requests?limit=1')
    expect(log.body.requests[0]).toMatchObject({ path: '/subscriptions/status', http_status: 404, reason, msisdn: '60123456302' })
  })

  it("a consent request's id (redirect flow)", async () => {
    const init = await c.api('/subscriptions/init', { msisdn: '359881234001', service_code: 'STREAMPLUS', country_code: 'bg' })
    const url = init.body.payload.redirect_url as string
    const id = decodeURIComponent(url.slice(url.lastIndexOf('/') + 1))
    const r = await status(id)
    expect(r.status).toBe(404)
    expect(r.body.message).toBe('SUBSCRIPTION_NOT_FOUND')
    expect(r.headers.get('x-dcb-reason')).toBe(
      `subscription_id "${id}" is a consent request's id (of an Init for 359881234001), not a subscription's: the return URL brings the subscription_id once approved`,
    )
  })

  it("another merchant's verification reads as an unknown id", async () => {
    const other = await c.api('/subscriptions/init', { msisdn: '60123456003', service_code: 'NEWSDAILY', country_code: 'my' }, { key: 'sandbox-other-key' })
    const id = other.body.payload.verif_request_id as string
    const r = await status(id)
    expect(r.status).toBe(404)
    expect(r.headers.get('x-dcb-reason')).toBe(`subscription_id "${id}" is unknown`)
    // Its own merchant is told what it is.
    expect((await status(id, 'sandbox-other-key')).headers.get('x-dcb-reason')).toMatch(/is a verification's id/)
  })
})
