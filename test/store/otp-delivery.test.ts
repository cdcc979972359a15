/**
 * The file store keeps an OTP SMS withheld by a rule like the rest of the state: after a restart an
 * undelivered one (631) is still undelivered, and a late one (632) is still due and arrives when the
 * clock passes its time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'

describe('a withheld OTP SMS across a restart of the file store', () => {
  // One data file through two restarts: the tests run in order.
  const t = tempDir()
  const opts = { data: `${t.dir}/sandbox.json`, clock: '2026-01-31T00:00:00' }
  let c: Client
  let never: string
  let late: string
  beforeAll(async () => {
    c = await startClient(opts)
    const init = async (msisdn: string) =>
      (await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })).body.payload.verif_request_id as string
    never = await init('60123456631')
    late = await init('60123456632')
    await c.close()
    c = await startClient(opts)
  })
  afterAll(async () => {
    await c?.close()
    t.cleanup()
  })

  it('one never delivered stays withheld after the restart', async () => {
    expect((await c.control(`/otp?verif_request_id=${never}`)).body).toEqual({
      error: 'NO_OTP',
      message: expect.stringContaining('never delivered: rule otp-631'),
    })
  })

  it('a late one is still not in the inbox after the restart', async () => {
    expect((await c.control('/otp?msisdn=60123456632')).body).toEqual({ error: 'NO_OTP', message: expect.stringContaining('has not reached the inbox yet') })
  })

  it('a late one is delivered when the clock passes its time', async () => {
    const move = await c.control('/clock/advance', { by: 'PT2M' })
    expect(move.body.events).toEqual([expect.objectContaining({ type: 'otp_delivered', verif_request_id: late })])
  })

  it('a late one delivered stays delivered across the next restart', async () => {
    await c.close()
    c = await startClient(opts)
    expect((await c.control(`/otp?verif_request_id=${late}`)).body).toMatchObject({ verif_request_id: late, delivered_dt: '2026-01-31T00:02:00.000000' })
  })

  it('one never delivered is still not in the SMS list after the second restart', async () => {
    expect((await c.control('/sms?msisdn=60123456631')).body.messages).toEqual([])
  })
})
