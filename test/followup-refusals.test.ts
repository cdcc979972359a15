/**
 * What a user writes takes effect or is refused by name: a `verify` rule on carriers with no OTP.
 * Over loopback and through the binary.
 */
import { describe, expect, it } from 'vitest'
import { startClient } from './helpers.js'

describe('a verify rule on carriers with no OTP', () => {
  it('is refused by name over loopback; on an OTP carrier it is taken and decides Verify', async () => {
    const c = await startClient()
    try {
      for (const [rule, message] of [
        [
          { match: { carrier: 'sbx-my-psms' }, step: 'verify', effect: { error: 'BARRED' } },
          'step: step "verify" happens only on otp carriers and carrier sbx-my-psms is a psms carrier: the rule would decide nothing',
        ],
        [
          { match: { carrier: 'sbx-bg-redirect' }, step: ['init', 'verify'], effect: { delay_ms: 100 } },
          'step.1: step "verify" happens only on otp carriers and carrier sbx-bg-redirect is a redirect carrier: the rule would never decide it (leave it out of "step")',
        ],
        [
          { match: { prefix: '6013' }, step: 'verify', effect: { error: 'BARRED' } },
          'step: step "verify" happens only on otp carriers and no carrier with numbers starting with 6013 is an otp carrier: the rule would decide nothing',
        ],
      ] as const) {
        const r = await c.control('/rules', rule)
        expect(r, JSON.stringify(rule)).toEqual({ status: 400, body: { error: 'BAD_RULE', message } })
      }
      // What such a rule would have met: Verify refuses a redirect request before any verify rule.
      const init = await c.api('/subscriptions/init', { msisdn: '359881230001', service_code: 'STREAMPLUS', country_code: 'bg' })
      expect(init.body.status).toBe('SUCCESS')
      const id = init.body.payload.redirect_url.split('/').pop()
      const verify = await c.api('/subscriptions/verify', { verif_request_id: id, otp: '1234' })
      expect(verify.body.message).toBe('INVALID_PIN')

      // In a country with OTP carriers, the rule is taken and decides.
      expect((await c.control('/rules', { id: 'bg-verify', match: { country: 'bg' }, step: 'verify', effect: { error: 'BARRED' } })).status).toBe(200)
      const otpInit = await c.api('/subscriptions/init', { msisdn: '359871230001', service_code: 'STREAMPLUS', country_code: 'bg' })
      const otp = await c.control('/otp?msisdn=359871230001')
      const answer = await c.api('/subscriptions/verify', { verif_request_id: otpInit.body.payload.verif_request_id, otp: otp.body.otp })
      expect(answer.body.message).toBe('BARRED')
    } finally {
      await c.close()
    }
  })
})
