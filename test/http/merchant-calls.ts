/** What the merchant API's tests (merchant.test.ts, merchant-flows.test.ts) share: an Init with defaults, and the checks of a FAIL envelope. */
import { expect } from 'vitest'
import type { Client } from '../helpers.js'

/** An Init of the demo service in Malaysia for `msisdn`, with fields added or replaced, and another API key. */
export const initWith =
  (c: Client) =>
  (msisdn: string, extra: Record<string, unknown> = {}, key?: string) =>
    c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my', ...extra }, { key })

/** A FAIL envelope with this HTTP status and message; its payload null or absent. */
export function expectFail(r: { status: number; body: any; text: string }, http: number, message: string, payload: 'null' | 'absent') {
  expect(r.status).toBe(http)
  expect(Object.keys(r.body)).toEqual(payload === 'null' ? ['status', 'message', 'status_code', 'payload'] : ['status', 'message', 'status_code'])
  expect(r.body.status).toBe('FAIL')
  expect(r.body.message).toBe(message)
  expect(r.body.status_code).toBe(http)
  if (payload === 'null') expect(r.body.payload).toBeNull()
}
