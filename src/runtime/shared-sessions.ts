/**
 * The named sessions of a database several `dcb serve` replicas share, as a host keeps them: listed,
 * opened whoever made them, made under the session cap counted in the database (not per replica),
 * dropped. Loaded with the database (`server.ts` imports it on first use, as it does `postgres.ts`).
 */
import type pg from 'pg'
import { State } from '../core/state.js'
import { PostgresSessionStore } from '../store/postgres-session.js'
import type { SharedDatabase } from '../store/postgres.js'
import type { SharedSessions } from './host.js'

/**
 * Sessions are made one at a time across the replicas (count, then insert): a lock of its own, in the
 * one-key space (the sessions' turns and the schema use the two-key one), so no session's turn waits for it.
 */
const MAKING_SESSIONS = 4242

export function sharedSessions(db: SharedDatabase): SharedSessions {
  /** Runs `work` on a connection of the pool; a database error is the StoreError naming the database. */
  const using = async <T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await db.pool.connect().catch((e: unknown) => Promise.reject(db.failed(e)))
    try {
      const out = await work(client)
      client.release()
      db.worked()
      return out
    } catch (e) {
      // Destroyed, not given back: a transaction left open ends with it.
      client.release(true)
      throw db.failed(e)
    }
  }
  return {
    shared: true,
    load: async () => [],
    names: () => db.names(),
    heads: () => db.heads(),
    claim: (name, max) =>
      using(async (client) => {
        const stored = async () => ((await client.query(`SELECT 1 FROM dcb_sessions WHERE name = $1`, [name])).rowCount ?? 0) > 0
        // Made by anyone already (the usual case): no lock.
        if (await stored()) return { stored: true }
        if (max === null) return { stored: false, count: 0 }
        await client.query('BEGIN')
        await client.query(`SELECT pg_advisory_xact_lock(${MAKING_SESSIONS})`)
        if (await stored()) {
          await client.query('COMMIT')
          return { stored: true }
        }
        const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM dcb_sessions WHERE name <> 'default'`)
        const count = Number(rows[0]!.n)
        if (count >= max) {
          await client.query('ROLLBACK')
          return { stored: false, count }
        }
        await client.query(`INSERT INTO dcb_sessions (name) VALUES ($1)`, [name])
        await client.query(`SELECT pg_notify('dcb', $1)`, [`S+${name}`])
        await client.query('COMMIT')
        return { stored: true }
      }),
    // Opened as stored, never made here (`claim` makes): a session another replica just deleted is not made again.
    open: async (name) => {
      const store = new PostgresSessionStore(db, name)
      const state = new State()
      try {
        await store.load(state)
      } catch (e) {
        throw db.failed(e)
      }
      db.worked()
      return { store, state }
    },
    drop: (name) => db.drop(name),
    failure: () => db.failure(),
    close: async () => {},
  }
}
