/**
 * The host of sessions: the default session and the named ones
 * (X-DCB-Session), every one built by `createSession` over the one loaded world (its index and
 * compiled rules shared). `dcb serve` and `createSandbox` are thin over it. Named sessions are made
 * on first use and, with a data folder, stored beside the default data file in one shared journal
 * (group commit: a write in any session costs a share of one fsync) with a snapshot file per
 * session, so they survive restarts and crashes exactly as the default one does.
 */
import { dotNameRefusal, isDotName, SESSION_NAME, SESSION_NAME_RULE } from '../contract/defaults.js'
import type { EngineOptions } from '../core/engine.js'
import { SandboxError } from '../core/errors.js'
import { State } from '../core/state.js'
import { MemoryStore } from '../store/memory.js'
import { folderSessions } from '../store/session-journal.js'
import { sharedSessionLimit, StoreError, type SessionStores, type SharedSessions, type Store } from '../store/types.js'
import type { StoreIo } from '../store/wal.js'
import type { LiveHubOptions } from './live.js'
import { JournalBudget } from './request-log.js'
import { createSession, DEFAULT_SESSION, type Session } from './session.js'

export { DEFAULT_SESSION, type Session } from './session.js'

/** `--max-sessions` unless given: every session costs memory, so there is always a cap. */
export const DEFAULT_MAX_SESSIONS = 1000

export function isSessionName(name: string): boolean {
  return SESSION_NAME.test(name)
}

export interface HostOptions {
  /** World, limits and host hooks every session's engine gets (not state or persist). */
  engine: Omit<EngineOptions, 'state' | 'persist'>
  /** The default session's store and the state it loaded (default: in memory, empty). */
  store?: Store
  state?: State
  /** Where named sessions are stored: a folder of data files, or nothing for memory. */
  folder?: string
  /** Where named sessions are stored, when not a folder (a database several processes share). */
  sessionStores?: SharedSessions
  journalSize?: number
  /** Bytes of request bodies the request journals of all sessions keep together (default 32 MiB). */
  journalBytes?: number
  /** The most sessions beside the default one (default 1,000); of a shared store, the most it holds, whoever made them. */
  maxSessions?: number
  compactBytes?: number
  version: string
  /** What `health` says of the store. */
  storeInfo?: () => Record<string, unknown>
  /** The console's live streams (tests shorten their intervals). */
  live?: LiveHubOptions
  /** Where the session files' writes and fsyncs can be made to fail (tests). */
  storeIo?: StoreIo
}

export class Host {
  readonly default: Session
  private readonly sessions = new Map<string, Session>()
  private readonly opening = new Map<string, Promise<Session>>()
  /** Sessions being dropped: a second drop (or a call) of one waits for the first, then finds it gone (404, not a second 200). */
  private readonly dropping = new Map<string, Promise<boolean>>()
  /** How many sessions were opened, and when each was (a list read before one was opened does not name it). */
  private opens = 0
  private readonly openedAt = new WeakMap<Session, number>()
  /** Where the named sessions are stored (none in memory). */
  private readonly stores: SessionStores | undefined
  /** The sessions several processes share (a database), or none. */
  private readonly database: SharedSessions | undefined
  private stored: Promise<string[]> | undefined
  private readonly budget: JournalBudget
  /** What every session's engine is made with (the world as the default session indexed it). */
  private shared: HostOptions['engine']

  constructor(private readonly opts: HostOptions) {
    this.stores = opts.sessionStores ?? (opts.folder ? folderSessions(opts.folder, { compactBytes: opts.compactBytes, io: opts.storeIo }) : undefined)
    this.database = opts.sessionStores
    this.budget = new JournalBudget(opts.journalBytes)
    this.shared = opts.engine
    this.default = this.build(DEFAULT_SESSION, opts.state ?? new State(), opts.store ?? new MemoryStore())
    // Every other session shares the default one's index of the world (its compiled rules included).
    this.shared = { ...opts.engine, world: this.default.engine.world }
  }

  /** Folder of the session data files beside a data file: `sandbox.json` -> `sandbox.json.sessions/`. */
  static folderFor(dataFile: string): string {
    return `${dataFile}.sessions`
  }

  private build(name: string, state: State, store: Store): Session {
    const o = this.opts
    const session = createSession({
      name,
      state,
      store,
      engine: this.shared,
      journalSize: o.journalSize,
      journalBudget: this.budget,
      version: o.version,
      storeInfo: o.storeInfo,
      live: o.live,
    })
    store.attach?.(session.journal)
    return session
  }

  /** Whether the sessions are shared with other processes (a database): reads take in what they wrote first. */
  get sharedStore(): boolean {
    return this.database !== undefined
  }

  /** How many named sessions are open. */
  get size(): number {
    return this.sessions.size
  }

