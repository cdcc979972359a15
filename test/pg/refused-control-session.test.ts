/**
 * A refused control call creates no session with the shared store either: a rule the server refuses
 * 400, sent with X-DCB-Session naming a new session, leaves no row of it in the database, and no
 * replica lists it (a new replica started on the same database included). A server in process on
 * the test PostgreSQL.
 */
import { describe, expect, it } from 'vitest'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

describe('a refused control call on the shared store', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it('creates no session: listed by neither this replica nor a new one, in no row', async () => {
    const db = 'refused_session'
    const url = await pg.createDatabase(db)
    const names = async (base: string) =>
      ((await (await fetch(`${base}/_sandbox/sessions`)).json()) as { sessions: { name: string }[] }).sessions.map((s) => s.name)
    const a = await replicas.inProcess({ port: 0, store: url, tickMs: 3_600_000, onError: () => {} })
    const refused = await fetch(`${a.url}/_sandbox/rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-dcb-session': 'refused-one' },
      body: JSON.stringify({ step: 'init', match: { carrier: 'NO-SUCH-CARRIER' }, effect: { error: 'BARRED' } }),
    })
    expect(refused.status).toBe(400)
    expect(await names(a.url)).toEqual(['default'])
    const b = await replicas.inProcess({ port: 0, store: url, tickMs: 3_600_000, onError: () => {} })
    expect(await names(b.url)).toEqual(['default'])
    await b.close()
    const rows = await pg.query("SELECT count(*)::int AS n FROM dcb_sessions WHERE name = 'refused-one'", [], db)
    expect(rows.rows[0].n).toBe(0)
    // The same call, allowed, makes its session.
    const allowed = await fetch(`${a.url}/_sandbox/rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-dcb-session': 'refused-one' },
      body: JSON.stringify({ step: 'init', match: { ending: '999' }, effect: { error: 'BARRED' } }),
    })
    expect(allowed.status).toBe(200)
    expect(await names(a.url)).toContain('refused-one')
  })
})
