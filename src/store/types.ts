import type { Change, State } from '../core/state.js'

/**
 * Persistence behind the engine. The engine applies changes to its in-memory state and hands them
 * to `append`, which serialises them at once and resolves when they are durable.
 */
export interface Store {
  readonly kind: 'memory' | 'file'
  /** Loads what was persisted into `state` (replaying the journal after a crash): `load` then `activate`. */
  open(state: State): Promise<void>
  /** The read half of `open`: loads and checks, takes the data file, writes nothing. */
  load(state: State): Promise<void>
  /** The write half of `open`, once the server is bound: ready for appends. */
  activate(): Promise<void>
  /** Gives the data file back after a start that failed between `load` and `activate`, changing nothing. */
  abandon(): Promise<void>
  /**
   * Persists one transaction's changes; resolves once they survive a crash. When they cannot be
   * made durable, `undo` runs (the engine puts its state back as before the transaction) and the
   * promise rejects with a StoreError.
   */
  append(changes: Change[], undo?: () => void): Promise<void>
  /** The error writes answer while they fail (health says it), or null. */
  failure?(): Error | null
  /** Resolves when everything appended so far is durable. */
  flush(): Promise<void>
  /** Flushes, writes a compact snapshot where it has one, releases the data file. */
  close(): Promise<void>
  info(): Record<string, unknown>
}

export class StoreError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'StoreError'
  }
}
