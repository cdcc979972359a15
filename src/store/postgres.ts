/**
 * The shared store: every replica of `dcb serve --store postgres://…` keeps the whole sandbox in one
 * PostgreSQL database (node-postgres, a pool per replica). This file connects, creates or upgrades
 * the tables (the schema version is kept in `dcb_meta`), checks the world, listens for what the other
 * replicas do (LISTEN/NOTIFY: the console's live stream and the list of sessions follow them) and
 * keeps the sessions; `postgres-session.ts` keeps one session's state.
 */
import { createHash } from 'node:crypto'
import pg from 'pg'
import { State } from '../core/state.js'
import { boundReason, connectionConfig } from './postgres-connection.js'
import { PostgresSessionStore, type SessionDatabase } from './postgres-session.js'
import { StoreError, type Store } from './types.js'

/** The tables this version of dcb writes; a database with a newer one is refused. */
export const SCHEMA_VERSION = 1

/** PostgreSQL 14 or later (server_version_num). */
const MIN_SERVER_VERSION = 140000

/** Each version's statements, from the one before it. */
const MIGRATIONS: Record<number, string> = {
  1: `
    CREATE TABLE dcb_sessions (name text PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now(), seq bigint NOT NULL DEFAULT 0);
    CREATE TABLE dcb_journals (session text PRIMARY KEY, requests bigint NOT NULL);
    CREATE TABLE dcb_changes (session text NOT NULL, seq bigint NOT NULL, changes text NOT NULL, PRIMARY KEY (session, seq));
    CREATE TABLE dcb_snapshots (session text PRIMARY KEY, seq bigint NOT NULL, state text NOT NULL);
    CREATE TABLE dcb_requests (session text NOT NULL, id bigint NOT NULL, entry text NOT NULL, PRIMARY KEY (session, id));
    INSERT INTO dcb_sessions (name) VALUES ('default');`,
}

export interface SharedStoreOptions {
  url: string
  /** The world this replica serves (its digest is compared with the database's). */
  world: unknown
  /** Make this world the database's (`--replace-world`). */
  replaceWorld?: boolean
  /** How long start-up tries to connect (default 10 s: with the checks, start-up ends within 15 s). */
  connectTimeoutMs?: number
  /** How long a call waits for the database before it answers that it is away (default 3 s). */
  callTimeoutMs?: number
}

/** Refusals of `--store` before anything is written (exit 2 for a bad URL, 1 otherwise). */
export class SharedStoreError extends StoreError {
  constructor(
    message: string,
    readonly usage = false,
  ) {
    super(message)
  }
}

/**
 * `HOST:PORT/DATABASE` of a PostgreSQL URL, or a SharedStoreError (usage) naming what is wrong and
 * where the URL came from (`given`; `dcb serve` checks its own first, so the default names the
 * library's option beside the flag).
 */
export function describeUrl(url: string, given = '--store (store)'): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw new SharedStoreError(`${given} "${redact(url)}" is not a URL: use postgres://USER:PASSWORD@HOST:PORT/DATABASE`, true)
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new SharedStoreError(`${given} takes a PostgreSQL URL (postgres:// or postgresql://), not ${u.protocol}//`, true)
  if (!u.hostname) throw new SharedStoreError(`${given} "${redact(url)}" names no host: use postgres://USER:PASSWORD@HOST:PORT/DATABASE`, true)
  return `${u.hostname}:${u.port || 5432}${u.pathname.length > 1 ? u.pathname : '/'}`
}

/** Why a server of this version cannot hold a shared sandbox (older than 14), or undefined. */
export function serverVersionProblem(where: string, versionNum: string, version: string): string | undefined {
  if (Number(versionNum) < MIN_SERVER_VERSION) return `the database at ${where} runs PostgreSQL ${version}: dcb needs PostgreSQL 14 or later`
}

/** A URL with its password hidden (for messages). */
function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@')
}

/** The digest of a world: replicas of one sandbox serve the same one. */
export function worldDigest(world: unknown): string {
  return createHash('sha256').update(JSON.stringify(world)).digest('hex')
}

/** The message of an error of node-postgres or of the socket. */
function reasonOf(e: unknown): string {
  const err = e as NodeJS.ErrnoException & { errors?: Error[] }
  if (err?.errors?.length) return reasonOf(err.errors[0])
  const bound = boundReason(err?.code, String(err?.message))
  if (bound) return `${bound} (${err.code})`
  return err?.code && !String(err.message).includes(err.code) ? `${err.message} (${err.code})` : String(err?.message ?? e)
}