  /** Every session, the default one first. */
  all(): Session[] {
    return [this.default, ...this.sessions.values()]
  }

  /** The session `name` if it is open (no side effect). */
  peek(name: string): Session | undefined {
    return name === DEFAULT_SESSION ? this.default : this.sessions.get(name)
  }

  /** The session `name`, made on first use; a bad name or a full host is a SandboxError (BAD_REQUEST or SESSION_LIMIT). */
  get(name: string): Session | Promise<Session> {
    // Asked for while it is dropped: once dropped, it is made anew (the old one takes no more changes).
    const dropping = this.dropping.size ? this.dropping.get(name) : undefined
    if (dropping) return dropping.catch(() => {}).then(() => this.get(name))
    const have = this.peek(name)
    if (have) return this.sharedStore ? syncOf(have) : have
    if (!isSessionName(name)) throw new SandboxError('BAD_REQUEST', `X-DCB-Session must be ${SESSION_NAME_RULE}`)
    const pending = this.opening.get(name)
    if (pending) return pending
    const max = this.opts.maxSessions ?? DEFAULT_MAX_SESSIONS
    // Shared: opened whichever process made it; only a new one counts against the cap, in the database.
    if (this.database) return this.begin(name, this.claim(this.database, name, max))
    // Every session kept in a data folder is open since the start: a dot name not open is a new one.
    if (isDotName(name)) throw new SandboxError('BAD_REQUEST', dotNameRefusal(name))
    this.refuseCaseTwin(name)
    if (this.sessions.size + this.opening.size >= max)
      throw new SandboxError(
        'SESSION_LIMIT',
        `the server holds its limit of ${max} session${max === 1 ? '' : 's'} (--max-sessions); delete one with DELETE /_sandbox/sessions/NAME`,
      )
    return this.begin(name, this.open(name))
  }

  /** A session being opened: asked for again meanwhile, the same promise answers. */
  private begin(name: string, opening: Promise<Session>): Promise<Session> {
    const p = opening.finally(() => this.opening.delete(name))
    this.opening.set(name, p)
    return p
  }

  /**
   * A shared session that is stored (whoever made it), or made now if the database holds fewer than
   * `max` (a `.` or `..` only opens: made by an older version, it can still be served and deleted).
   */
  private async claim(database: SharedSessions, name: string, max: number): Promise<Session> {
    const claimed = await database.claim(name, isDotName(name) ? null : max)
    if (claimed.stored) return this.open(name)
    if (isDotName(name)) throw new SandboxError('BAD_REQUEST', dotNameRefusal(name))
    throw sharedSessionLimit(claimed.count, max)
  }

  /** A shared session another process made (it is stored): opened here, never made anew. */
  private follow(name: string): Promise<unknown> | undefined {
    if (this.sessions.has(name)) return undefined
    return this.opening.get(name) ?? this.begin(name, this.open(name))
  }

  /**
   * Sessions kept in the data folder are files named after them: on macOS and Windows (case-insensitive
   * file systems) `Alice` and `alice` would share one, and one session's data would overwrite the
   * other's. A new name that differs from a session's only in case is refused there, on every system.
   */
  private refuseCaseTwin(name: string): void {
    if (!this.stores || this.stores.shared) return
    const lower = name.toLowerCase()
    for (const other of [...this.sessions.keys(), ...this.opening.keys()])
      if (other.toLowerCase() === lower)
        throw new SandboxError(
          'BAD_REQUEST',
          `a session "${other}" exists: names that differ only in case share a data file (on macOS and Windows); use "${other}" or another name`,
        )
  }

  private async open(name: string): Promise<Session> {
    let store: Store
    let state: State
    if (this.stores) {
      if (!this.sharedStore) await this.storedNames()
      // Shared: a write that makes it anew (deleted by another process meanwhile) counts against the cap.
      ;({ store, state } = await this.stores.open(name, this.opts.maxSessions ?? DEFAULT_MAX_SESSIONS))
    } else {
      store = new MemoryStore()
      state = new State()
      await store.open(state)
    }
    const session = this.build(name, state, store)
    this.sessions.set(name, session)
    this.openedAt.set(session, ++this.opens)
    // Events that fell due while it was stored run now, as for the default session at start.
    await session.engine.catchUp()
    return session
  }

  /**
   * Reads and checks the stored sessions, writing nothing (before the server is bound: a damaged
   * file refuses the start and changes nothing). Answers what recovery has to say (a torn line dropped).
   */
  async loadStored(): Promise<string[]> {
    return this.stores ? this.stores.load() : []
  }

  /** The sessions stored (a folder is read back once; a shared database is asked each time). */
  private storedNames(): Promise<string[]> {
    if (this.stores?.shared) return this.stores.names()
    return (this.stored ??= this.stores ? this.stores.names() : Promise.resolve([]))
  }

