/**
 * The named sessions of a database several `dcb serve` replicas share, as a host keeps them: listed,
 * opened whoever made them, made under the session cap counted in the database (not per replica),
 * dropped; and the clock new sessions and resets start at, the database's. Loaded with the database (`server.ts` imports it on first use, as it does `postgres.ts`).
 */
import type pg from 'pg'
import type { ClockStart } from '../core/clock.js'
import { SandboxError } from '../core/errors.js'
import { State } from '../core/state.js'
import { makeSession } from './postgres-making.js'
import { PostgresSessionStore } from './postgres-session.js'
import type { SharedDatabase } from './postgres.js'
import { sharedSessionLimit, StoreError, type SharedSessions, type StoredSession } from './types.js'

export function sharedSessions(db: SharedDatabase): SharedSessions {
  /** Runs `work` on a connection of the pool; a database error is the StoreError naming the database (of a read: `read`). */
  const using = async <T>(work: (client: pg.PoolClient) => Promise<T>, read = false): Promise<T> => {
    const refused = (e: unknown) => (read ? db.unreadable(e) : db.failed(e))
    const client = await db.pool.connect().catch((e: unknown) => Promise.reject(refused(e)))
    try {
      const out = await work(client)
      client.release()
      db.worked()
      return out
    } catch (e) {
      // Destroyed, not given back: a transaction left open ends with it.
      client.release(true)
      throw refused(e)
    }
  }
  let first: StoredSession | undefined
  const self: SharedSessions = {
    kind: 'postgres',
    // The default session is read now; the named ones are opened as they are asked for.
    load: async () => {
      first = await db.session('default')
      return []
    },
    default: () => {
      if (!first) throw new Error('the default session is read by load() first')
      return first
    },
    activate: async () => first?.store.activate(),
    abandon: async () => first?.store.abandon(),
    names: () => db.names(),
    // Another replica may have written since this one read it.
    fresh: (session, sync) => sync(session),
    // The list is the database's: those another replica made are opened here, those it deleted forgotten.
    // Through `this`: the list read is this object's `names` (a test holds it in a copy of this object).
    async others(listed) {
      const names = new Set(listed ?? (await this.names()))
      names.delete('default')
      return { stored: names, is: (name) => names.has(name) }
    },
    heads: () => db.heads(),
    // The database away (health says 503), or a session deleted meanwhile that a catch-up would make anew past the cap (the next list forgets it).
    transient: (e) => e instanceof StoreError || (e instanceof SandboxError && e.code === 'SESSION_LIMIT'),
    claim: (name, max) =>
      using(async (client) => {
        const stored = async () => ((await client.query(`SELECT 1 FROM dcb_sessions WHERE name = $1`, [name])).rowCount ?? 0) > 0
        // Made by anyone already (the usual case): no lock.
        if (await stored()) return { stored: true }
        if (max === null) return { stored: false, count: 0 }
        await client.query('BEGIN')
        const made = await makeSession(client, name, max)
        await client.query(made.stored ? 'COMMIT' : 'ROLLBACK')
        return made
      }),
    requestCounts: () =>
      using(async (client) => {
        const { rows } = await client.query<{ session: string; n: string }>(`SELECT session, count(*) AS n FROM dcb_requests GROUP BY session`)
        return new Map(rows.map((r) => [r.session, Number(r.n)]))
      }, true),
    // Opened as stored, never made here (`claim` makes): a session another replica just deleted is not made again
    // (a write to it once open makes it anew, under `max` as `claim` makes one).
    open: async (name, max) => {
      const store = new PostgresSessionStore(db, name, max)
      const state = new State()
      try {
        await store.load(state)
      } catch (e) {
        throw db.unreadable(e)
      }
      db.worked()
      return { store, state }
    },
    // Made by whoever asks first, under the cap the database counts (a `.` or `..` only opens: made by an older version).
    admit: async (name, max) => {
      const claimed = await self.claim(name, max)
      if (claimed.stored) return { made: true }
      return max === null ? { made: false } : { made: false, refusal: sharedSessionLimit(claimed.count, max) }
    },
    drop: (name) => db.drop(name),
    dropIfEmpty: (name) => db.drop(name, true),
    discard: (name) => self.dropIfEmpty(name),
    // Every process's entries, this one's written first: the same through every process.
    countRequests: async (here, flush) => {
      await flush()
      const stored = await self.requestCounts()
      return new Map([...here.keys()].map((name) => [name, stored.get(name) ?? 0]))
    },
    failure: () => db.failure(),
    close: async () => {},
  }
  return self
}

/**
 * Where every replica starts a new session's clock and a reset's: the database's, kept in `dcb_meta`
 * by the replica that made the database (`fresh`: its default session has no record yet) from its
 * `--clock` (`mine`), or real time, running, when it had none. One made before this was kept: real
 * time for every replica. So a replica whose `--clock` was not applied does not apply it there either.
 */
export async function sessionClock(db: SharedDatabase, mine: ClockStart | undefined, fresh: boolean): Promise<ClockStart | undefined> {
  const client = await db.pool.connect().catch((e: unknown) => Promise.reject(db.failed(e)))
  try {
    // Under the start-up lock: replicas starting together on a new database agree on the first one's.
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock(4242, 0)')
    let kept = (await client.query<{ value: string }>(`SELECT value FROM dcb_meta WHERE key = 'session_clock'`)).rows[0]?.value
    if (kept === undefined && fresh) {
      kept = JSON.stringify(mine ? { at: mine.at, frozen: mine.frozen } : null)
      await client.query(`INSERT INTO dcb_meta (key, value) VALUES ('session_clock', $1)`, [kept])
    }
    await client.query('COMMIT')
    const clock = kept === undefined ? null : readClock(kept)
    client.release()
    return clock ?? undefined
  } catch (e) {
    // Released here alone: a throw after its release released it twice (pg's error then took this one's place).
    client.release(true)
    throw db.failed(e)
  }
}

/** The kept session clock as stored (null: real time); one that does not read is named. */
function readClock(kept: string): ClockStart | null {
  let v: unknown
  try {
    v = JSON.parse(kept)
  } catch (e) {
    throw new Error(`dcb_meta's session_clock is not JSON of a clock (${(e as Error).message})`)
  }
  // JSON of something else would reach every new session's clock as it is.
  const clock = v as Partial<ClockStart> | null
  if (clock !== null && !(typeof clock === 'object' && Number.isFinite(clock.at) && typeof clock.frozen === 'boolean'))
    throw new Error(`dcb_meta's session_clock is not JSON of a clock (${kept.slice(0, 80)}: not null or {"at": ms, "frozen": true or false})`)
  return clock as ClockStart | null
}
