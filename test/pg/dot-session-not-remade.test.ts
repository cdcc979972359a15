/**
 * A session named `.` or `..` kept from an older version is served, and once deleted its name is
 * refused like any new one (URL clients read it in /_sandbox/sessions/NAME as a path step). A replica
 * that still held it open when another deleted it (the notice not yet there) made it anew on its next
 * write, as it makes any other deleted session anew; it refuses it now, as every replica refuses a new
 * one, and the database is left without it.
 */
import { describe, expect, it } from 'vitest'
import { KEY } from './replicas.js'
import { deleteUnheard, rowsOf } from './session-rows.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

describe('a . or .. session deleted while a replica holds it open', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it('is not made anew by its next write there: 400 BAD_REQUEST saying why (in a merchant envelope, in a control error), as a new one', async () => {
    for (const [db, dots] of [
      ['dotremade1', '.'],
      ['dotremade2', '..'],
    ] as const) {
      const url = await pg.createDatabase(db)
      // No timer tick in the test: the host keeps the session open until a call finds it gone.
      const running = await replicas.inProcess({ port: 0, store: url, tickMs: 3_600_000 })
      // As an older version left it: a row of its own, made before such names were refused.
      await pg.query(`INSERT INTO dcb_sessions (name) VALUES ($1)`, [dots], db)
      const base = running.url
      const as = { 'x-dcb-session': dots }
      const init = () =>
        fetch(`${base}/subscriptions/init`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'api-key': KEY, ...as },
          body: JSON.stringify({ msisdn: '60123456010', service_code: 'STREAMPLUS', country_code: 'my' }),
        })
      expect((await init()).status).toBe(200)
      expect(running.sessions.peek(dots)).toBeDefined()
      // Its request log entry written (GET /_sandbox/sessions writes every pending one) before the delete takes it.
      expect((await fetch(`${base}/_sandbox/sessions`)).status).toBe(200)
      await deleteUnheard(pg, db, dots)
      expect(running.sessions.peek(dots)).toBeDefined()

      const reason = `"${dots}" cannot name a new session: URL clients read . and .. in /_sandbox/sessions/${dots} as path steps, so it could never be deleted; use another name`
      const refused = await init()
      expect([dots, refused.status, await refused.json()]).toEqual([dots, 400, { status: 'FAIL', message: 'BAD_REQUEST', status_code: 400, payload: null }])
      expect(refused.headers.get('x-dcb-reason')).toBe(reason)
      const advance = await fetch(`${base}/_sandbox/clock/advance`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...as },
        body: '{"by":"P1D"}',
      })
      expect([advance.status, await advance.json()]).toEqual([400, { error: 'BAD_REQUEST', message: reason }])
      // Nothing of it in the database (GET /_sandbox/sessions first writes every pending request log entry); the list forgets it.
      const listed = (await (await fetch(`${base}/_sandbox/sessions`)).json()) as { sessions: { name: string }[] }
      expect(listed.sessions.map((s) => s.name)).toEqual(['default'])
      expect(await rowsOf(pg, db, dots)).toEqual([])
      await running.close()
    }
  }, 60_000)
})
