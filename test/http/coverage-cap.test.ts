/**
 * Coverage at the per-session subscription cap (`maxSubscriptions`, `dcb serve --max-subscriptions`):
 * whichever flow the cap refuses counts the ERROR it answered, so a merchant's report shows the cap
 * was hit. A Verify counted its 500 (verify.ERROR_500); an MO (rejected ERROR) and a consent approval
 * (FAIL ERROR) counted nothing. Now they count as an MO's and a consent's ERROR do: mo.charge_failed,
 * consent.charge_failed. Through a real server over loopback.
 */
import { describe, expect, it } from 'vitest'
import { subscriptionCapReason } from '../../src/core/limits.js'
import { useSandbox } from '../helpers.js'

// Room for one subscription: each test fills it (an OTP flow), then a flow meets the cap.
const c = useSandbox({ clock: '2026-01-31T09:00:00', maxSubscriptions: 1 })

/** The outcomes demo's traffic exercised, with their counts (those seen only). */
async function counted(): Promise<Record<string, number>> {
  const r = await c.control('/coverage?merchant=demo')
  expect(r.status).toBe(200)
  const [demo] = r.body.coverage as { outcomes: { id: string; count: number }[] }[]
  return Object.fromEntries(demo!.outcomes.filter((o) => o.count).map((o) => [o.id, o.count]))
}

/** The session's one subscription (its OTP flow counts init.otp and verify.SUCCESS). */
async function fill(): Promise<void> {
  await c.subscribe('60123456001')
  expect(await counted()).toEqual({ 'init.otp': 1, 'verify.SUCCESS': 1 })
}

describe('coverage at the subscription cap, by the flow the cap refused', () => {
  it('a Verify counts the 500 ERROR it answered (verify.ERROR_500)', async () => {
    await fill()
    const init = await c.api('/subscriptions/init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' })
    const otp = (await c.control('/otp?msisdn=60123456002')).body.otp
    const verify = await c.api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp })
    expect([verify.status, verify.body.message, verify.headers.get('x-dcb-reason')]).toEqual([500, 'ERROR', subscriptionCapReason(1)])
    expect(await counted()).toEqual({ 'init.otp': 2, 'verify.SUCCESS': 1, 'verify.ERROR_500': 1 })
  })

  describe('a PSMS MO', () => {
    /** The session filled, then a keyword MO from 004; answers the MO's answer. */
    async function moAtCap() {
      await fill()
      return c.control('/mo', { msisdn: '60133456004', short_code: '32123', text: 'STREAM' })
    }

    it('is still rejected with ERROR naming the cap', async () => {
      expect((await moAtCap()).body).toEqual({ action: 'rejected', code: 'ERROR', reason: subscriptionCapReason(1) })
    })

    it('counts the ERROR it answered (mo.charge_failed)', async () => {
      await moAtCap()
      expect(await counted()).toEqual({ 'init.otp': 1, 'verify.SUCCESS': 1, 'mo.charge_failed': 1 })
    })

    it('sends no failure SMS', async () => {
      await moAtCap()
      expect((await c.control('/sms?msisdn=60133456004')).body.messages.map((m: { kind: string }) => m.kind)).toEqual(['mo'])
    })
  })

  it('a consent approval counts the FAIL ERROR it went back with (consent.charge_failed)', async () => {
    await fill()
    const init = await c.api('/subscriptions/init', { msisdn: '359881234001', service_code: 'STREAMPLUS', country_code: 'bg' })
    const approve = await fetch(init.body.payload.redirect_url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=approve',
    })
    expect(new URL(approve.headers.get('location')!, c.url).searchParams.toString()).toBe('status=FAIL&message=ERROR')
    expect(await counted()).toEqual({ 'init.otp': 1, 'verify.SUCCESS': 1, 'init.redirect': 1, 'consent.charge_failed': 1 })
  })
})
