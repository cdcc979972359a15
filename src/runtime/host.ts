/**
 * The host of sessions: the default session and the named ones
 * (X-DCB-Session), every one built by `createSession` over the one loaded world (its index and
 * compiled rules shared). `dcb serve` and `createSandbox` are thin over it. Named sessions are made
 * on first use and, with a data folder, stored beside the default data file in one shared journal
 * (group commit: a write in any session costs a share of one fsync) with a snapshot file per
 * session, so they survive restarts and crashes exactly as the default one does.
 */
import { SESSION_NAME } from '../contract/defaults.js'
import type { EngineOptions } from '../core/engine.js'
import { SandboxError } from '../core/errors.js'
import { State } from '../core/state.js'
import { MemoryStore } from '../store/memory.js'
import { SessionJournal } from '../store/session-journal.js'
import { StoreError, type Store } from '../store/types.js'
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
  journalSize?: number
  /** Bytes of request bodies the request journals of all sessions keep together (default 32 MiB). */
  journalBytes?: number
  /** The most sessions beside the default one (default 1,000). */
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
  /** The named sessions' shared store on disk (none in memory), read back on first use. */
  private readonly journal: SessionJournal | undefined
  private stored: Promise<string[]> | undefined
  private readonly budget: JournalBudget
  /** What every session's engine is made with (the world as the default session indexed it). */
  private shared: HostOptions['engine']

  constructor(private readonly opts: HostOptions) {
    this.journal = opts.folder ? new SessionJournal(opts.folder, { compactBytes: opts.compactBytes, io: opts.storeIo }) : undefined
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
    return createSession({
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
    const have = this.peek(name)
    if (have) return have
    if (!isSessionName(name)) throw new SandboxError('BAD_REQUEST', `X-DCB-Session must be 1-64 characters of A-Z a-z 0-9 . _ -`)
    const pending = this.opening.get(name)
    if (pending) return pending
    const max = this.opts.maxSessions ?? DEFAULT_MAX_SESSIONS
    if (this.sessions.size + this.opening.size >= max)
      throw new SandboxError('SESSION_LIMIT', `the server holds its limit of ${max} sessions (--max-sessions); delete one with DELETE /_sandbox/sessions/NAME`)
    const p = this.open(name).finally(() => this.opening.delete(name))
    this.opening.set(name, p)
    return p
  }

  private async open(name: string): Promise<Session> {
    let store: Store
    let state: State
    if (this.journal) {
      await this.storedNames()
      const s = await this.journal.store(name)
      store = s
      state = s.state
    } else {
      store = new MemoryStore()
      state = new State()
      await store.open(state)
    }
    const session = this.build(name, state, store)
    this.sessions.set(name, session)
    // Events that fell due while it was stored run now, as for the default session at start.
    await session.engine.catchUp()
    return session
  }

  /**
   * Reads and checks the stored sessions, writing nothing (before the server is bound: a damaged
   * file refuses the start and changes nothing). Answers what recovery has to say (a torn line dropped).
   */
  async loadStored(): Promise<string[]> {
    if (!this.journal) return []
    await this.journal.load()
    return this.journal.recovered.notes
  }

  /** The sessions stored on disk (reading the folder back once). */
  private storedNames(): Promise<string[]> {
    return (this.stored ??= this.journal ? this.journal.open() : Promise.resolve([]))
  }

  /** Opens every stored session (at start-up). */
  async openStored(): Promise<void> {
    for (const name of await this.storedNames()) if (!this.sessions.has(name)) await this.open(name)
  }

  /** Drops a named session: its streams, its state and its data files. Answers whether it existed. */
  async drop(name: string): Promise<boolean> {
    if (!isSessionName(name)) throw new SandboxError('BAD_REQUEST', `"${name}" is not a session name`)
    if (name === DEFAULT_SESSION) throw new SandboxError('BAD_REQUEST', 'the default session cannot be deleted; reset it with POST /_sandbox/reset')
    const pending = this.opening.get(name)
    if (pending) await pending.catch(() => {})
    const s = this.sessions.get(name)
    if (!s) return false
    // Dropped on disk first: a drop that cannot be written keeps the session (StoreError).
    await this.journal?.drop(name)
    if (this.sessions.get(name) !== s) return true
    this.sessions.delete(name)
    this.budget.release(s.journal)
    await s.close()
    return true
  }

  /** Runs what fell due in every session (the server's timer). */
  async catchUp(): Promise<void> {
    for (const s of this.all()) await s.engine.catchUp()
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
    return this.journal?.failure() ?? null
  }

  /** Closes every session (streams and stores, the default one's last) and the shared journal: a snapshot of every
   * session changed since its last one; throws (journals kept) when one cannot be written. */
  async close(): Promise<void> {
    const named = [...this.sessions.values()]
    this.sessions.clear()
    this.default.closeStreams()
    // Every store is closed (each writes its snapshots) even when another cannot; a failure keeps its journals.
    const closing = async () => {
      await Promise.all(named.map((s) => s.close()))
      if (this.stored) await this.stored.catch(() => {})
      await this.journal?.close()
    }
    const failed = (await Promise.allSettled([closing(), this.default.close()])).flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []))
    if (failed.length)
      throw new StoreError(`${failed.map((e) => e.message).join('; ')}; the journals are kept: the next start recovers every acknowledged write from them`)
  }
}
