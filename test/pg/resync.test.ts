/**
 * Before a read of every session (GET /_sandbox/sessions, a consent page), a replica takes in what the
 * others wrote: one query says where each session's log ends, and only the sessions behind it are
 * read. With a thousand sessions nobody wrote to, the list cost a thousand round trips, one after another.
 */
import { describe, expect, it } from 'vitest'
import { createHost } from '../../src/runtime/host.js'
import { SharedDatabase } from '../../src/store/postgres.js'
import { sharedSessions } from '../../src/store/postgres-shared-sessions.js'
import { loadWorld } from '../../src/world/load.js'
import { usePostgres } from './use-postgres.js'

describe('a replica reading every session', () => {
  const pg = usePostgres()

  /**
   * Replicas a and b on database `name`, twelve sessions open on a, b's clock of s7 moved an hour; then
   * `check` (the moved session, and which sessions a's resync read).
   */
  async function resynced(
    name: string,
    check: (a: ReturnType<typeof createHost>, moved: Awaited<ReturnType<ReturnType<typeof createHost>['get']>>, reads: Set<string>) => void,
  ) {
    const url = await pg.createDatabase(name)
    const world = loadWorld([]).world
    const replica = async () => {
      const db = await SharedDatabase.open({ url, world })
      const sessions = sharedSessions(db)
      await sessions.load()
      const host = createHost(sessions, { engine: { world }, version: 'test' })
      await host.activate()
      return { db, host }
    }
    const a = await replica()
    const b = await replica()
    try {
      const names = Array.from({ length: 12 }, (_, i) => `s${i}`)
      for (const name of names) await a.host.get(name)
      // Replica b moves one session's clock: a's copy of it is behind, the others are not.
      const moved = await b.host.get('s7')
      await moved.operations.advance('1h')
      // Which sessions are read while a resyncs (another replica's notice may have brought s7 in already).
      const reads = new Set<string>()
      for (const s of a.host.all()) {
        const sync = s.engine.sync.bind(s.engine)
        s.engine.sync = () => (reads.add(s.name), sync())
      }
      await a.host.resync()
      check(a.host, moved, reads)
    } finally {
      for (const r of [a, b]) {
        await r.host.close().catch(() => {})
        await r.db.close()
      }
    }
  }

  it('reads again only the sessions another replica wrote to', async () => {
    await resynced('resync', (_a, _moved, reads) => {
      expect([...reads].filter((name) => name !== 's7')).toEqual([])
    })
  }, 30_000)

  it('takes in what another replica wrote to a session', async () => {
    await resynced('resync_seen', (a, moved) => {
      // The clock runs (real time plus the offset): two reads of `now` may fall a millisecond apart, the offsets never.
      expect(a.peek('s7')!.engine.clockView().offset_ms).toBe(moved.engine.clockView().offset_ms)
      expect(moved.engine.clockView().offset_ms).toBe(3_600_000)
    })
  }, 30_000)
})
