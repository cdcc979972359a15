/**
 * A shared store keeps an OTP SMS withheld by a rule like the rest of the state: a late one (632) is
 * due on every replica, a long poll on one replica gets it when another moves the clock past its
 * time, and it is still due after every replica restarted.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { usePostgres } from './use-postgres.js'
import { control, merchant } from './replicas.js'
import { useReplicas } from './use-replicas.js'

describe('a late OTP SMS on replicas of one database', () => {
  const db = usePostgres()
  const replicas = useReplicas()
  let url = ''
  let r: Served[] = []
  beforeAll(async () => {
    url = await db.createDatabase('otp_delivery')
    r = await replicas.start(url, 2, ['--clock', '2026-01-31T00:00:00'])
  }, 60_000)

  const init = async (base: string, msisdn: string) =>
    (await merchant(base, 'init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })).body.payload.verif_request_id as string

  it('a long poll on one replica wakes when another moves the clock past its time', async () => {
    const id = await init(r[0]!.url, '60123456632')
    expect((await control(r[1]!.url, `/otp?verif_request_id=${id}`)).body).toEqual({ error: 'NO_OTP', message: expect.stringContaining('rule otp-632') })
    const waiting = control(r[1]!.url, `/otp?verif_request_id=${id}&wait=30`)
    // Sent before the move: it waits on its replica, which hears the delivery from the database
    // (had it come in after the move, it would answer the SMS at once: the same answer).
    await control(r[1]!.url, '/clock')
    expect((await control(r[0]!.url, '/clock/advance', { by: 'PT3M' })).http).toBe(200)
    expect(await waiting).toMatchObject({ http: 200, body: { verif_request_id: id, delivered_dt: '2026-01-31T00:02:00.000000' } })
  })

  it('an undelivered or late OTP SMS survives a restart of every replica', async () => {
    const never = await init(r[0]!.url, '60123456631')
    const late = await init(r[1]!.url, '60123456632')
    await replicas.stop(r)
    r = await replicas.start(url, 1)
    expect((await control(r[0]!.url, `/otp?verif_request_id=${never}`)).body.message).toContain('never delivered: rule otp-631')
    expect((await control(r[0]!.url, `/otp?verif_request_id=${late}`)).body.error).toBe('NO_OTP')
    await control(r[0]!.url, '/clock/advance', { by: 'PT2M' })
    expect((await control(r[0]!.url, `/otp?verif_request_id=${late}`)).body).toMatchObject({ verif_request_id: late, otp: expect.any(String) })
  })
})
