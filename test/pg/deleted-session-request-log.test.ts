/**
 * A session one replica deletes leaves no row behind, whatever another replica was doing with it. The
 * request log is written after the answer, on a connection of its own: a read under way on
 * replica A when B deleted the session (or whose request log entry was still on its way) wrote its entry
 * after the delete, leaving a row in dcb_journals (and in dcb_requests) of a session that is not
 * there; a session made later by that name would number its request log after it. Two replicas of the
 * binary on the test PostgreSQL, A's queries through a proxy that holds the one the test names.
 */
import { describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { control, merchant, until } from './replicas.js'
import { rowsOf } from './session-rows.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

describe('a session deleted by one replica while another reads it', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  /** Replica A through the proxy, B directly, on a new database; a session of A's made by an Init, its request log written. */
  async function twoReplicas(db: string, session: string) {
    await pg.createDatabase(db)
    const proxy = await replicas.proxy(pg.port)
    const [a] = await replicas.start(proxy.url(db), 1)
    const [b] = await replicas.start(pg.url(db), 1)
    const init = await merchant(a!.url, 'init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { 'X-DCB-Session': session })
    expect(init.body.status).toBe('SUCCESS')
    await until(`the Init logged in ${session}`, async () => (await rowsOf(pg, db, session)).includes('requests'))
    return { a: a!, b: b!, proxy }
  }

  /**
   * Once A's request log connection wrote everything it was given: A writes its entries one after another on
   * one connection, so a call of the default session answered now is in the database after them.
   */
  async function journalWritten(db: string, a: Served): Promise<void> {
    const count = async () => Number((await pg.query(`SELECT count(*) AS n FROM dcb_requests WHERE session = 'default'`, [], db)).rows[0].n)
    const before = await count()
    expect((await merchant(a.url, 'status', { subscription_id: 'SUB-MARK' })).body.message).toBe('SUBSCRIPTION_NOT_FOUND')
    await until("A's later request log entry in the database", async () => (await count()) > before)
  }

  it('a read whose request log entry is written after the delete leaves no row of the session', async () => {
    const db = 'gone_late_entry'
    const { a, b, proxy } = await twoReplicas(db, 'gone-late')
    // A answers the read; its request log entry waits at the proxy until B has deleted the session.
    const late = proxy.holdAt((query) => query.includes('INSERT INTO dcb_journals') && query.includes('gone-late'))
    const read = await merchant(a.url, 'status', { subscription_id: 'SUB-NONE' }, { 'X-DCB-Session': 'gone-late' })
    expect(read.body.message).toBe('SUBSCRIPTION_NOT_FOUND')
    await late.held
    expect(await control(b.url, '/sessions/gone-late', undefined, {}, 'DELETE')).toEqual({ http: 200, body: { deleted: 'gone-late' } })
    late.release()
    await journalWritten(db, a)
    expect(await rowsOf(pg, db, 'gone-late')).toEqual([])
  }, 60_000)

  it('a read under way when the session is deleted, answered after A forgot it, leaves no row of the session', async () => {
    const db = 'gone_mid_read'
    const { a, b, proxy } = await twoReplicas(db, 'gone-read')
    // The read's look at the session's log waits at the proxy while B deletes it and A forgets it.
    const looking = proxy.holdAt((query) => query.includes('LEFT JOIN dcb_changes') && query.includes('gone-read'))
    const reading = merchant(a.url, 'status', { subscription_id: 'SUB-NONE' }, { 'X-DCB-Session': 'gone-read' })
    await looking.held
    expect(await control(b.url, '/sessions/gone-read', undefined, {}, 'DELETE')).toEqual({ http: 200, body: { deleted: 'gone-read' } })
    const listed = async () => ((await control(a.url, '/sessions')).body.sessions as { name: string }[]).map((s) => s.name)
    await until('A forgot gone-read', async () => !(await listed()).includes('gone-read'))
    looking.release()
    // It finds the session gone: an empty one, as a read of one deleted meanwhile does.
    expect((await reading).body.message).toBe('SUBSCRIPTION_NOT_FOUND')
    await journalWritten(db, a)
    expect(await rowsOf(pg, db, 'gone-read')).toEqual([])
  }, 60_000)
})
