/**
 * An engine over its store, wired in one place for every session and for `dcb seed`: each change is
 * persisted there (undone in memory when the write fails) and, with a shared store, each turn is
 * gated by it. (`dcb seed` built its engine apart once and lost the undo.)
 */
import { Engine, type EngineOptions } from '../core/engine.js'
import type { State } from '../core/state.js'
import type { Store } from '../store/types.js'

export function engineOverStore(options: Omit<EngineOptions, 'state' | 'persist' | 'gate'>, state: State, store: Store): Engine {
  return new Engine({ ...options, state, gate: store.gate, persist: (changes, undo, soft) => store.append(changes, undo, soft) })
}
