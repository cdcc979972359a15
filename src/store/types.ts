import type { Gate } from '../core/context.js'
import { SandboxError } from '../core/errors.js'
import type { Change, State } from '../core/state.js'
import type { FedRequestLog } from './request-log-feed.js'

/**
 * Persistence behind the engine. The engine applies changes to its in-memory state and hands them
 * to `append`, which serialises them at once and resolves when they are durable.
 */
export interface Store {
  readonly kind: 'memory' | 'file' | 'postgres'
  /** Loads what was persisted into `state` (replaying the write-ahead log after a crash): `load` then `activate`. */
  open(state: State): Promise<void>
  /** The read half of `open`: loads and checks, takes the data file, writes nothing. */
  load(state: State): Promise<void>
  /** The write half of `open`, once the server is bound: ready for appends. */
  activate(): Promise<void>
  /** Gives the data file back after a start that failed (after `load`, or `activate` too), without a snapshot. */
  abandon(): Promise<void>
  /**
   * Persists one transaction's changes; resolves once they survive a crash. When they cannot be
   * made durable, `undo` runs (the engine puts its state back as before the transaction) and the
   * promise rejects with a StoreError. `soft`: nobody waits for them (a Status's coverage counts):
   * a store may hold them a moment and write them with the next group.
   */
  append(changes: Change[], undo?: () => void, soft?: boolean): Promise<void>
  /** The error writes answer while they fail (health says it), or null. */
  failure?(): Error | null
  /** Resolves when everything appended so far is durable. */
  flush(): Promise<void>
  /** Flushes, writes a compact snapshot where it has one, releases the data file. */
  close(): Promise<void>
  info(): Record<string, unknown>
  /** A store several processes share: the engine runs every transaction in a turn of it. */
  readonly gate?: Gate
  /** A store several processes share: the session's request log holds every process's entries through it. */
  attach?(requestLog: FedRequestLog): void
  /** A store several processes share: whether its state lacks entries of a log whose last one is `head`. */
  behind?(head: number): boolean
}

/** A session's store and its state as stored. */
export interface StoredSession {
  store: Store
  state: State
}

/** Whether a new session may be made: `refusal` says why not (none: a `.` or `..` that is not stored, which the host refuses). */
export type Admission = { made: true } | { made: false; refusal?: SandboxError }

/**
 * Where a host keeps its sessions, the default one among them: in memory (`memorySessions`), in a data
 * folder (`fileSessions`) or in a database several processes share (`sharedSessions`). The host
 * (`runtime/host.ts`) takes one and asks it, never which kind it is.
 */
export interface Sessions {
  readonly kind: 'memory' | 'file' | 'postgres'
  /** Reads and checks what is stored (the default session, then the named ones), writing nothing; answers what recovery has to say. */
  load(): Promise<string[]>
  /** The default session, as `load` read it. */
  default(): StoredSession
  /** Once the server is bound: ready for writes (a torn tail cut, the write-ahead log opened). */
  activate(): Promise<void>
  /** A start that failed: released without a snapshot, what `activate` made taken back. */
  abandon(): Promise<void>
  /** The named sessions stored. */
  names(): Promise<string[]>
  /**
   * A read of a session open here: at once where only this process writes (memory, a folder); in a
   * database other processes share, once `sync` took in what they wrote.
   */
  fresh<T>(session: T, sync: (session: T) => Promise<T>): T | Promise<T>
  /**
   * The named sessions as other processes left them, for the host to follow: those `stored` (opened
   * here when they are not) and whether one open here still `is` stored (forgotten here when not).
   * `listed`: names read already (of `heads`). Only this process writes (memory, a folder): nothing to follow.
   */
  others(listed?: Iterable<string>): Promise<Others>
  /** Every session (the default one too) with the number of its log's last entry as all processes wrote it, in one call; none where only this process writes. */
  heads(): Promise<Map<string, number>>
  /** Whether an error of the server's timer is the store away: health says it and the next tick tries again (a database's; a folder's is said on stderr). */
  transient(e: unknown): boolean
  /**
   * Whether a session `name` that is not open here may be opened or made: `max` is the cap on
   * sessions (null: only open one that is stored), `open` the names open or being opened here.
   */
  admit(name: string, max: number | null, open: readonly string[]): Promise<Admission>
  /**
   * A session's store and its state as stored (made when new). Shared: `max` is the cap a write to it
   * counts against when it makes it anew (another process deleted it meanwhile).
   */
  open(name: string, max?: number): Promise<StoredSession>
  /**
   * Deletes `name` and all it kept; answers whether it was stored (of processes deleting it at once,
   * one finds it). `here`: whether it is open in this host (every session a folder keeps is).
   */
  drop(name: string, here?: boolean): Promise<boolean>
  /** Deletes `name`, which a refused call made, only if nothing was written to it meanwhile; answers whether it did. */
  discard(name: string): Promise<boolean>
  /**
   * How many entries each session's request log holds: `here`, this process's counts (`flush`
   * writes this process's entries); shared, the store's (every process's).
   */
  countRequests(here: Map<string, number>, flush: () => Promise<void>): Promise<Map<string, number>>
  /** The error writes answer while they fail (health says it), or null. */
  failure(): Error | null
  /** Closes what the sessions share (the named sessions' write-ahead log); each session's store is closed with it. */
  close(): Promise<void>
}

