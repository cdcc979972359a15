import { describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import type { Way } from './cut-proxy.js'
import { control, merchant, until } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

// A replica cut off from the database (no reset, no close: what is sent is lost) answers every call
// within a few seconds with the store's error, health 503; once the network is back it serves again.
const CLOCK = ['--clock', '2026-01-31T00:00:00']
/** The call timeout (3 s), then, for a write whose COMMIT was sent, asking whether it was made (2.5 s at most). */
const CUT_OFF_BOUND_MS = 6500

describe('a replica cut off from the database', () => {
  const db = usePostgres()
  const replicas = useReplicas()

  /** A call's answer and how long it took. */
  async function timed<T>(call: () => Promise<T>): Promise<T & { ms: number }> {
    const t = Date.now()
    const out = await call()
    // wall-clock: how soon a call answers with a replica stopped is what this test bounds
    return { ...out, ms: Date.now() - t }
  }

  for (const way of ['both', 'to-server', 'to-client'] as Way[])
    it(`cut ${way === 'both' ? 'both ways' : `one way (${way})`}: every call answers the store's error within seconds, until the network is back`, async () => {
      const name = `cutoff_${way.replace('-', '_')}`
      await db.createDatabase(name)
      const p = await replicas.proxy(db.port)
      const [a] = (await replicas.start(p.url(name), 1, CLOCK)) as [Served]
      const init = await merchant(a.url, 'init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
      const otp = (await control(a.url, '/otp?msisdn=60123456001')).body.otp
      const verify = await merchant(a.url, 'verify', { verif_request_id: init.body.payload.verif_request_id, otp })
      const sub = verify.body.payload.subscription_id as string
      expect((await control(a.url, '/clock', undefined, { 'x-dcb-session': 'alice' })).http).toBe(200)

      p.silence(way)
      const where = new RegExp(`the database at 127\\.0\\.0\\.1:\\d+/${name} cannot be (used|reached): `)
      const write = await timed(() => merchant(a.url, 'init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' }))
      expect(write.http).toBe(500)
      expect(write.body).toMatchObject({ message: 'ERROR', status_code: 500 })
      expect(write.reason).toMatch(where)
      const status = await timed(() => merchant(a.url, 'status', { subscription_id: sub }))
      expect(status.http).toBe(500)
      expect(status.reason).toMatch(where)
      const calls = [
        () => control(a.url, '/subscriptions'),
        () => control(a.url, '/clock/advance', { by: 'P1D' }),
        () => control(a.url, '/clock', undefined, { 'x-dcb-session': 'alice' }),
        () => control(a.url, '/clock', undefined, { 'x-dcb-session': 'bob' }),
      ]
      for (const call of calls) {
        const r = await timed(call)
        expect(r.http).toBe(503)
        expect(r.body.error).toBe('STORE_UNAVAILABLE')
        expect(r.body.message).toMatch(where)
        expect(r.ms).toBeLessThan(CUT_OFF_BOUND_MS)
      }
      const health = await timed(async () => {
        const res = await fetch(`${a.url}/_sandbox/health`)
        return { http: res.status, body: (await res.json()) as { ok: boolean; store: string } }
      })
      expect(health).toMatchObject({ http: 503, body: { ok: false } })
      expect(health.body.store).toMatch(/^the database at /)
      for (const r of [write, status, health]) expect(r.ms).toBeLessThan(CUT_OFF_BOUND_MS)

      p.heal()
      await until(
        'the replica writing again',
        async () => (await merchant(a.url, 'init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' })).body.status === 'SUCCESS',
        20_000,
      )
      await until('health 200 again', async () => (await fetch(`${a.url}/_sandbox/health`)).status === 200)
      expect((await merchant(a.url, 'status', { subscription_id: sub })).body.payload).toMatchObject({ status: 'ACTIVE' })
    }, 90_000)
})