  /**
   * Shared sessions: opens those another process made and forgets those it deleted, so the list is the database's (nothing
   * to do otherwise). `stored`: a list read when `opens` was `listed` (else read now); a session opened since is not forgotten.
   */
  async syncSessions(stored?: Iterable<string>, listed = this.opens): Promise<void> {
    if (!this.sharedStore) return
    const names = new Set(stored ?? (await this.storedNames()))
    names.delete(DEFAULT_SESSION)
    for (const name of names) await this.follow(name)
    for (const [name, s] of this.sessions) if (!names.has(name) && !this.opening.has(name) && (this.openedAt.get(s) ?? 0) <= listed) this.forget(name, s)
  }

  /** What another process did to the shared sessions (a notice of the database). */
  notice(payload: string): void {
    // `C name`, `R name`, `S+name`, `S-name`: the name after two characters.
    const kind = payload[0]
    const name = payload.slice(2)
    if (kind === 'S' && payload[1] === '-') {
      const s = this.sessions.get(name)
      if (s) this.forget(name, s)
      return
    }
    // A bad name refuses (a notice is only a hint: the next read catches up).
    if (kind === 'S') return void (async () => isSessionName(name) && this.follow(name))().catch(() => {})
    const s = this.peek(name)
    // Only a session someone watches (the console's stream, an OTP long poll) follows at once; others catch up when next asked.
    if (!s?.engine.watched) return
    if (kind === 'C') void s.engine.sync().catch(() => {})
    else if (kind === 'R') void s.journal.sync?.().catch(() => {})
  }

  /** Forgets a session here (deleted in the shared database by another process). */
  private forget(name: string, s: Session): void {
    this.sessions.delete(name)
    this.budget.release(s.journal)
    void s.close().catch(() => {})
  }

  /**
   * Shared sessions: every open one takes in what the others wrote (the database was away, or before
   * a read of them all). One query says where every session's log ends: only the sessions behind it
   * are read, at once (a list of 1,000 sessions nobody wrote to since costs one round trip, not 1,000).
   * Nothing without a shared store.
   */
  async resync(): Promise<void> {
    if (!this.sharedStore) return
    const heads = await this.stores!.heads?.().catch(() => undefined)
    await Promise.all(
      this.all().map((s) => {
        const head = heads?.get(s.name)
        return head !== undefined && s.store.behind?.(head) === false ? undefined : syncOf(s).catch(() => {})
      }),
    )
  }

  /** Opens every stored session (at start-up; one a notice is opening already is not opened twice). */
  async openStored(): Promise<void> {
    for (const name of await this.storedNames()) await this.follow(name)
  }

  /**
   * The write half of the start, once the server is bound: every store made ready for writes, the
   * named sessions' first (a refusal there then leaves the default data file as it was too), then
   * what fell due while the server was down runs, once, in every session.
   */
  async activate(): Promise<void> {
    await this.stores?.activate?.()
    await this.default.store.activate()
    await this.default.engine.catchUp()
    await this.openStored()
  }

  /** A start that failed after `loadStored` (in `activate`): every store given back without a snapshot (`close` writes them), files as found. */
  async abandon(): Promise<void> {
    const named = [...this.sessions.values()]
    this.sessions.clear()
    for (const s of [this.default, ...named]) s.closeStreams()
    await Promise.allSettled([...named.map((s) => s.store.abandon()), this.stores?.abandon?.(), this.default.store.abandon()])
  }

  /** Whether a session of this name is open or being opened here. */
  has(name: string): boolean {
    return this.peek(name) !== undefined || this.opening.has(name)
  }

  /**
   * Drops a named session a refused call made (it was not there before it): a refusal stores nothing,
   * so the session is dropped while it holds nothing (no record, no request log entry), as if never
   * made. Not on a shared store, where another process may have made it meanwhile.
   */
  async discardUnused(name: string): Promise<void> {
    const s = this.sessions.get(name)
    if (!s || s.journal.size > 0 || Object.values(s.engine.sizes()).some((n) => n > 0)) return
    // Shared: the database deletes it only if no replica wrote to it meanwhile.
    if (this.database) {
      if ((await this.database.dropIfEmpty(name).catch(() => false)) && this.sessions.get(name) === s) this.forget(name, s)
      return
    }
    await this.drop(name).catch(() => {})
  }

