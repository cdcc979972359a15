/**
 * One session's state in a PostgreSQL database that several `dcb serve` replicas share. The state
 * is a log of changes per session (`dcb_changes`, numbered by `seq`) over an occasional snapshot
 * (`dcb_snapshots`); each replica keeps the state in memory as a cache of that log.
 *
 * A write runs in a turn (the engine's `Gate`): the replica takes the session's advisory lock in a
 * database transaction, reads the changes the other replicas committed since its last one, runs the
 * engine's transactions (every one of this replica that waited, so a turn commits a group), then
 * writes their changes as the next entry of the log and commits, which releases the lock. Every
 * change thus runs on the state every earlier one made, whichever replica made it: an OTP, a renewal
 * or a retry is decided once. A read first takes in what was committed (no lock). A turn whose
 * commit's call fails asks the database whether its entry was committed before it answers.
 */
import type pg from 'pg'
import type { Gate } from '../core/context.js'
import { SandboxError } from '../core/errors.js'
import type { Change, State, SubscriptionRecord } from '../core/state.js'
import type { FedRequestLog } from './request-log-feed.js'
import { PostgresRequestLogFeed } from './postgres-request-log.js'
import { literal } from './postgres-connection.js'
import { remakeSession } from './postgres-making.js'
import { StoreError, type Store } from './types.js'

/** What a session store needs of the database (postgres.ts). */
export interface SessionDatabase {
  readonly pool: pg.Pool
  /** `HOST:PORT/DATABASE`, for messages. */
  readonly where: string
  readonly schemaVersion: number
  /** A database error as a StoreError naming the database (and the database marked away until a call works). */
  failed(e: unknown): StoreError
  /** The same for a read, which asked for no change: its reason names the database unreachable and speaks of no change. */
  unreadable(e: unknown): StoreError
  /** A failure as a read that met it sees it (no change was asked). */
  asRead(err: StoreError): StoreError
  /** A call to the database worked: it is back. */
  worked(): void
  failure(): Error | null
  /** Entries of a request log go here; numbered by the database. */
  writeRequests(session: string, entries: string[], capacity: number): Promise<void>
  clearRequests(session: string): Promise<void>
}

/** The log is folded into a snapshot once it holds this many entries past the last one. */
const SNAPSHOT_EVERY = 2000

/** How long the database is given to end a turn's process whose call failed (within the call timeout). */
const TERMINATE_WAIT_MS = 1500

/**
 * How long asking whether a failed turn committed may take in all: the call has waited its call
 * timeout already, and a replica cut off from the database must still answer within seconds.
 */
const ASK_COMMITTED_MS = 2500

interface Waiter {
  /** A write ('soft': soft changes alone, a read's counts, which make no session anew), or a read. */
  write: boolean | 'soft'
  resolve(changes: readonly Change[]): void
  reject(e: Error): void
}

interface Row {
  head: string | null
  seq: string | null
  changes: string | null
}

/**
 * A change as the log keeps it: a record whole, never as the fields that changed (`merge`), so that
 * replicas of the versions before, which read `v` as the record, keep working beside this one while
 * replicas are upgraded one at a time. A subscription whose history grew still goes with only the
 * charges it added (`add`: those versions read that).
 */
function logged(state: State, change: Change): Change {
  if (!('c' in change) || !change.merge) return change
  const record = (state[change.c] as Map<string, unknown>).get(change.id)
  if (!change.add) return { c: change.c, id: change.id, v: record }
  const { charges: _, ...rest } = record as SubscriptionRecord
  return { c: change.c, id: change.id, v: rest, add: change.add, keep: change.keep }
}

export class PostgresSessionStore implements Store, Gate {
  readonly kind = 'postgres' as const
  private state!: State
  /** The last entry of the log this replica's state has. */
  private seq = 0
  private snapshotSeq = 0
  private waiting: Waiter[] = []
  private busy = false
  /** The turn running now: the changes its transactions made and how to take each back. */
  private turn: { changes: Change[]; undos: (() => void)[]; done: Promise<void>; settle: (e?: Error) => void } | null = null
  private readonly requestLog: PostgresRequestLogFeed
  private closed = false

  constructor(
    private readonly db: SessionDatabase,
    readonly name: string,
    /** The most named sessions the database may hold when a write makes this one anew (none: no cap). */
    private readonly maxSessions = Infinity,
  ) {
    this.requestLog = new PostgresRequestLogFeed(db, name)
  }

  // ------------------------------------------------------------ Store

  async open(state: State): Promise<void> {
    await this.load(state)
  }

