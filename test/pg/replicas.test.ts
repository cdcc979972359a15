import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { startPostgres, type TestPostgres } from './postgres.js'
import { control, merchant, replicas, stopAll } from './replicas.js'

// Three replicas of `dcb serve --store` on one real PostgreSQL act as one sandbox.
describe('replicas on one database', () => {
  let pg: TestPostgres
  let r: Served[]
  beforeAll(async () => {
    pg = await startPostgres()
    r = await replicas(await pg.createDatabase('flows'), 3, ['--clock', '2026-01-31T00:00:00'])
  }, 60_000)
  afterAll(async () => {
    if (r) await stopAll(r)
    await pg?.remove()
  })

  it('an OTP flow with each call on another replica: read-your-writes across them', async () => {
    const init = await merchant(r[0]!.url, 'init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    expect(init.body.status).toBe('SUCCESS')
    const id = init.body.payload.verif_request_id
    const otp = await control(r[1]!.url, '/otp?msisdn=60123456001')
    expect(otp.http).toBe(200)
    const verify = await merchant(r[2]!.url, 'verify', { verif_request_id: id, otp: otp.body.otp })
    expect(verify.body.status).toBe('SUCCESS')
    const sub = verify.body.payload.subscription_id
    const status = await merchant(r[0]!.url, 'status', { subscription_id: sub })
    expect(status.body.status).toBe('SUCCESS')
    expect(status.body.payload.subscription_status ?? status.body.payload.status).toBe('ACTIVE')
    for (const x of r) expect((await control(x.url, `/subscriptions/${sub}`)).body.status).toBe('ACTIVE')
  })
})