  /** Drops a named session: its streams, its state and its data files. Answers whether it existed (of two drops at once, one finds it). */
  async drop(name: string): Promise<boolean> {
    if (!isSessionName(name)) throw new SandboxError('BAD_REQUEST', `"${name}" is not a session name: ${SESSION_NAME_RULE}`)
    if (name === DEFAULT_SESSION) throw new SandboxError('BAD_REQUEST', 'the default session cannot be deleted; reset it with POST /_sandbox/reset')
    // One drop of a name at a time: the next one finds what the first left (none, or one made since).
    for (let before = this.dropping.get(name); before; before = this.dropping.get(name)) await before.catch(() => {})
    const dropping = this.dropNow(name)
    this.dropping.set(name, dropping)
    try {
      return await dropping
    } finally {
      if (this.dropping.get(name) === dropping) this.dropping.delete(name)
    }
  }

  private async dropNow(name: string): Promise<boolean> {
    const pending = this.opening.get(name)
    if (pending) await pending.catch(() => {})
    // Shared: whichever process made it, it is deleted if the database has it (none is opened for that).
    if (this.database) return this.dropShared(this.database, name)
    const s = this.sessions.get(name)
    if (!s) return false
    // Dropped on disk first: a drop that cannot be written keeps the session (StoreError).
    await this.stores?.drop(name)
    // Unless the host closed meanwhile (it closed the session).
    if (this.sessions.get(name) === s) {
      this.sessions.delete(name)
      this.budget.release(s.journal)
      await s.close()
    }
    return true
  }

  /** Whether the database had it: of replicas dropping it at once, the one whose delete removed its row. */
  private async dropShared(database: SharedSessions, name: string): Promise<boolean> {
    const dropped = await database.drop(name)
    const s = this.sessions.get(name)
    if (s) this.forget(name, s)
    return dropped
  }

  /**
   * How many entries each session's request journal holds: shared, the database's journal (every
   * process's entries, this one's written first), the same through every process; else this one's.
   */
  async requestCounts(): Promise<Map<string, number>> {
    const all = this.all()
    if (!this.database) return new Map(all.map((s) => [s.name, s.journal.size]))
    await Promise.all(all.map((s) => s.store.flush()))
    const stored = await this.database.requestCounts()
    return new Map(all.map((s) => [s.name, stored.get(s.name) ?? 0]))
  }

  /** Runs what fell due in every session (the server's timer). */
  async catchUp(): Promise<void> {
    if (!this.sharedStore) {
      for (const s of this.all()) await s.engine.catchUp()
      return
    }
    // A database away is said by health (503); the timer tries again next time.
    const away = (e: unknown) => {
      // So is a session deleted meanwhile that a catch-up would make anew past the cap (the next list forgets it).
      if (!(e instanceof StoreError) && !(e instanceof SandboxError && e.code === 'SESSION_LIMIT')) throw e
    }
    // One query says where every session's log ends: a session nobody wrote to since is not read again.
    const listed = this.opens
    const heads = await this.stores!.heads?.().catch(away)
    await this.syncSessions(heads?.keys(), listed).catch(away)
    for (const s of this.all()) {
      const head = heads?.get(s.name)
      const synced = head !== undefined && s.store.behind?.(head) === false
      await s.engine.catchUp({ synced }).catch(away)
    }
  }

  /** The host shuts down: every session's running clock move stops at its next batch boundary. */
  interrupt(): void {
    for (const s of this.all()) s.engine.interrupt()
  }

  /** Resolves once no session runs a clock move. */
  async idle(): Promise<void> {
    for (const s of this.all()) await s.engine.idle()
  }

  /** Ends every session's live streams (the console's, `dcb logs -f`). */
  closeStreams(): void {
    for (const s of this.all()) s.closeStreams()
  }

  /** The error writes of the sessions answer while they fail, or null. */
  failure(): Error | null {
    return this.stores?.failure() ?? null
  }

  /** Closes every session (streams and stores, the default one's last) and the shared journal: a snapshot of every
   * session changed since its last one; throws (journals kept) when one cannot be written. */
  async close(): Promise<void> {
    // A session still being opened (a request in flight) is closed with the others, not left open after them.
    while (this.opening.size) await Promise.allSettled([...this.opening.values()])
    const named = [...this.sessions.values()]
    this.sessions.clear()
    this.default.closeStreams()
    // Every store is closed (each writes its snapshots) even when another cannot; a failure keeps its journals.
    const closing = async () => {
      await Promise.all(named.map((s) => s.close()))
      if (this.stored) await this.stored.catch(() => {})
      await this.stores?.close()
    }
    const failed = (await Promise.allSettled([closing(), this.default.close()])).flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []))
    if (failed.length)
      throw new StoreError(
        `${failed.map((e) => e.message).join('; ')}; the write-ahead logs are kept: the next start recovers every acknowledged write from them`,
      )
  }
}

/** A shared session, once it took in what the other processes wrote (its journal is brought in when read). */
async function syncOf(s: Session): Promise<Session> {
  await s.engine.sync()
  return s
}
