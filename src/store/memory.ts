import { State, type Change } from '../core/state.js'
import { admitHere, WRITTEN_HERE, type Sessions, type Store } from './types.js'

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

/** Sessions kept nowhere but in memory: the library's and `dcb serve --in-memory`'s. */
export function memorySessions(): Sessions {
  const first = { store: new MemoryStore(), state: new State() }
  return {
    kind: 'memory',
    ...WRITTEN_HERE,
    load: async () => [],
    default: () => first,
    activate: () => first.store.activate(),
    abandon: () => first.store.abandon(),
    names: async () => [],
    admit: async (_name, max, open) => admitHere(max, open),
    open: async () => {
      const made = { store: new MemoryStore(), state: new State() }
      await made.store.open(made.state)
      return made
    },
    drop: async (_name, here = false) => here,
    discard: async () => true,
    countRequests: async (here) => here,
    failure: () => null,
    close: async () => {},
  }
}
