/**
 * The shared sessions, read again: a session deleted through two replicas at once is deleted once
 * (200, the other 404 SESSION_NOT_FOUND), and a session a replica opens while it reads the list of
 * sessions is not taken for one another replica deleted, nor opened twice when another replica's notice
 * opens it during start-up.
 */
import { describe, expect, it } from 'vitest'
import { dcb } from '../cli/run.js'
import { createHost } from '../../src/runtime/host.js'
import { SharedDatabase } from '../../src/store/postgres.js'
import { sharedSessions } from '../../src/store/postgres-shared-sessions.js'
import type { SharedSessions } from '../../src/store/types.js'
import { loadWorld } from '../../src/world/load.js'
import { control } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

describe('shared sessions under races', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it('a session deleted through two replicas at once: one answers 200, the other 404 SESSION_NOT_FOUND', async () => {
    const url = await pg.createDatabase('dropraced')
    const [a, b] = await replicas.start(url, 2)
    const names = ['s1', 's2', 's3', 's4']
    for (const name of names) expect((await control(a!.url, '/clock', undefined, { 'x-dcb-session': name })).http).toBe(200)
    for (const name of names) {
      const both = await Promise.all([a!, b!].map((r) => control(r.url, `/sessions/${name}`, undefined, {}, 'DELETE')))
      expect(both.map((r) => r.http).sort(), name).toEqual([200, 404])
      expect(both.find((r) => r.http === 404)!.body).toEqual({ error: 'SESSION_NOT_FOUND', message: `no session ${name}` })
    }
    for (const r of [a!, b!]) expect((await control(r.url, '/sessions')).body.sessions.map((s: { name: string }) => s.name)).toEqual(['default'])
  })

  it('a session opened while the list of sessions is read stays open (it is not in that list, but nobody deleted it)', async () => {
    const url = await pg.createDatabase('listraced')
    const world = loadWorld([]).world
    const db = await SharedDatabase.open({ url, world })
    const base = sharedSessions(db)
    // The next list of sessions is held, once read, until the test lets it go.
    let hold = false
    let listed!: () => void
    const wasListed = new Promise<void>((resolve) => (listed = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const names: SharedSessions['names'] = async () => {
      const got = await base.names()
      if (!hold) return got
      hold = false
      listed()
      await released
      return got
    }
    await base.load()
    const host = createHost({ ...base, names }, { engine: { world }, version: 'test' })
    try {
      await host.activate()
      hold = true
      const syncing = host.syncSessions()
      await wasListed
      const fresh = await host.get('fresh')
      release()
      await syncing
      expect(host.peek('fresh')).toBe(fresh)
      // Still served: a change is stored (a forgotten session's store is closed).
      await fresh.operations.advance('1h')
      expect((await pg.query(`SELECT seq FROM dcb_sessions WHERE name = 'fresh'`, [], 'listraced')).rows).toEqual([{ seq: '1' }])
    } finally {
      await host.close().catch(() => {})
      await db.close()
    }
  })
  it("a stored session that another replica's notice is opening while start-up opens the stored ones is opened once", async () => {
    const url = await pg.createDatabase('opentwice')
    const world = loadWorld([]).world
    const db = await SharedDatabase.open({ url, world })
    const base = sharedSessions(db)
    expect(await base.claim('x', 10)).toEqual({ stored: true })
    // The first open of a session is held until the test lets it go; start-up's list says when it was read.
    let opens = 0
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const open: SharedSessions['open'] = async (name) => {
      if (++opens === 1) await released
      return base.open(name)
    }
    let listed!: () => void
    const wasListed = new Promise<void>((resolve) => (listed = resolve))
    const names: SharedSessions['names'] = async () => {
      const got = await base.names()
      listed()
      return got
    }
    await base.load()
    const host = createHost({ ...base, open, names }, { engine: { world }, version: 'test' })
    try {
      host.notice('S+x')
      const activating = host.activate()
      await wasListed
      await new Promise((resolve) => setImmediate(resolve))
      release()
      await activating
      expect(opens).toBe(1)
      expect(host.all().map((s) => s.name)).toEqual(['default', 'x'])
    } finally {
      await host.close().catch(() => {})
      await db.close()
    }
  })
  it('a database whose kept session clock does not read refuses the start naming it, not as an unexpected error', async () => {
    const url = await pg.createDatabase('badclock')
    const [first] = await replicas.start(url, 1)
    await first!.stop()
    await pg.query(`UPDATE dcb_meta SET value = '{"at":' WHERE key = 'session_clock'`, [], 'badclock')
    const r = await dcb(['serve', '--store', url, '--port', '0'])
    expect(r.code).toBe(1)
    expect(r.stderr).not.toContain('unexpected error')
    expect(r.stderr.trim()).toMatch(/^dcb: the database at .* cannot be used: dcb_meta's session_clock is not JSON of a clock \(.*\)$/)
    // JSON, but not of a clock: named the same way, not handed to every new session.
    await pg.query(`UPDATE dcb_meta SET value = '{"at":"soon"}' WHERE key = 'session_clock'`, [], 'badclock')
    const shape = await dcb(['serve', '--store', url, '--port', '0'])
    expect(shape.code).toBe(1)
    expect(shape.stderr.trim()).toMatch(
      /^dcb: the database at .* cannot be used: dcb_meta's session_clock is not JSON of a clock \(\{"at":"soon"\}: not null or .*\)$/,
    )
  })
})
