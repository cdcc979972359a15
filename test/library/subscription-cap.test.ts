/**
 * Each session keeps at most `maxSubscriptions` subscriptions (default 100,000), canceled ones too:
 * every subscription was acknowledged to a merchant, so none is dropped to make room. Past the cap a
 * new one is refused by the sandbox, not by a carrier (Verify: 500 ERROR with a reason naming the cap
 * and the way out; an MO or a consent page: refused with ERROR, nothing charged, coverage counting the
 * ERROR each answered), the verification left as it was; a reset makes room. Other sessions have their own.
 */
import { describe, expect, it } from 'vitest'
import { createSandbox, SandboxError, type SandboxSession } from '../../src/index.js'
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
  it('refuses a new subscription past maxSubscriptions (canceled ones count), drops none, and makes room on reset', async () => {
    const sandbox = await createSandbox({ maxSubscriptions: 2, clock: '2026-01-31T00:00:00' })
    const reason = subscriptionCapReason(2)
    expect(subscriptionCapReason(100_000).length).toBeLessThanOrEqual(200)
    expect(reason).toBe(
      'the session holds its limit of 2 subscriptions, canceled ones too (--max-subscriptions; library: maxSubscriptions): reset it (POST /_sandbox/reset) or raise the limit',
    )
    const first = await (await otpFlow(sandbox, '60123456001')).verify()
    expect(first.envelope.status).toBe('SUCCESS')
    expect((await sandbox.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' })).action).toBe('subscribed')
    await sandbox.cancel((first.envelope.payload as { subscription_id: string }).subscription_id)

    // Full, a canceled one included: Verify answers 500 ERROR, and the verification can be verified once there is room.
    const third = await otpFlow(sandbox, '60123456003')
    const refused = await third.verify()
    expect(refused).toEqual({
      httpStatus: 500,
      envelope: { status: 'FAIL', message: 'ERROR', status_code: 500, payload: null },
      reason,
    })
    expect(await sandbox.mo({ msisdn: '60133456004', short_code: '32123', text: 'STREAM' })).toEqual({ action: 'rejected', code: 'ERROR', reason })
    const consentInit = await sandbox.init({ msisdn: '359881234001', service_code: 'STREAMPLUS', country_code: 'bg' })
    if (consentInit.envelope.status !== 'SUCCESS') throw new Error(JSON.stringify(consentInit))
    const page = consentInit.envelope.payload.redirect_url!
    expect((await sandbox.consent(page, 'approve')).location).toMatch(/status=FAIL&message=ERROR/)
    const kept = (await sandbox.subscriptions()).subscriptions
    expect(kept.map((s) => s.status).sort()).toEqual(['ACTIVE', 'CANCELED'])
    // Nothing of the refusals was charged (no failure SMS to the MO's handset); coverage counts the ERROR each answered.
    const outcomes = (await sandbox.coverage()).coverage[0]!.outcomes
    const counted = (id: string) => outcomes.find((o) => o.id === id)?.count
    expect([counted('mo.subscribed'), counted('verify.ERROR_500'), counted('mo.charge_failed'), counted('consent.charge_failed')]).toEqual([1, 1, 1, 1])
    expect((await sandbox.sms('60133456004')).messages.map((m) => m.kind)).toEqual(['mo'])

    // Another session has its own cap.
    const other = sandbox.session('other')
    expect((await (await otpFlow(other, '60123456005')).verify()).envelope.status).toBe('SUCCESS')

    await sandbox.reset()
    expect((await (await otpFlow(sandbox, '60123456003')).verify()).envelope.status).toBe('SUCCESS')
    await sandbox.close()
  })

  it('defaults to 100,000 and refuses a bad maxSubscriptions by name', async () => {
    expect(DEFAULT_MAX_SUBSCRIPTIONS).toBe(100_000)
    for (const bad of [0, 1.5, '10'])
      await expect(createSandbox({ maxSubscriptions: bad as number })).rejects.toThrow(
        new SandboxError(
          'BAD_REQUEST',
          `maxSubscriptions must be a whole number from 1 to 100,000,000 (got ${typeof bad === 'string' ? `"${bad}"` : `number ${bad}`})`,
        ),
      )
  })
})
