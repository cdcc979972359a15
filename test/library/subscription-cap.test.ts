/**
 * Each session keeps at most `maxSubscriptions` subscriptions (default 100,000), canceled ones too:
 * every subscription was acknowledged to a merchant, so none is dropped to make room. Past the cap a
 * new one is refused by the sandbox, not by a carrier (Verify: 500 ERROR with a reason naming the cap
 * and the way out; an MO or a consent page: refused with ERROR, nothing charged, coverage counting the
 * ERROR each answered), the verification left as it was; a reset makes room. Other sessions have their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox, SandboxError, type Sandbox, type SandboxSession } from '../../src/index.js'
import { DEFAULT_MAX_SUBSCRIPTIONS, subscriptionCapReason } from '../../src/core/limits.js'

/** An OTP flow's Init and Verify; answers the Verify's answer and the verification's id. */
async function otpFlow(s: SandboxSession, msisdn: string) {
  const init = await s.init({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
  if (init.envelope.status !== 'SUCCESS') throw new Error(JSON.stringify(init))
  const id = init.envelope.payload.verif_request_id!
  const { otp } = await s.otp(msisdn)
  return { verify: () => s.verify({ verif_request_id: id, otp }), id, otp }
}

describe('the cap on subscriptions per session', () => {
  it('names the cap with the way out in its reason, briefly', () => {
    expect(subscriptionCapReason(100_000).length).toBeLessThanOrEqual(200)
    expect(subscriptionCapReason(2)).toBe(
      'the session holds its limit of 2 subscriptions, canceled ones too (--max-subscriptions; library: maxSubscriptions): reset it (POST /_sandbox/reset) or raise the limit',
    )
  })

  // The tests run in order on one sandbox: fill the cap, be refused, then make room.
  describe('a session at maxSubscriptions 2, a canceled one among them, in order', () => {
    let sandbox: Sandbox
    const reason = subscriptionCapReason(2)
    beforeAll(async () => {
      sandbox = await createSandbox({ maxSubscriptions: 2, clock: '2026-01-31T00:00:00' })
    })
    afterAll(() => sandbox.close())

    it('takes subscriptions up to the cap', async () => {
      const first = await (await otpFlow(sandbox, '60123456001')).verify()
      expect(first.envelope.status).toBe('SUCCESS')
      expect((await sandbox.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' })).action).toBe('subscribed')
      await sandbox.cancel((first.envelope.payload as { subscription_id: string }).subscription_id)
    })

    it('refuses a Verify past the cap, canceled ones counted, with 500 ERROR giving the reason', async () => {
      const third = await otpFlow(sandbox, '60123456003')
      expect(await third.verify()).toEqual({
        httpStatus: 500,
        envelope: { status: 'FAIL', message: 'ERROR', status_code: 500, payload: null },
        reason,
      })
    })

    it('refuses an MO past the cap with ERROR', async () => {
      expect(await sandbox.mo({ msisdn: '60133456004', short_code: '32123', text: 'STREAM' })).toEqual({ action: 'rejected', code: 'ERROR', reason })
    })

    it('refuses a consent approval past the cap with ERROR', async () => {
      const consentInit = await sandbox.init({ msisdn: '359881234001', service_code: 'STREAMPLUS', country_code: 'bg' })
      if (consentInit.envelope.status !== 'SUCCESS') throw new Error(JSON.stringify(consentInit))
      const page = consentInit.envelope.payload.redirect_url!
      expect((await sandbox.consent(page, 'approve')).location).toMatch(/status=FAIL&message=ERROR/)
    })

    it('drops no subscription to make room', async () => {
      const kept = (await sandbox.subscriptions()).subscriptions
      expect(kept.map((s) => s.status).sort()).toEqual(['ACTIVE', 'CANCELED'])
    })

    it('charges nothing for a refusal, coverage counting the ERROR each answered', async () => {
      // No failure SMS to the MO's handset; each refusal counted once.
      const outcomes = (await sandbox.coverage()).coverage[0]!.outcomes
      const counted = (id: string) => outcomes.find((o) => o.id === id)?.count
      expect([counted('mo.subscribed'), counted('verify.ERROR_500'), counted('mo.charge_failed'), counted('consent.charge_failed')]).toEqual([1, 1, 1, 1])
      expect((await sandbox.sms('60133456004')).messages.map((m) => m.kind)).toEqual(['mo'])
    })

    it('leaves another session its own cap', async () => {
      const other = sandbox.session('other')
      expect((await (await otpFlow(other, '60123456005')).verify()).envelope.status).toBe('SUCCESS')
    })

    it('makes room on reset', async () => {
      await sandbox.reset()
      expect((await (await otpFlow(sandbox, '60123456003')).verify()).envelope.status).toBe('SUCCESS')
    })
  })

  it('defaults to 100,000', () => {
    expect(DEFAULT_MAX_SUBSCRIPTIONS).toBe(100_000)
  })

  it('refuses a bad maxSubscriptions by name', async () => {
    for (const bad of [0, 1.5, '10'])
      await expect(createSandbox({ maxSubscriptions: bad as number })).rejects.toThrow(
        new SandboxError(
          'BAD_REQUEST',
          `maxSubscriptions must be a whole number from 1 to 100,000,000 (got ${typeof bad === 'string' ? `"${bad}"` : `number ${bad}`})`,
        ),
      )
  })
})
