/**
 * The host of sessions: the default session and the named ones
 * (X-DCB-Session), every one built by `createSession` over the one loaded world (its index and
 * compiled rules shared). `dcb serve` and `createSandbox` are thin over it. Named sessions are made
 * on first use. Where they are kept is the `Sessions` the host is made with (memory, a data file,
 * a database several processes share): the host asks it, and never which kind it is.
 */
import { dotNameRefusal, isDotName, SESSION_NAME, SESSION_NAME_RULE } from '../contract/defaults.js'
import type { EngineOptions } from '../core/engine.js'
import { SandboxError } from '../core/errors.js'
import type { State } from '../core/state.js'
import { StoreError, type Sessions, type Store } from '../store/types.js'
import type { LiveHubOptions } from './live.js'
import { RegexPool } from '../core/regex-pool.js'
import { RequestLogBudget } from './request-log.js'
import { createSession, DEFAULT_SESSION, type Session } from './session.js'

export { DEFAULT_SESSION, type Session } from './session.js'
export { memorySessions } from '../store/memory.js'

/** `--max-sessions` unless given: every session costs memory, so there is always a cap. */
export const DEFAULT_MAX_SESSIONS = 1000

/** The drop notices a host remembers of sessions not open here (more than the sessions it may hold). */
const MAX_DROP_NOTICES = 2 * DEFAULT_MAX_SESSIONS

export function isSessionName(name: string): boolean {
  return SESSION_NAME.test(name)
}

export interface HostOptions {
  /** World, limits and host hooks every session's engine gets (not state or persist). */
  engine: Omit<EngineOptions, 'state' | 'persist'>
  requestLogSize?: number
  /** Bytes of request bodies the request logs of all sessions keep together (default 32 MiB). */
  requestLogBytes?: number
  /** The most sessions beside the default one (default 1,000); of a shared store, the most it holds, whoever made them. */
  maxSessions?: number
  version: string
  /** What `health` says of the store. */
  storeInfo?: () => Record<string, unknown>
  /** The console's live streams (tests shorten their intervals). */
  live?: LiveHubOptions
  /** Told of the runtime rules a session leaves out: a named one's as it opens here, any session's as a change leaves one out. */
  onLeftOut?: (session: Session, rules: readonly { id: string; problem: string }[]) => void
}

/** A host of the sessions `sessions` keeps (loaded: its default session read). */
export function createHost(sessions: Sessions, opts: HostOptions): Host {
  return new Host(sessions, opts)
}

export class Host {
  readonly default: Session
  private readonly sessions = new Map<string, Session>()
  private readonly opening = new Map<string, Promise<Session>>()
  /** Sessions being dropped: a second drop (or a call) of one waits for the first, then finds it gone (404, not a second 200). */
  private readonly dropping = new Map<string, Promise<boolean>>()
  /**
   * Drop notices of sessions not open here when they came (being opened, or named by a list read
   * before the drop): one opened meanwhile is checked against the store, and forgotten if it is gone.
   * Bounded (a notice is only a hint): the oldest is let go first.
   */
  private readonly dropNotices = new Set<string>()
  /** How many sessions were opened, and when each was (a list read before one was opened does not name it). */
  private opens = 0
  private readonly openedAt = new WeakMap<Session, number>()
  private readonly budget: RequestLogBudget
  /** Whether the host shuts down (`interrupt`): a session opened after is interrupted as it opens. */
  private interrupted = false
  /** What every session's engine is made with (the world as the default session indexed it). */
  private shared: HostOptions['engine']

  /** `store`: where the sessions are kept (default: in memory). */
  constructor(
    readonly store: Sessions,
    private readonly opts: HostOptions,
  ) {
    this.budget = new RequestLogBudget(opts.requestLogBytes)
    // One pool of rule regexes for every session: their memory is bounded however many sessions there are.
    this.shared = { ...opts.engine, regexPool: opts.engine.regexPool ?? new RegexPool() }
    const first = store.default()
    this.default = this.build(DEFAULT_SESSION, first.state, first.store)
    // Every other session shares the default one's index of the world (its compiled rules included).
    this.shared = { ...this.shared, world: this.default.engine.world }
  }

  private build(name: string, state: State, store: Store): Session {
    const o = this.opts
    const session = createSession({
      name,
      state,
      store,
      engine: this.shared,
      requestLogSize: o.requestLogSize,
      requestLogBudget: this.budget,
      version: o.version,
      storeInfo: o.storeInfo,
      live: o.live,
    })
    store.attach?.(session.requestLog)
    session.engine.onRulesLeftOut((rules) => this.opts.onLeftOut?.(session, rules))
    return session
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
    // Where other processes write too, once it took in what they wrote.
    if (have) return this.store.fresh(have, syncOf)
    if (!isSessionName(name)) throw new SandboxError('BAD_REQUEST', `X-DCB-Session must be ${SESSION_NAME_RULE}`)
    const pending = this.opening.get(name)
    if (pending) return pending
    return this.begin(name, this.admit(name, [...this.sessions.keys(), ...this.opening.keys()]))
  }