/**
 * The most connections of a replica's pool (turns, reads, health). With the listener's and the request
 * log's, a replica opens at most POOL_MAX + 2 connections to the database.
 */
export const POOL_MAX = 10

export class SharedDatabase implements SessionDatabase {
  readonly pool: pg.Pool
  /** How long a call waits for the database (to connect, then per query) before it answers that it is away. */
  readonly callTimeoutMs: number
  readonly where: string
  schemaVersion = SCHEMA_VERSION
  private away: StoreError | null = null
  private listener: pg.Client | null = null
  private relisten: NodeJS.Timeout | null = null
  private closed = false
  /** Told what another replica did: `C name` (changes), `R name` (requests), `S+name` / `S-name` (a session made, deleted). */
  onNotice: (payload: string) => void = () => {}
  /** Told when the database is back after it was away (notices may have been missed). */
  onBack: () => void = () => {}

  private constructor(
    private readonly opts: SharedStoreOptions,
    where: string,
  ) {
    this.where = where
    this.callTimeoutMs = opts.callTimeoutMs ?? 3000
    this.pool = new pg.Pool({
      ...connectionConfig(opts.url, this.callTimeoutMs, this.callTimeoutMs),
      max: POOL_MAX,
      idleTimeoutMillis: 30_000,
    })
    // A connection that breaks while idle is dropped by the pool; the error must not end the process.
    this.pool.on('error', () => {})
    // Nor one that breaks while checked out (a turn waits between its queries; the database shuts down):
    // the pool listens only to idle connections; the turn's next query fails and drops this one.
    this.pool.on('connect', (client) => client.on('error', (e) => void this.failed(e)))
  }

  /**
   * Connects, creates or upgrades the tables and checks the world, writing nothing when it refuses:
   * a SharedStoreError naming the database and what is wrong.
   */
  static async open(opts: SharedStoreOptions): Promise<SharedDatabase> {
    const where = describeUrl(opts.url)
    const db = new SharedDatabase(opts, where)
    const client = new pg.Client(connectionConfig(opts.url, opts.connectTimeoutMs ?? 10_000, undefined))
    client.on('error', () => {})
    try {
      await client.connect()
    } catch (e) {
      await db.pool.end().catch(() => {})
      throw new SharedStoreError(`cannot use the database at ${where}: ${reasonOf(e)}`)
    }
    try {
      await db.prepare(client)
    } catch (e) {
      await db.pool.end().catch(() => {})
      throw e instanceof SharedStoreError ? e : new SharedStoreError(`cannot use the database at ${where}: ${reasonOf(e)}`)
    } finally {
      await client.end().catch(() => {})
    }
    return db
  }