export class StoreError extends Error {
  constructor(
    message: string,
    /**
     * `unknown`: the change may have been made (a shared database's COMMIT whose reply was lost); `not
     * read`: a read that could not get the state (no change was asked); otherwise nothing was changed.
     */
    readonly outcome: 'not made' | 'unknown' | 'not read' = 'not made',
  ) {
    super(message)
    this.name = 'StoreError'
  }
}

/** What other processes did to the named sessions (`Sessions.others`). */
export interface Others {
  stored: Iterable<string>
  is(name: string): boolean
}

/** What sessions only this process writes (memory, a folder) answer of the others: nothing was done, no read waits. */
export const WRITTEN_HERE: Pick<Sessions, 'fresh' | 'others' | 'heads' | 'transient'> = {
  fresh: (session) => session,
  others: async () => ({ stored: [], is: () => true }),
  heads: async () => new Map(),
  transient: () => false,
}

/** Sessions several processes share (a database): the cap on them is counted there, not per process. */
export interface SharedSessions extends Sessions {
  /** Deletes `name` only if nothing was ever written to it (no log entry, snapshot or request); answers whether it did. */
  dropIfEmpty(name: string): Promise<boolean>
  /**
   * Whether `name` is stored, made now when not (`max` given) unless the store holds `max` named
   * sessions or more (counted and made as one step, whichever process makes its own at the same time);
   * `count` is what it holds when it refuses.
   */
  claim(name: string, max: number | null): Promise<{ stored: true } | { stored: false; count: number }>
  /** How many entries each session's request log holds in the store (every process's; a session with none is absent). */
  requestCounts(): Promise<Map<string, number>>
}

/** The refusal of a new session by a host holding `max` (counted here, not in a store others share). */
export function sessionLimit(max: number): SandboxError {
  return new SandboxError(
    'SESSION_LIMIT',
    `the server holds its limit of ${max} session${max === 1 ? '' : 's'} (--max-sessions); delete one with DELETE /_sandbox/sessions/NAME`,
  )
}

/** A store kept in this process: a session not open is new; made while the host holds fewer than `max`. */
export function admitHere(max: number | null, open: readonly string[]): Admission {
  if (max === null) return { made: false }
  return open.length >= max ? { made: false, refusal: sessionLimit(max) } : { made: true }
}

/** The refusal of a new session (made on first use, or made anew by a write) by a shared store holding `count` of `max`. */
export function sharedSessionLimit(count: number, max: number): SandboxError {
  return new SandboxError(
    'SESSION_LIMIT',
    `the shared sandbox holds ${count} session${count === 1 ? '' : 's'}, at or past this server's limit of ${max} (--max-sessions, counted over every replica); delete one with DELETE /_sandbox/sessions/NAME`,
  )
}
