import type { Change, State } from '../core/state.js'
import type { Store } from './types.js'

/** Keeps nothing beyond the engine's own state: for tests, the library and `dcb serve --in-memory`. */
export class MemoryStore implements Store {
  readonly kind = 'memory' as const
  private changes = 0

  async open(_state: State): Promise<void> {}
  async load(_state: State): Promise<void> {}
  async activate(): Promise<void> {}
  async abandon(): Promise<void> {}

  append(changes: Change[]): Promise<void> {
    this.changes += changes.length
    return Promise.resolve()
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {}

  info(): Record<string, unknown> {
    return { kind: this.kind, changes: this.changes }
  }
}
