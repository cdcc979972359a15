/**
 * `dcb serve --max-subscriptions N`: each session keeps at most N subscriptions and refuses a new one
 * past them (Verify: 500 ERROR with the reason), dropping none. A data file seeded past the cap still
 * loads and serves what it holds (the cap refuses only new ones); the refused verification is left as
 * it was, so the same Verify succeeds once the server runs with room. Through the binary.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { subscriptionCapReason } from '../../src/core/limits.js'
import { DEMO, tempDir } from '../helpers.js'
import { dcb, serve, type Served } from './run.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())

async function merchant(base: string, op: 'init' | 'verify' | 'status', body: unknown) {
  const res = await fetch(`${base}/subscriptions/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': DEMO },
    body: JSON.stringify(body),
  })
  return { http: res.status, body: (await res.json()) as any, reason: res.headers.get('x-dcb-reason') }
}

describe('dcb serve --max-subscriptions', () => {
  describe('a data file seeded past the cap, served with a cap of 3, then with room', () => {
    // The tests are the steps of one flow on one data file: they run in order, each after the last.
    const data = join(tmp.dir, 'sandbox.json')
    let small: Served
    let roomy: Served | undefined
    let verify: { verif_request_id: string; otp: string }
    beforeAll(async () => {
      expect((await dcb(['seed', '--subscriptions', '5', '--data', data])).code).toBe(0)
      small = await serve(['--data', data, '--max-subscriptions', '3'])
    })
    afterAll(async () => {
      await small?.stop('SIGKILL')
      await roomy?.stop('SIGKILL')
    })

    it('loads and serves every subscription the file holds', async () => {
      const listed = (await (await fetch(`${small.url}/_sandbox/subscriptions`)).json()) as { subscriptions: { subscription_id: string }[] }
      expect(listed.subscriptions).toHaveLength(5)
      const seeded = await merchant(small.url, 'status', { subscription_id: listed.subscriptions[0]!.subscription_id })
      expect([seeded.http, seeded.body.payload.status]).toEqual([200, 'ACTIVE'])
    })

    it("refuses a new subscription's Verify with the cap as the reason", async () => {
      const init = await merchant(small.url, 'init', { msisdn: '60123456010', service_code: 'STREAMPLUS', country_code: 'my' })
      expect(init.http).toBe(200)
      const { otp } = (await (await fetch(`${small.url}/_sandbox/otp?msisdn=60123456010`)).json()) as { otp: string }
      verify = { verif_request_id: init.body.payload.verif_request_id, otp }
      expect(await merchant(small.url, 'verify', verify)).toEqual({
        http: 500,
        body: { status: 'FAIL', message: 'ERROR', status_code: 500, payload: null },
        reason: subscriptionCapReason(3),
      })
    })

    it('verifies the refused subscription once restarted with room', async () => {
      expect(await small.stop('SIGTERM')).toBe(0)
      roomy = await serve(['--data', data, '--max-subscriptions', '6'])
      const verified = await merchant(roomy.url, 'verify', verify)
      expect([verified.http, verified.body.status]).toEqual([200, 'SUCCESS'])
      expect(await roomy.stop('SIGTERM')).toBe(0)
    })
  })

  it('is a whole number from 1: anything else is a usage error naming the flag', async () => {
    for (const bad of ['0', 'many']) {
      const r = await dcb(['serve', '--in-memory', '--port', '0', '--max-subscriptions', bad])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('--max-subscriptions')
    }
  })
})