  /** Reads the snapshot and the log after it into `state`. */
  async load(state: State): Promise<void> {
    this.state = state
    await this.reload()
  }

  async activate(): Promise<void> {}
  async abandon(): Promise<void> {}

  /**
   * A transaction's changes join the turn it runs in; they are durable once the turn commits. Called
   * as the transaction ends, so the state holds each record as it left it: a record the file store's write-ahead log
   * would write as the fields that changed goes whole (see `logged`).
   */
  append(changes: Change[], undo?: () => void): Promise<void> {
    const turn = this.turn
    if (!turn) {
      undo?.()
      return Promise.reject(new StoreError(`a change of session ${this.name} came outside a turn of the database; nothing was changed`))
    }
    for (const c of changes) turn.changes.push(logged(this.state, c))
    if (undo) turn.undos.push(undo)
    return turn.done
  }

  failure(): Error | null {
    return this.db.failure()
  }

  behind(head: number): boolean {
    return head !== this.seq
  }

  /** Resolves once every turn queued so far has ended (a waiter at the back of the queue; the queue is served in order). */
  async flush(): Promise<void> {
    if (this.busy || this.waiting.length)
      await new Promise<void>((resolve) => this.waiting.push({ write: false, resolve: () => resolve(), reject: () => resolve() }))
    await this.requestLog.writing
  }

  async close(): Promise<void> {
    await this.flush().catch(() => {})
    this.closed = true
  }

  info(): Record<string, unknown> {
    return { kind: this.kind, database: this.db.where, schema_version: this.db.schemaVersion, session: this.name, log_seq: this.seq }
  }

  // ------------------------------------------------------------ Gate

  get gate(): Gate {
    return this
  }

  enter(soft = false): Promise<readonly Change[]> {
    return this.wait(soft ? 'soft' : true)
  }

  sync(): Promise<readonly Change[]> {
    return this.wait(false)
  }

  private wait(write: Waiter['write']): Promise<readonly Change[]> {
    if (this.closed) return Promise.reject(new StoreError(`session ${this.name} is closed`))
    return new Promise((resolve, reject) => {
      this.waiting.push({ write, resolve, reject })
      if (!this.busy) void this.pump()
    })
  }

  /** Runs turns while anyone waits: each takes every waiter queued so far. */
  private async pump(): Promise<void> {
    this.busy = true
    try {
      while (this.waiting.length) {
        const waiters = this.waiting
        this.waiting = []
        if (waiters.some((w) => w.write)) await this.writeTurn(waiters)
        else await this.readTurn(waiters)
      }
    } finally {
      this.busy = false
    }
  }

  /** Takes in what was committed, without the lock (before a read). */
  private async readTurn(waiters: Waiter[]): Promise<void> {
    let changes: readonly Change[]
    try {
      changes = await this.syncWith(this.db.pool, 'read')
      this.db.worked()
    } catch (e) {
      const err = this.db.unreadable(e)
      for (const w of waiters) w.reject(err)
      return
    }
    waiters.forEach((w, i) => w.resolve(i ? [] : changes))
  }

