/**
 * A session deleted while a replica still holds it open (the notice of the delete not yet there) is
 * made anew by that replica's next write. Made anew, it is a new session: it counts against
 * `--max-sessions` (of the database) as one made on first use, and a full database refuses it with
 * the same SESSION_LIMIT answer, leaving the database as it was.
 */
import { describe, expect, it } from 'vitest'
import { sharedSessionLimit } from '../../src/store/types.js'
import { KEY } from './replicas.js'
import { deleteUnheard } from './session-rows.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

describe('a write that remakes a session deleted meanwhile', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  const names = async (db: string) => (await pg.query(`SELECT name FROM dcb_sessions ORDER BY name`, [], db)).rows.map((r) => r.name)

  it('counts against --max-sessions as a new session: SESSION_LIMIT at the cap (merchant envelope, control error), made once there is room', async () => {
    const url = await pg.createDatabase('remadecap')
    // No timer tick in the test: the host keeps s1 open until a call finds it gone.
    const running = await replicas.inProcess({ port: 0, store: url, maxSessions: 1, tickMs: 3_600_000 })
    const base = running.url
    const as = { 'x-dcb-session': 's1' }
    const init = () =>
      fetch(`${base}/subscriptions/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': KEY, ...as },
        body: JSON.stringify({ msisdn: '60123456010', service_code: 'STREAMPLUS', country_code: 'my' }),
      })
    expect((await init()).status).toBe(200)
    expect(running.sessions.peek('s1')).toBeDefined()
    // Its request log entry written (GET /_sandbox/sessions writes every pending one) before the delete takes it.
    expect((await fetch(`${base}/_sandbox/sessions`)).status).toBe(200)
    // Another replica deleted s1 and made s2: the database holds its 1 session again.
    await deleteUnheard(pg, 'remadecap', 's1')
    await pg.query(`INSERT INTO dcb_sessions (name) VALUES ('s2')`, [], 'remadecap')
    expect(running.sessions.peek('s1')).toBeDefined()
    const message = sharedSessionLimit(1, 1).message
    expect(message).toBe(
      "the shared sandbox holds 1 session, at or past this server's limit of 1 (--max-sessions, counted over every replica); delete one with DELETE /_sandbox/sessions/NAME",
    )

    const refused = await init()
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ status: 'FAIL', message: 'SESSION_LIMIT', status_code: 429, payload: null })
    expect(refused.headers.get('x-dcb-reason')).toBe(message)
    const advance = await fetch(`${base}/_sandbox/clock/advance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as },
      body: '{"by":"P1D"}',
    })
    expect([advance.status, await advance.json()]).toEqual([429, { error: 'SESSION_LIMIT', message }])
    expect(await names('remadecap')).toEqual(['default', 's2'])
    // Nor logged under s1, which the refusal says is no session: a session made later by that name
    // would number its journal after it. (GET /_sandbox/sessions first writes every pending request log entry.)
    expect((await fetch(`${base}/_sandbox/sessions`)).status).toBe(200)
    const logged = async () =>
      (await pg.query(`SELECT 'requests' AS t, session FROM dcb_requests UNION ALL SELECT 'journals', session FROM dcb_journals`, [], 'remadecap')).rows
    expect(await logged()).toEqual([])

    // Room again (s2 deleted): the next write makes s1 anew, empty.
    await deleteUnheard(pg, 'remadecap', 's2')
    expect((await init()).status).toBe(200)
    expect(await names('remadecap')).toEqual(['default', 's1'])
    const logs = (await (await fetch(`${base}/_sandbox/requests`, { headers: as })).json()) as { requests: { http_status: number }[] }
    expect(logs.requests.map((r) => r.http_status)).toEqual([200])
  }, 60_000)
})
