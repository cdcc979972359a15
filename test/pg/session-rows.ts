/**
 * A session's rows in the test PostgreSQL, for the tests of a session another replica deletes:
 * what the database keeps of it, and what such a delete leaves with its notice never sent.
 */
import type { TestPostgres } from './postgres.js'

/** Every row the database keeps of session `name` in database `db`, by table (`sessions`, `changes`, …). */
export async function rowsOf(pg: TestPostgres, db: string, name: string): Promise<string[]> {
  const { rows } = await pg.query(
    `SELECT 'sessions' AS t FROM dcb_sessions WHERE name = $1 UNION ALL SELECT 'changes' FROM dcb_changes WHERE session = $1
     UNION ALL SELECT 'snapshots' FROM dcb_snapshots WHERE session = $1 UNION ALL SELECT 'journals' FROM dcb_journals WHERE session = $1
     UNION ALL SELECT 'requests' FROM dcb_requests WHERE session = $1`,
    [name],
    db,
  )
  return rows.map((r) => r.t as string)
}

/** What another replica's delete of session `name` leaves, its notice still on the way (none is sent): the session's rows gone. */
export async function deleteUnheard(pg: TestPostgres, db: string, name: string): Promise<void> {
  for (const table of ['dcb_changes', 'dcb_snapshots', 'dcb_requests', 'dcb_journals']) await pg.query(`DELETE FROM ${table} WHERE session = $1`, [name], db)
  await pg.query(`DELETE FROM dcb_sessions WHERE name = $1`, [name], db)
}