  private async writeTurn(waiters: Waiter[]): Promise<void> {
    let client: pg.PoolClient
    let taken: readonly Change[]
    try {
      client = await this.db.pool.connect()
    } catch (e) {
      const err = this.db.failed(e)
      // A read that waited in this turn (a write was queued beside it) asked for no change.
      for (const w of waiters) w.reject(w.write ? err : this.db.asRead(err))
      return
    }
    try {
      // One round trip: the transaction, the session's lock, and what was committed since our last entry.
      const results = (await client.query(
        `BEGIN; SELECT pg_advisory_xact_lock(4242, hashtext(${literal(this.name)})); ${this.logSince(literal(this.name), String(this.seq))}`,
      )) as unknown as pg.QueryResult<Row>[]
      taken = await this.syncWith(client, waiters.some((w) => w.write === true) ? 'write' : 'soft', results[2]!.rows)
    } catch (e) {
      client.release(true)
      // Made anew past the cap, a . or .., or only soft changes: its writes are refused; its reads run next (they find it gone).
      if (e instanceof SandboxError) {
        for (const w of waiters) if (w.write) w.reject(e)
        this.waiting.unshift(...waiters.filter((w) => !w.write))
        return
      }
      const err = this.db.failed(e)
      // A read that waited in this turn (a write was queued beside it) asked for no change.
      for (const w of waiters) w.reject(w.write ? err : this.db.asRead(err))
      return
    }
    let settle!: (e?: Error) => void
    const done = new Promise<void>((resolve, reject) => (settle = (e) => (e ? reject(e) : resolve())))
    done.catch(() => {})
    const turn = (this.turn = { changes: [] as Change[], undos: [] as (() => void)[], done, settle })
    // Every waiter runs its transaction now, in the microtasks that follow; the turn ends after them.
    waiters.forEach((w, i) => w.resolve(i ? [] : taken))
    await new Promise<void>((resolve) => setImmediate(resolve))
    this.turn = null
    const seq = this.seq + 1
    const entry = JSON.stringify(turn.changes)
    try {
      if (!turn.changes.length) await client.query('COMMIT')
      else {
        const name = literal(this.name)
        await client.query(
          `INSERT INTO dcb_changes (session, seq, changes) VALUES (${name}, ${seq}, ${literal(entry)});` +
            ` UPDATE dcb_sessions SET seq = ${seq} WHERE name = ${name}; SELECT pg_notify('dcb', ${literal(`C ${this.name}`)}); COMMIT`,
        )
        this.seq = seq
      }
      client.release()
      this.db.worked()
      turn.settle()
    } catch (e) {
      // node-postgres keeps the server process's id (BackendKeyData) without declaring it.
      const backend = (client as { processID?: number | null }).processID ?? null
      client.release(true)
      // A failed call is not a change not made: the reply of a COMMIT the database made may be what was lost,
      // or the database may still be doing it (slow past the call timeout).
      const committed = turn.changes.length ? await this.committedWithin(seq, entry, backend) : false
      if (committed) {
        this.seq = seq
        this.db.worked()
        turn.settle()
      } else {
        // Taken back the latest first, so each transaction finds the state as it left it. Not known
        // whether committed: the state is the one before the turn, as its seq says, and the next
        // turn or read takes in the entry if the database has it.
        for (let i = turn.undos.length - 1; i >= 0; i--) turn.undos[i]!()
        const err = this.db.failed(e)
        turn.settle(
          committed === false
            ? err
            : new StoreError(`${err.message}; whether its changes were committed is not known: the next call shows what the database holds`, 'unknown'),
        )
        return
      }
    }
    if (this.seq - this.snapshotSeq >= SNAPSHOT_EVERY) await this.snapshot().catch(() => {})
  }

