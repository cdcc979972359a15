/**
 * The file store keeps an OTP SMS withheld by a rule like the rest of the state: after a restart an
 * undelivered one (631) is still undelivered, and a late one (632) is still due and arrives when the
 * clock passes its time.
 */
import { describe, expect, it } from 'vitest'
import { startClient, tempDir } from '../helpers.js'

describe('a withheld OTP SMS across a restart of the file store', () => {
  it('stays withheld, and a late one is delivered after the restart', async () => {
    const t = tempDir()
    try {
      const opts = { data: `${t.dir}/sandbox.json`, clock: '2026-01-31T00:00:00' }
      let c = await startClient(opts)
      const init = async (msisdn: string) =>
        (await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })).body.payload.verif_request_id as string
      const never = await init('60123456631')
      const late = await init('60123456632')
      await c.close()
      c = await startClient(opts)
      expect((await c.control(`/otp?verif_request_id=${never}`)).body).toEqual({
        error: 'NO_OTP',
        message: expect.stringContaining('never delivered: rule otp-631'),
      })
      expect((await c.control('/otp?msisdn=60123456632')).body).toEqual({ error: 'NO_OTP', message: expect.stringContaining('has not reached the inbox yet') })
      const move = await c.control('/clock/advance', { by: 'PT2M' })
      expect(move.body.events).toEqual([expect.objectContaining({ type: 'otp_delivered', verif_request_id: late })])
      await c.close()
      c = await startClient(opts)
      expect((await c.control(`/otp?verif_request_id=${late}`)).body).toMatchObject({ verif_request_id: late, delivered_dt: '2026-01-31T00:02:00.000000' })
      expect((await c.control('/sms?msisdn=60123456631')).body.messages).toEqual([])
      await c.close()
    } finally {
      t.cleanup()
    }
  })
})