  /** Schema and world, in one transaction under a lock (replicas starting together take turns). */
  private async prepare(client: pg.Client): Promise<void> {
    const { rows } = await client.query<{ server_version_num: string; server_version: string }>(
      `SELECT current_setting('server_version_num') AS server_version_num, current_setting('server_version') AS server_version`,
    )
    const old = serverVersionProblem(this.where, rows[0]!.server_version_num, rows[0]!.server_version)
    if (old) throw new SharedStoreError(old)
    await client.query('BEGIN')
    try {
      await client.query('SELECT pg_advisory_xact_lock(4242, 0)')
      await client.query(`CREATE TABLE IF NOT EXISTS dcb_meta (key text PRIMARY KEY, value text NOT NULL)`)
      const meta = new Map((await client.query<{ key: string; value: string }>('SELECT key, value FROM dcb_meta')).rows.map((r) => [r.key, r.value]))
      const version = Number(meta.get('schema_version') ?? 0)
      if (version > SCHEMA_VERSION)
        throw new SharedStoreError(
          `the database at ${this.where} has dcb schema version ${version}, newer than this dcb knows (${SCHEMA_VERSION}): run a newer dcb`,
        )
      for (let v = version + 1; v <= SCHEMA_VERSION; v++) await client.query(MIGRATIONS[v]!)
      await client.query(`INSERT INTO dcb_meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [
        String(SCHEMA_VERSION),
      ])
      const digest = worldDigest(this.opts.world)
      const theirs = meta.get('world_digest')
      if (theirs !== undefined && theirs !== digest && !this.opts.replaceWorld)
        throw new SharedStoreError(
          `the database at ${this.where} serves another world (its fixtures, or the --allow-ip ranges added to them, differ from this replica's): start with the same fixtures and --allow-ip, or give --replace-world to make this world the database's (stop the replicas of the old one first)`,
        )
      if (theirs !== digest)
        await client.query(`INSERT INTO dcb_meta (key, value) VALUES ('world_digest', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [digest])
      await client.query('COMMIT')
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {})
      throw e
    }
  }

  /** Starts hearing the other replicas (once the server is up). */
  async listen(): Promise<void> {
    if (this.closed || this.listener) return
    const client = new pg.Client(connectionConfig(this.opts.url, this.callTimeoutMs, undefined))
    const lost = (e?: unknown) => {
      if (this.listener !== client) return
      this.listener = null
      client.end().catch(() => {})
      if (this.closed) return
      this.failed(e ?? new Error('the connection ended'))
      this.relisten ??= setTimeout(() => {
        this.relisten = null
        void this.listen()
      }, 1000)
      this.relisten.unref()
    }
    client.on('error', lost)
    client.on('end', () => lost())
    client.on('notification', (n) => {
      if (!n.payload) return
      // Thrown here, an error would end the process (it runs in the client's socket handler): a notice is only a hint.
      try {
        this.onNotice(n.payload)
      } catch {
        // The next read of that session takes in what the notice was about.
      }
    })
    this.listener = client
    try {
      await client.connect()
      await client.query('LISTEN dcb')
    } catch (e) {
      lost(e)
      return
    }
    const wasAway = this.away !== null
    this.worked()
    if (wasAway) this.onBack()
  }

  failed(e: unknown): StoreError {
    if (e instanceof StoreError) return e
    const err = new StoreError(`the database at ${this.where} cannot be used: ${reasonOf(e)}`)
    this.away = err
    return err
  }

  unreadable(e: unknown): StoreError {
    return this.asRead(this.failed(e))
  }

  /** A failure as a read that met it sees it: the database could not be reached (no change was asked). */
  asRead(err: StoreError): StoreError {
    if (err.outcome !== 'not made') return err
    return new StoreError(err.message.replace(/ cannot be used: /, ' cannot be reached: '), 'not read')
  }

  worked(): void {
    if (this.listener || this.closed) this.away = null
  }

  failure(): Error | null {
    return this.away ?? (this.listener ? null : new StoreError(`the database at ${this.where} cannot be reached`))
  }

  /**
   * Asks the database (health) whether this replica can write: a transaction that writes a row and
   * commits, on a connection of the pool (a quiet partition, a pool that cannot get a connection, a
   * read-only or full database are seen too, within the call timeout). The row is written as it was.
   */
  async probe(): Promise<Error | null> {
    try {
      await this.pool.query(`BEGIN; UPDATE dcb_meta SET value = value WHERE key = 'schema_version'; COMMIT`)
      this.worked()
    } catch (e) {
      this.failed(e)
    }
    return this.failure()
  }

  // ------------------------------------------------------------ sessions

  /** The named sessions stored (the default one is always there). */
  async names(): Promise<string[]> {
    try {
      const { rows } = await this.pool.query<{ name: string }>(`SELECT name FROM dcb_sessions WHERE name <> 'default' ORDER BY created_at, name`)
      this.worked()
      return rows.map((r) => r.name)
    } catch (e) {
      throw this.unreadable(e)
    }
  }

  /** Every session with the number of its log's last entry (the server's timer: one query, whatever the sessions). */
  async heads(): Promise<Map<string, number>> {
    try {
      const { rows } = await this.pool.query<{ name: string; seq: string }>(`SELECT name, seq FROM dcb_sessions`)
      this.worked()
      return new Map(rows.map((r) => [r.name, Number(r.seq)]))
    } catch (e) {
      throw this.unreadable(e)
    }
  }

  /** A session's store, made in the database when new, with its state loaded. */
  async session(name: string): Promise<{ store: PostgresSessionStore; state: State }> {
    try {
      const made = await this.pool.query(`INSERT INTO dcb_sessions (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [name])
      if (made.rowCount) await this.pool.query(`SELECT pg_notify('dcb', $1)`, [`S+${name}`])
      const store = new PostgresSessionStore(this, name)
      const state = new State()
      await store.load(state)
      this.worked()
      return { store, state }
    } catch (e) {
      throw this.failed(e)
    }
  }

  /**
   * Deletes a named session and everything it kept (under its lock: no turn of it runs meanwhile);
   * answers whether it was there (of replicas deleting it at once, the one whose delete took its row).
   */
  async drop(name: string, ifEmpty = false): Promise<boolean> {
    const client = await this.pool.connect().catch((e) => Promise.reject(this.failed(e)))
    try {
      await client.query('BEGIN')
      await client.query(`SELECT pg_advisory_xact_lock(4242, hashtext($1))`, [name])
      // Its row first: a request log write holding it is waited for (its entries are then deleted below), one after it writes none.
      // `ifEmpty` (a refused call's session): only a session nobody wrote to; a replica writing to it later makes it anew.
      const empty = `AND seq = 0 AND NOT EXISTS (SELECT 1 FROM dcb_requests WHERE session = $1) AND NOT EXISTS (SELECT 1 FROM dcb_snapshots WHERE session = $1)`
      const dropped = ((await client.query(`DELETE FROM dcb_sessions WHERE name = $1 ${ifEmpty ? empty : ''}`, [name])).rowCount ?? 0) > 0
      if (ifEmpty && !dropped) {
        await client.query('ROLLBACK')
        client.release()
        return false
      }
      for (const table of ['dcb_changes', 'dcb_snapshots', 'dcb_requests', 'dcb_journals'])
        await client.query(`DELETE FROM ${table} WHERE session = $1`, [name])
      if (dropped) await client.query(`SELECT pg_notify('dcb', $1)`, [`S-${name}`])
      await client.query('COMMIT')
      client.release()
      return dropped
    } catch (e) {
      client.release(true)
      throw this.failed(e)
    }
  }

  /**
   * Request log entries, numbered after the session's last (one statement: the row lock keeps the numbers in commit order);
   * none of a session that is not there (another replica deleted it while this one answered a call of it).
   */
  async writeRequests(session: string, entries: string[], capacity: number): Promise<void> {
    const n = entries.length
    // Numbered in a row of their own (not the session's, which every turn updates), the notice in the same
    // statement (a one-row subquery the insert reads): one round trip that never waits for a turn. The session's
    // row is held (KEY SHARE, which a turn's update of it does not wait for) so that a delete, which takes it
    // first, either waits for the entries and deletes them, or leaves none written.
    await (
      await this.requestLogClient()
    ).query(
      `WITH s AS (SELECT name FROM dcb_sessions WHERE name = $1 FOR KEY SHARE),
            r AS (INSERT INTO dcb_journals (session, requests) SELECT name, $2 FROM s ON CONFLICT (session) DO UPDATE SET requests = dcb_journals.requests + $2 RETURNING requests),
            d AS (DELETE FROM dcb_requests WHERE session = $1 AND id <= (SELECT requests FROM r) - $4)
       INSERT INTO dcb_requests (session, id, entry)
         SELECT $1, r.requests - $2 + t.ord, t.e FROM r, unnest($3::text[]) WITH ORDINALITY AS t(e, ord), (SELECT pg_notify('dcb', $5)) AS notice`,
      [session, n, entries, capacity, `R ${session}`],
    )
  }

  /**
   * The connection request log entries are written on: the request log is not durable (as with the file
   * store), so its commits do not wait for the disk (synchronous_commit off) and cost the turns no fsync.
   */
  private requestLogClient(): Promise<pg.Client> {
    if (this.requestLogConn) return this.requestLogConn
    const client = new pg.Client(connectionConfig(this.opts.url, this.callTimeoutMs, this.callTimeoutMs, { synchronous_commit: 'off' }))
    const drop = () => {
      if (this.requestLogConn === made) this.requestLogConn = null
      client.end().catch(() => {})
    }
    client.on('error', drop)
    client.on('end', drop)
    const made: Promise<pg.Client> = client.connect().then(
      () => client,
      (e) => {
        drop()
        throw e
      },
    )
    this.requestLogConn = made
    return made
  }
  private requestLogConn: Promise<pg.Client> | null = null

  async clearRequests(session: string): Promise<void> {
    await (await this.requestLogClient()).query(`DELETE FROM dcb_requests WHERE session = $1`, [session])
  }

  info(): Record<string, unknown> {
    return { kind: 'postgres', database: this.where, schema_version: this.schemaVersion }
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.relisten) clearTimeout(this.relisten)
    const listener = this.listener
    this.listener = null
    await listener?.end().catch(() => {})
    const requestLog = this.requestLogConn
    this.requestLogConn = null
    await requestLog?.then((c) => c.end()).catch(() => {})
    await this.pool.end().catch(() => {})
  }
}

export type { Store }