  /** A session being opened: asked for again meanwhile, the same promise answers. */
  private begin(name: string, opening: Promise<Session>): Promise<Session> {
    const p = opening.finally(() => this.opening.delete(name))
    this.opening.set(name, p)
    return p
  }

  /**
   * A session not open here, opened if the store admits it: stored (a shared store's, whoever made
   * it), or made now under the cap (a `.` or `..` only opens: made by an older version, it can still
   * be served and deleted). `open`: the names open or being opened here.
   */
  private async admit(name: string, open: string[]): Promise<Session> {
    const admitted = await this.store.admit(name, isDotName(name) ? null : (this.opts.maxSessions ?? DEFAULT_MAX_SESSIONS), open)
    if (admitted.made) return this.open(name)
    throw admitted.refusal ?? new SandboxError('BAD_REQUEST', dotNameRefusal(name))
  }

  /** A shared session another process made (it is stored): opened here, never made anew. */
  private follow(name: string): Promise<unknown> | undefined {
    if (this.sessions.has(name)) return undefined
    return this.opening.get(name) ?? this.begin(name, this.open(name))
  }

  private async open(name: string): Promise<Session> {
    // Shared: a write that makes it anew (deleted by another process meanwhile) counts against the cap.
    const { store, state } = await this.store.open(name, this.opts.maxSessions ?? DEFAULT_MAX_SESSIONS)
    const session = this.build(name, state, store)
    // Opened while the host shuts down (its request came just before): it is told at once, as the others were.
    if (this.interrupted) session.engine.interrupt()
    this.sessions.set(name, session)
    this.openedAt.set(session, ++this.opens)
    // Events that fell due while it was stored run now, as for the default session at start.
    await session.engine.catchUp()
    // Dropped by another process while it was opened here (a refused call's session, made and dropped at once): not kept.
    if (this.dropNotices.delete(name) && !(await this.stillStored(name))) {
      if (this.sessions.get(name) === session) this.forget(name, session)
      return session
    }
    const left = session.engine.disabledRules()
    if (left.length) this.opts.onLeftOut?.(session, left)
    return session
  }

  /** Whether `name` is still stored (a database that cannot answer keeps it: the next list syncs). */
  private async stillStored(name: string): Promise<boolean> {
    return (await this.store.others().catch(() => undefined))?.is(name) ?? true
  }

  /** The sessions stored (a folder's as the start read them back; a shared database is asked each time). */
  private storedNames(): Promise<string[]> {
    return this.store.names()
  }

  /**
   * Opens the sessions other processes made and forgets those they deleted, so the list is the store's (a database's; memory
   * and a folder answer that nothing was done). `stored`: a list read when `opens` was `listed` (else read now); a session
   * opened since is not forgotten.
   */
  async syncSessions(stored?: Iterable<string>, listed = this.opens): Promise<void> {
    const others = await this.store.others(stored)
    for (const name of others.stored) await this.follow(name)
    for (const [name, s] of this.sessions)
      if (!others.is(name) && (this.dropNotices.has(name) || (!this.opening.has(name) && (this.openedAt.get(s) ?? 0) <= listed))) this.forget(name, s)
  }

  /** What another process did to the shared sessions (a notice of the database). */
  notice(payload: string): void {
    // `C name`, `R name`, `S+name`, `S-name`: the name after two characters.
    const kind = payload[0]
    const name = payload.slice(2)
    if (kind === 'S' && payload[1] === '-') {
      const s = this.sessions.get(name)
      if (s) return this.forget(name, s)
      this.dropNotices.delete(name)
      this.dropNotices.add(name)
      if (this.dropNotices.size > MAX_DROP_NOTICES) this.dropNotices.delete(this.dropNotices.values().next().value as string)
      return
    }
    if (kind === 'S') this.dropNotices.delete(name)
    // A bad name refuses (a notice is only a hint: the next read syncs).
    if (kind === 'S') return void (async () => isSessionName(name) && this.follow(name))().catch(() => {})
    const s = this.peek(name)
    // Only a session someone watches (the console's stream, an OTP long poll) follows at once; others sync when next asked.
    if (!s?.engine.watched) return
    if (kind === 'C') void s.engine.sync().catch(() => {})
    else if (kind === 'R') void s.requestLog.sync?.().catch(() => {})
  }

  /** Forgets a session here (deleted in the shared database by another process). */
  private forget(name: string, s: Session): void {
    this.sessions.delete(name)
    this.budget.release(s.requestLog)
    void s.close().catch(() => {})
  }

