/**
 * Delay distributions on replicas of one database: the seed one replica's reset set is every
 * replica's, and the draws are numbered once for the session (an Init on one, an Init and a Status
 * on the other get the first, second and third draws of the seed), also after every replica restarted.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { drawn, seededUnit } from '../../src/core/delays.js'
import { usePostgres } from './use-postgres.js'
import { control, merchant, until } from './replicas.js'
import { useReplicas } from './use-replicas.js'

const UNIFORM = { min: 1, max: 40 }
const RULE = { id: 'uniform-091', match: { ending: '091' }, step: ['api'], effect: { delay_ms: UNIFORM } }
const nth = (seed: number, n: number) => drawn(UNIFORM, seededUnit(seed, n))

describe('delay draws on replicas of one database', () => {
  const db = usePostgres()
  const replicas = useReplicas()
  let url = ''
  let r: Served[] = []
  beforeAll(async () => {
    url = await db.createDatabase('delay_draws')
    r = await replicas.start(url, 2)
  }, 60_000)

  /** The delays the shared request log recorded for the merchant calls, oldest first, once it holds `n`. */
  const logged = (base: string, n: number) =>
    until(`${n} merchant calls in the request log`, async () => {
      const calls = (await control(base, '/requests')).body.requests.filter((e: any) => e.path.startsWith('/subscriptions/'))
      return calls.length === n && calls.reverse().map((e: any) => e.delay_ms)
    })
  const init = (base: string, i: number) => merchant(base, 'init', { msisdn: `6012345${i}091`, service_code: 'STREAMPLUS', country_code: 'my' })

  it("the draws follow the session's one seeded sequence, whichever replica takes them", async () => {
    expect((await control(r[0]!.url, '/reset', { seed: 2026 })).body).toMatchObject({ seed: 2026 })
    expect((await control(r[1]!.url, '/rules', RULE)).http).toBe(200)
    await init(r[0]!.url, 0)
    await init(r[1]!.url, 1)
    const { body: verify } = await merchant(r[1]!.url, 'verify', {
      verif_request_id: (await init(r[1]!.url, 2)).body.payload.verif_request_id,
      otp: (await control(r[1]!.url, '/otp?msisdn=60123452091')).body.otp,
    })
    // A Status a distribution decides takes its draw in a write turn: the fifth, after the Verify's own.
    expect((await merchant(r[0]!.url, 'status', { subscription_id: verify.payload.subscription_id })).body.status).toBe('SUCCESS')
    expect(await logged(r[0]!.url, 5)).toEqual([1, 2, 3, 4, 5].map((n) => nth(2026, n)))
  })

  it("after every replica restarted, the draws go on from the seed's count the database keeps", async () => {
    await replicas.stop(r)
    r = await replicas.start(url, 2)
    await init(r[1]!.url, 3)
    const entry = await until('the Init after the restart in the request log', async () =>
      (await control(r[0]!.url, '/requests')).body.requests.find((e: any) => e.request?.msisdn === '60123453091'),
    )
    expect(entry.delay_ms).toBe(nth(2026, 6))
  })
})
