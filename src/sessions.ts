/**
 * Sessions (docs/guides/testing-an-integration.md): named, isolated sandboxes on one server. Each session has its
 * own engine, state and request journal; all share the loaded world (its index and compiled
 * rules). The default session is the server's own engine and data file, untouched by this module;
 * the others are made on first use and stored beside it in one shared journal (group commit: a
 * write in any session costs a share of one fsync) with a snapshot file per session, so they
 * survive restarts and crashes exactly as the default one does.
 */
import type { Engine, EngineOptions } from './core/engine.js'
import { Engine as EngineClass } from './core/engine.js'
import { SandboxError } from './core/errors.js'
import { State } from './core/state.js'
import { RequestJournal } from './http/journal.js'
import { MemoryStore } from './store/memory.js'
import { SessionJournal } from './store/session-journal.js'
import type { Store } from './store/types.js'

export const DEFAULT_SESSION = 'default'
/** `--max-sessions` unless given: every session costs memory, so there is always a cap. */
export const DEFAULT_MAX_SESSIONS = 1000
const NAME = /^[A-Za-z0-9._-]{1,64}$/

export function isSessionName(name: string): boolean {
  return NAME.test(name)
}

export interface Session {
  name: string
  engine: Engine
  journal: RequestJournal
  store: Store
  /** Handlers made for this session on its first request (by the HTTP layer). */
  handlers?: unknown
}

export interface SessionRegistryOptions {
  /** The default session's engine and journal (the server's own). */
  defaultEngine: Engine
  defaultJournal: RequestJournal
  defaultStore?: Store
  /** How a session's engine is made (world and limits as the default one; not state or persist). */
  engineOptions: Omit<EngineOptions, 'state' | 'persist'>
  /** Where sessions are stored: a folder of data files, or nothing for memory. */
  folder?: string
  journalSize?: number
  /** The most sessions beside the default one (default 1,000). */
  maxSessions?: number
  compactBytes?: number
}

export class SessionRegistry {
  readonly default: Session
  private readonly sessions = new Map<string, Session>()
  private readonly opening = new Map<string, Promise<Session>>()
  private readonly opts: SessionRegistryOptions
  /** The sessions' shared store on disk (none in memory), read back on first use. */
  private readonly journal: SessionJournal | undefined
  private stored: Promise<string[]> | undefined

  constructor(opts: SessionRegistryOptions) {
    this.opts = opts
    this.journal = opts.folder ? new SessionJournal(opts.folder, { compactBytes: opts.compactBytes }) : undefined
    this.default = { name: DEFAULT_SESSION, engine: opts.defaultEngine, journal: opts.defaultJournal, store: opts.defaultStore ?? new MemoryStore() }
  }

  /** Folder of the session data files beside a data file: `sandbox.json` -> `sandbox.json.sessions/`. */
  static folderFor(dataFile: string): string {
    return `${dataFile}.sessions`
  }

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

  /** The session `name`, made on first use; a bad name or a full registry is a SandboxError (BAD_REQUEST or SESSION_LIMIT). */
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
    const engine = new EngineClass({ ...this.opts.engineOptions, state, persist: (changes) => store.append(changes) })
    // Every session's journal keeps its bodies within the default journal's budget: one for the server.
    const journal = new RequestJournal(this.opts.journalSize ?? 1000, this.default.journal.budget)
    const session: Session = { name, engine, journal, store }
    this.sessions.set(name, session)
    // Events that fell due while it was stored run now, as for the default session at start.
    await engine.catchUp()
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

  /** Drops a session: its state and its data files. Answers whether it existed. */
  async drop(name: string): Promise<boolean> {
    if (!isSessionName(name)) throw new SandboxError('BAD_REQUEST', `"${name}" is not a session name`)
    const pending = this.opening.get(name)
    if (pending) await pending.catch(() => {})
    const s = this.sessions.get(name)
    if (!s) return false
    this.sessions.delete(name)
    s.journal.budget.release(s.journal)
    await s.store.close()
    await this.journal?.drop(name)
    return true
  }

  /** Runs what fell due in every session (the server's timer). */
  async catchUp(): Promise<void> {
    for (const s of this.sessions.values()) await s.engine.catchUp()
  }

  /** The host shuts down: every session's running clock move stops at its next batch boundary. */
  interrupt(): void {
    this.default.engine.interrupt()
    for (const s of this.sessions.values()) s.engine.interrupt()
  }

  /** Resolves once no session runs a clock move. */
  async idle(): Promise<void> {
    for (const s of this.sessions.values()) await s.engine.idle()
  }

  async close(): Promise<void> {
    const all = [...this.sessions.values()]
    this.sessions.clear()
    await Promise.all(all.map((s) => s.store.close()))
    if (this.stored) await this.stored.catch(() => {})
    await this.journal?.close()
  }
}