  /**
   * Every open session takes in what other processes wrote (the database was away, or before a read
   * of them all). One query says where every session's log ends: only the sessions behind it are read,
   * at once (a list of 1,000 sessions nobody wrote to since costs one round trip, not 1,000). Memory
   * and a folder answer at once: only this process writes them.
   */
  async resync(): Promise<void> {
    const heads = await this.store.heads().catch(() => undefined)
    await Promise.all(
      this.all().map(async (s) => {
        const head = heads?.get(s.name)
        if (head === undefined || s.store.behind?.(head) !== false) await Promise.resolve(this.store.fresh(s, syncOf)).catch(() => {})
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
    await this.store.activate()
    await this.default.engine.catchUp()
    await this.openStored()
  }

  /** A start that failed (in `activate`): every store given back without a snapshot (`close` writes them), files as found. */
  async abandon(): Promise<void> {
    const named = [...this.sessions.values()]
    this.sessions.clear()
    for (const s of [this.default, ...named]) s.closeStreams()
    await Promise.allSettled([...named.map((s) => s.store.abandon()), this.store.abandon()])
  }

  /** Whether a session of this name is open or being opened here. */
  has(name: string): boolean {
    return this.peek(name) !== undefined || this.opening.has(name)
  }

  /**
   * Drops a named session a refused call made (it was not there before it): a refusal stores nothing,
   * so the session is dropped while it holds nothing (no record, no request log entry), as if never
   * made. A shared store deletes it only if no process wrote to it meanwhile.
   */
  async discardUnused(name: string): Promise<void> {
    const s = this.sessions.get(name)
    if (!s || s.requestLog.size > 0 || Object.values(s.engine.sizes()).some((n) => n > 0)) return
    await this.drop(name, true).catch(() => {})
  }

  /**
   * Drops a named session: its streams, its state and its data files. Answers whether it existed (of
   * two drops at once, one finds it). `unused`: only if nothing was written to it (`discardUnused`).
   */
  async drop(name: string, unused = false): Promise<boolean> {
    if (!isSessionName(name)) throw new SandboxError('BAD_REQUEST', `"${name}" is not a session name: ${SESSION_NAME_RULE}`)
    if (name === DEFAULT_SESSION) throw new SandboxError('BAD_REQUEST', 'the default session cannot be deleted; reset it with POST /_sandbox/reset')
    // One drop of a name at a time: the next one finds what the first left (none, or one made since).
    for (let before = this.dropping.get(name); before; before = this.dropping.get(name)) await before.catch(() => {})
    const dropping = this.dropNow(name, unused)
    this.dropping.set(name, dropping)
    try {
      return await dropping
    } finally {
      if (this.dropping.get(name) === dropping) this.dropping.delete(name)
    }
  }

  private async dropNow(name: string, unused: boolean): Promise<boolean> {
    const pending = this.opening.get(name)
    if (pending) await pending.catch(() => {})
    const s = this.sessions.get(name)
    // Dropped in the store first: a drop that cannot be written keeps the session (StoreError). Shared:
    // whichever process made it, it is deleted if the database has it (of replicas dropping it at once,
    // the one whose delete removed its row finds it).
    const dropped = await (unused ? this.store.discard(name) : this.store.drop(name, s !== undefined))
    const now = this.sessions.get(name)
    // Unless the host closed meanwhile (it closed the session); unused, only the one found empty.
    if (now && (unused ? dropped && now === s : true)) this.forget(name, now)
    return dropped
  }

  /**
   * How many entries each session's request log holds: shared, the database's request log (every
   * process's entries, this one's written first), the same through every process; else this one's.
   */
  async requestCounts(): Promise<Map<string, number>> {
    const all = this.all()
    const flush = async () => void (await Promise.all(all.map((s) => s.store.flush())))
    return this.store.countRequests(new Map(all.map((s) => [s.name, s.requestLog.size])), flush)
  }

  /** Runs what fell due in every session (the server's timer). */
  async catchUp(): Promise<void> {
    // A store away is said by health (503); the timer tries again next time. Other errors stop it and are said.
    const away = (e: unknown) => {
      if (!this.store.transient(e)) throw e
    }
    // One query says where every session's log ends: a session nobody wrote to since is not read again.
    const listed = this.opens
    const heads = await this.store.heads().catch(away)
    await this.syncSessions(heads?.keys(), listed).catch(away)
    for (const s of this.all()) {
      const head = heads?.get(s.name)
      const synced = head !== undefined && s.store.behind?.(head) === false
      await s.engine.catchUp({ synced }).catch(away)
    }
  }

  /** The host shuts down: every session's running clock move stops at its next batch boundary. */
  interrupt(): void {
    this.interrupted = true
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
    return this.store.failure()
  }

  /** Closes every session (streams and stores, the default one's last) and the shared write-ahead log: a snapshot of every
   * session changed since its last one; throws (write-ahead logs kept) when one cannot be written. */
  async close(): Promise<void> {
    // A session still being opened (a request in flight) is closed with the others, not left open after them.
    while (this.opening.size) await Promise.allSettled([...this.opening.values()])
    const named = [...this.sessions.values()]
    this.sessions.clear()
    this.default.closeStreams()
    // Every store is closed (each writes its snapshots) even when another cannot; a failure keeps its write-ahead logs.
    const closing = async () => {
      await Promise.all(named.map((s) => s.close()))
      await this.store.close()
    }
    const failed = (await Promise.allSettled([closing(), this.default.close()])).flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []))
    if (failed.length)
      throw new StoreError(
        `${failed.map((e) => e.message).join('; ')}; the write-ahead logs are kept: the next start recovers every acknowledged write from them`,
      )
  }
}

/** A session, once it took in what other processes wrote (its request log is brought in when read). */
async function syncOf(s: Session): Promise<Session> {
  await s.engine.sync()
  return s
}