  /** `committed`, or undefined (not known) once ASK_COMMITTED_MS pass first. */
  private committedWithin(seq: number, changes: string, backend: number | null): Promise<boolean | undefined> {
    let timer!: ReturnType<typeof setTimeout>
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ASK_COMMITTED_MS)))
    return Promise.race([this.committed(seq, changes, backend), late]).finally(() => clearTimeout(timer))
  }

  /**
   * Whether entry `seq` of the session's log is the one a turn sent (`changes`) whose call failed.
   * Asked on another connection. The turn's server process (`backend`) may still be at it: the call
   * timed out while it waited for a lock or a slow disk, and it would commit once it got there. It is
   * ended first (only while the turn's query is its query), so the outcome is settled now: a
   * transaction ended before its COMMIT is rolled back, one ended in its COMMIT is committed. Then
   * asked under the session's lock, which the turn's transaction held to its end. Undefined when the
   * database cannot tell (away too, the process not gone in time, or the entry folded into a
   * snapshot meanwhile).
   */
  private async committed(seq: number, changes: string, backend: number | null): Promise<boolean | undefined> {
    let client: pg.PoolClient
    try {
      client = await this.db.pool.connect()
    } catch {
      return undefined
    }
    try {
      const name = literal(this.name)
      // The start of the turn's last query, as the server shows it (pg_stat_activity), names that query alone.
      const turnQuery = literal(`INSERT INTO dcb_changes (session, seq, changes) VALUES (${name}, ${seq}, `)
      const end =
        backend === null
          ? ''
          : `SELECT pg_terminate_backend(pid, ${TERMINATE_WAIT_MS}) FROM pg_stat_activity WHERE pid = ${backend} AND starts_with(query, ${turnQuery});`
      const results = (await client.query(
        `${end} BEGIN; SELECT pg_advisory_xact_lock(4242, hashtext(${name}));` +
          ` SELECT (SELECT changes FROM dcb_changes WHERE session = ${name} AND seq = ${seq}) AS changes, (SELECT seq FROM dcb_snapshots WHERE session = ${name}) AS folded; COMMIT`,
      )) as unknown as pg.QueryResult<{ changes: string | null; folded: string | null; pg_terminate_backend?: boolean }>[]
      client.release()
      // Not gone in time (a warning, false): its transaction may yet commit, so the log says nothing sure.
      if (end && results[0]!.rows.some((r) => r.pg_terminate_backend === false)) return undefined
      const row = results.at(-2)!.rows[0]!
      if (row.changes === null && row.folded !== null && Number(row.folded) >= seq) return undefined
      return row.changes === changes
    } catch {
      client.release(true)
      return undefined
    }
  }

  /**
   * Applies what was committed after this replica's last entry; answers the changes (a reset first
   * when the state was read anew). A log folded past our last entry, or a session deleted and made
   * again, is read from its snapshot again.
   */
  private async syncWith(q: pg.Pool | pg.PoolClient, turn: 'read' | 'write' | 'soft', fetched?: Row[]): Promise<readonly Change[]> {
    const rows = fetched ?? (await q.query<Row>(this.logSince('$1', '$2'), [this.name, this.seq])).rows
    // Gone, or made anew elsewhere (its log starts over): what the request log holds here was the deleted session's.
    if (!rows.length || Number(rows[0]!.head) < this.seq) this.requestLog.restart()
    if (!rows.length) {
      // Deleted by another replica: a write makes it anew as a session is made on first use (under the cap, told to the
      // others: their lists follow), in its turn's transaction, or is refused as one; a soft turn is refused; a read finds it empty.
      if (turn !== 'read') await remakeSession(q as pg.PoolClient, this.name, turn === 'write' ? this.maxSessions : null)
      return this.reload(q)
    }
    const head = Number(rows[0]!.head)
    if (head < this.seq || (head > this.seq && Number(rows[0]!.seq) !== this.seq + 1)) return this.reload(q)
    const out: Change[] = []
    for (const row of rows) {
      if (row.seq === null) continue
      for (const c of JSON.parse(row.changes!) as Change[]) {
        this.state.apply(c)
        out.push(c)
        if ('reset' in c) this.requestLog.forgetAll()
      }
      this.seq = Number(row.seq)
    }
    return out
  }

  /** The query of the log's head and its entries after `seq` (parameters, or literals in a simple query). */
  private logSince(name: string, seq: string): string {
    return `SELECT s.seq AS head, c.seq, c.changes FROM dcb_sessions s LEFT JOIN dcb_changes c ON c.session = s.name AND c.seq > ${seq} WHERE s.name = ${name} ORDER BY c.seq`
  }

  /** The state anew from the snapshot and the log after it; answers it as a reset and its records. */
  private async reload(q: pg.Pool | pg.PoolClient = this.db.pool): Promise<readonly Change[]> {
    const snap = await q.query<{ seq: string; state: string }>(`SELECT seq, state FROM dcb_snapshots WHERE session = $1`, [this.name])
    const log = await q.query<{ seq: string; changes: string }>(`SELECT seq, changes FROM dcb_changes WHERE session = $1 AND seq > $2 ORDER BY seq`, [
      this.name,
      snap.rows[0]?.seq ?? 0,
    ])
    this.state.clear()
    const row = snap.rows[0]
    this.seq = this.snapshotSeq = row ? Number(row.seq) : 0
    if (row) this.state.load(JSON.parse(row.state))
    for (const r of log.rows) {
      for (const c of JSON.parse(r.changes) as Change[]) this.state.apply(c)
      this.seq = Number(r.seq)
    }
    // Not a reset anybody made: the engine re-derives what it keeps, its listeners show the state afresh.
    return [{ reset: true, reloaded: true }]
  }

  /** Folds the log into a snapshot (in a turn: the lock held, the state as of the last entry); of a session deleted meanwhile, none (not made anew). */
  private async snapshot(): Promise<void> {
    const client = await this.db.pool.connect()
    try {
      await client.query(`BEGIN; SELECT pg_advisory_xact_lock(4242, hashtext(${literal(this.name)}))`)
      await this.syncWith(client, 'soft')
      const seq = this.seq
      await client.query(
        `INSERT INTO dcb_snapshots (session, seq, state) VALUES ($1, $2, $3) ON CONFLICT (session) DO UPDATE SET seq = EXCLUDED.seq, state = EXCLUDED.state`,
        [this.name, seq, JSON.stringify(this.state.toJSON())],
      )
      await client.query(`DELETE FROM dcb_changes WHERE session = $1 AND seq <= $2`, [this.name, seq])
      await client.query('COMMIT')
      this.snapshotSeq = seq
      client.release()
    } catch (e) {
      client.release(true)
      throw e
    }
  }

  /** The session's request log: its entries go to the database, and it holds every replica's. */
  attach(requestLog: FedRequestLog): void {
    this.requestLog.attach(requestLog)
  }
}
