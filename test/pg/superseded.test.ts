/**
 * The one-ACTIVE rule on a shared store: two replicas of `dcb serve --store` on one PostgreSQL. The
 * MO that supersedes an EXPIRED subscription goes through one, the clock move that would have
 * retried it through the other, and a replica started afresh reads the history from the log.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { usePostgres } from './use-postgres.js'
import { control } from './replicas.js'
import { useReplicas } from './use-replicas.js'

describe('superseded retries on PostgreSQL', () => {
  const db = usePostgres()
  const replicas = useReplicas()
  let url: string
  let r: Served[]
  beforeAll(async () => {
    url = await db.createDatabase('superseded')
    r = await replicas.start(url, 2, ['--clock', '2026-01-28T09:00:00'])
  }, 60_000)

  it('a subscription one replica supersedes is superseded on every replica: none retries it, a new one shows the same timeline', async () => {
    const mo = (base: string) => control(base, '/mo', { msisdn: '60133456302', short_code: '32123', text: 'STREAM' })
    const first = (await mo(r[0]!.url)).body.subscription_id
    await control(r[1]!.url, '/clock/advance', { by: 'P1M' })
    const again = (await mo(r[0]!.url)).body.subscription_id
    const move = await control(r[1]!.url, '/clock/advance', { by: 'P1D' })
    expect(move.body.events.filter((e: any) => e.subscription_id === first)).toEqual([])
    const active = await control(r[1]!.url, '/subscriptions?msisdn=60133456302&status=ACTIVE')
    expect(active.body.subscriptions.map((s: any) => s.subscription_id)).toEqual([again])
    const states = (body: any) => body.timeline.filter((e: any) => e.type === 'state').map((e: any) => [e.from, e.to, e.cause, e.superseded_by])
    const seen = (await control(r[1]!.url, `/subscriptions/${first}`)).body
    expect(states(seen)).toEqual([
      [null, 'ACTIVE', 'mo', undefined],
      ['ACTIVE', 'EXPIRED', 'renewal', undefined],
      ['EXPIRED', 'EXPIRED', 'superseded', again],
    ])
    const fresh = await replicas.start(url, 1)
    const later = (await control(fresh[0]!.url, `/subscriptions/${first}`)).body
    expect(states(later)).toEqual(states(seen))
    expect(later.next_retry_dt).toBeNull()
  })
})
