/**
 * No finding a correct integration cannot avoid or clear, through the control API of a real server.
 * A subscription whose id the merchant API never gave the merchant (an MO made it, or the answer of
 * the Verify that activated it was lost) raises neither INIT_WHILE_ACTIVE (an Init for that number is
 * the only way on) nor UNRECONCILED (no Status can be asked for it). The same subscription given to
 * the merchant raises both, as before.
 */
import { describe, expect, it } from 'vitest'
import { DEMO, useSandbox } from '../helpers.js'

const c = useSandbox({ clock: '2026-01-31T09:00:00' })

const init = (msisdn: string) => c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
async function started(msisdn: string): Promise<{ verif_request_id: string; otp: string }> {
  const r = await init(msisdn)
  expect(r.body.status).toBe('SUCCESS')
  return { verif_request_id: r.body.payload.verif_request_id, otp: (await c.control(`/otp?msisdn=${msisdn}`)).body.otp }
}
const findings = async (): Promise<Record<string, number>> =>
  Object.fromEntries((await c.control('/coverage?merchant=demo')).body.coverage[0].findings.map((f: any) => [f.code, f.count]))
const activeOf = async (msisdn: string) =>
  (await c.control(`/subscriptions?msisdn=${msisdn}`)).body.subscriptions.filter((s: any) => s.status === 'ACTIVE').length
/** The first renewal of this number fails: EXPIRED, changed outside the merchant's calls. */
const failsRenewal = (ending: string) =>
  c.control('/rules', { id: `lapse-${ending}`, match: { ending }, step: 'renewal', effect: { error: 'INSUFFICIENT_FUNDS' } })

describe('findings on a subscription the merchant was never given', () => {
  it('a Verify answer a rule cut after activating (611): no INIT_WHILE_ACTIVE on the next Init, no UNRECONCILED when it lapses', async () => {
    await failsRenewal('611')
    await c.api('/subscriptions/verify', await started('60123456611')).catch(() => 'reset')
    expect(await activeOf('60123456611')).toBe(1)
    expect((await init('60123456611')).body.message).toBe('ALREADY_SUBSCRIBED')
    await expect.poll(findings, { interval: 20 }).toEqual({})
    await c.control('/clock/advance', { by: 'P1M' })
    expect(await activeOf('60123456611')).toBe(0)
    expect(await findings()).toEqual({})
  })

  it("a gateway's page after activating (612: 502) and a Verify whose client left (505): no INIT_WHILE_ACTIVE", async () => {
    expect((await c.api('/subscriptions/verify', await started('60123456612'))).status).toBe(502)
    expect((await init('60123456612')).body.message).toBe('ALREADY_SUBSCRIBED')
    // 505 holds the answer 500 ms: the client leaves once the subscription exists (LOST_ACTIVATION is its own timeout's).
    const left = new AbortController()
    const gone = fetch(`${c.url}/subscriptions/verify`, {
      method: 'POST',
      headers: { 'api-key': DEMO, 'content-type': 'application/json' },
      body: JSON.stringify(await started('60123456505')),
      signal: left.signal,
    }).catch((e: Error) => e.name)
    await expect.poll(() => activeOf('60123456505'), { interval: 20 }).toBe(1)
    left.abort()
    expect(await gone).toBe('AbortError')
    await expect.poll(findings, { interval: 20 }).toEqual({ LOST_ACTIVATION: 1 })
    expect((await init('60123456505')).body.message).toBe('ALREADY_SUBSCRIBED')
    expect(await findings()).toEqual({ LOST_ACTIVATION: 1 })
  })

  it('an MO-made subscription: an Init for the number raises no INIT_WHILE_ACTIVE', async () => {
    expect((await c.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'STREAM' })).body.action).toBe('subscribed')
    expect((await init('60133456001')).body.message).toBe('ALREADY_SUBSCRIBED')
    expect(await findings()).toEqual({})
  })

  it('a subscription the merchant was given raises both, as before', async () => {
    await failsRenewal('088')
    const v = await c.api('/subscriptions/verify', await started('60123456088'))
    expect(v.body.status).toBe('SUCCESS')
    expect((await init('60123456088')).body.message).toBe('ALREADY_SUBSCRIBED')
    expect(await findings()).toEqual({ INIT_WHILE_ACTIVE: 1 })
    await c.control('/clock/advance', { by: 'P1M' })
    expect(await findings()).toEqual({ INIT_WHILE_ACTIVE: 1, UNRECONCILED: 1 })
    await c.api('/subscriptions/status', { subscription_id: v.body.payload.subscription_id })
    expect(await findings()).toEqual({ INIT_WHILE_ACTIVE: 1 })
  })
})
