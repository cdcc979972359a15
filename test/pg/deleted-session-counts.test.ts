/**
 * A read's coverage counts are soft changes, written in a turn of their own after the read (when the
 * session is next read, or closed as the replica forgets it). Of a session another replica deleted
 * meanwhile, that turn made the session anew, as a write does: a read now makes none, and its counts
 * count nowhere. A server in process on the test PostgreSQL, the delete's notice never sent.
 */
import { describe, expect, it } from 'vitest'
import type { CoverageAnswer } from '../../src/contract/index.js'
import { KEY, until } from './replicas.js'
import { deleteUnheard, rowsOf } from './session-rows.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

describe('a read of a session deleted by another replica', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it("a read's coverage counts written after the delete do not make the session anew", async () => {
    const db = 'gone_counts'
    const url = await pg.createDatabase(db)
    // No timer tick in the test: the host keeps the session open until a call finds it gone.
    const running = await replicas.inProcess({ port: 0, store: url, tickMs: 3_600_000 })
    const as = { 'x-dcb-session': 'gone-counts' }
    const call = (op: string, body: unknown) =>
      fetch(`${running.url}/subscriptions/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': KEY, ...as },
        body: JSON.stringify(body),
      })
    expect((await call('init', { msisdn: '60123456010', service_code: 'STREAMPLUS', country_code: 'my' })).status).toBe(200)
    // A Status counts its outcome in the coverage as a soft change, left for a later turn; its request log entry is written at once.
    expect((await (await call('status', { subscription_id: 'SUB-NONE' })).json()).message).toBe('SUBSCRIPTION_NOT_FOUND')
    await until('both calls logged', async () => (await rowsOf(pg, db, 'gone-counts')).filter((t) => t === 'requests').length === 2)
    // Another replica deleted it; its notice never comes.
    await deleteUnheard(pg, db, 'gone-counts')
    // A control read of it writes the counts waiting first: they find it gone, and make nothing.
    const clock = await fetch(`${running.url}/_sandbox/clock`, { headers: as })
    expect(clock.status).toBe(200)
    expect(await rowsOf(pg, db, 'gone-counts')).toEqual([])
    // They count nowhere: the session a write makes anew counts its own calls alone.
    expect((await call('init', { msisdn: '60123456010', service_code: 'STREAMPLUS', country_code: 'my' })).status).toBe(200)
    const coverage = (await (await fetch(`${running.url}/_sandbox/coverage`, { headers: as })).json()) as CoverageAnswer
    expect(coverage.coverage.map((m) => [m.merchant, m.outcomes.filter((o) => o.count > 0)])).toEqual([['demo', [{ id: 'init.otp', count: 1 }]]])
  }, 60_000)
})
