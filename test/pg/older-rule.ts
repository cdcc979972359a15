/**
 * A runtime rule over the regex bounds in a shared database, as an older version (which took any
 * regex RE2 compiles) stored it: for the tests of a replica starting on, or opening, such a session.
 */
import { control, merchant, replicas, stopAll } from './replicas.js'
import type { TestPostgres } from './postgres.js'

/** 390 characters that compile to about 60,000 instructions (half a second and 50 MiB each, unbounded). */
export const EXPANDING = '[0-9]{1,999}'.repeat(30)
/** What the rule stored over the bounds matches while it is still within them: these two MSISDNs. */
const PLACEHOLDER = '^6012345600(7|8)$'
/** An MSISDN the rule `wide` bars while in force (and that Init takes otherwise). */
export const BARRED_BY_WIDE = '60123456007'

/** The rows of every dcb table that hold the regex `text`: changes and snapshots. */
async function holding(pg: TestPostgres, db: string, text: string): Promise<number> {
  const { rows } = await pg.query(
    `SELECT (SELECT count(*) FROM dcb_changes WHERE strpos(changes, $1) > 0) + (SELECT count(*) FROM dcb_snapshots WHERE strpos(state, $1) > 0) AS n`,
    [text],
    db,
  )
  return Number(rows[0].n)
}

/**
 * Stores rule `wide` (init and renewal barred) in each of `sessions` of database `db` through a replica of
 * this version, stopped after, then rewrites its regex in the database to EXPANDING. Answers how many
 * rows now hold EXPANDING (one a session at least).
 */
export async function storeOverCostRule(pg: TestPostgres, db: string, sessions: string[]): Promise<number> {
  const [older] = await replicas(pg.url(db), 1)
  try {
    for (const name of sessions) {
      const headers: Record<string, string> = name === 'default' ? {} : { 'x-dcb-session': name }
      const added = await control(
        older!.url,
        '/rules',
        { id: 'wide', match: { regex: PLACEHOLDER }, step: ['init', 'renewal'], effect: { error: 'BARRED' } },
        headers,
      )
      if (added.http !== 200) throw new Error(`rule wide not added in session ${name}: ${JSON.stringify(added.body)}`)
      // In force, it bars: a replica that answers the call with SUCCESS later has left it out.
      const barred = await merchant(older!.url, 'init', { msisdn: BARRED_BY_WIDE, service_code: 'STREAMPLUS', country_code: 'my' }, headers)
      if (barred.body.message !== 'BARRED') throw new Error(`rule wide does not bar ${BARRED_BY_WIDE} in session ${name}: ${JSON.stringify(barred.body)}`)
    }
  } finally {
    await stopAll([older!])
  }
  await pg.query(`UPDATE dcb_changes SET changes = replace(changes, $1, $2) WHERE strpos(changes, $1) > 0`, [PLACEHOLDER, EXPANDING], db)
  await pg.query(`UPDATE dcb_snapshots SET state = replace(state, $1, $2) WHERE strpos(state, $1) > 0`, [PLACEHOLDER, EXPANDING], db)
  if ((await holding(pg, db, PLACEHOLDER)) > 0) throw new Error('the placeholder regex is still stored')
  return holding(pg, db, EXPANDING)
}

const TABLES = [
  ['dcb_sessions', 'name'],
  ['dcb_changes', 'session'],
  ['dcb_snapshots', 'session'],
  ['dcb_journals', 'session'],
  ['dcb_requests', 'session'],
] as const

/** Moves session `name`'s rows out of the dcb tables into `older_*` ones (a replica starting now does not see it). */
export async function setAside(pg: TestPostgres, db: string, name: string): Promise<void> {
  for (const [table, column] of TABLES) {
    await pg.query(`CREATE TABLE older_${table} AS SELECT * FROM ${table} WHERE ${column} = $1`, [name], db)
    await pg.query(`DELETE FROM ${table} WHERE ${column} = $1`, [name], db)
  }
}

/** Puts the rows `setAside` moved back, with no notice: as another process wrote them, unheard by the replicas. */
export async function putBack(pg: TestPostgres, db: string): Promise<void> {
  for (const [table] of TABLES) {
    await pg.query(`INSERT INTO ${table} SELECT * FROM older_${table}`, [], db)
    await pg.query(`DROP TABLE older_${table}`, [], db)
  }
}
