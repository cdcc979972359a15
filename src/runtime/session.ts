/**
 * The one place a session is built: its engine (over the shared world), its store, its request
 * request log and its live stream. The default session and every named one (X-DCB-Session) are made
 * here alike; the host (`host.ts`) keeps them, the HTTP layer serves them.
 */
import { createControlOperations } from '../control/operations.js'
import type { ControlOperations } from '../contract/operations.js'
import type { Engine, EngineOptions } from '../core/engine.js'
import type { State } from '../core/state.js'
import type { Store } from '../store/types.js'
import { engineOverStore } from './engine-store.js'
import { LiveHub, type LiveHubOptions } from './live.js'
import { RequestLog, type RequestLogBudget } from './request-log.js'

export const DEFAULT_SESSION = 'default'

export interface Session {
  readonly name: string
  readonly engine: Engine
  readonly store: Store
  /** The request log (`GET /_sandbox/requests`). */
  readonly requestLog: RequestLog
  /** The control operations over this session (what `/_sandbox` calls). */
  readonly operations: ControlOperations
  /** The console's live stream of this session (made on first use). */
  live(): LiveHub
  /** Ends the live streams' clients (the server shuts down, or the session is dropped). */
  closeStreams(): void
  /** Ends the streams and closes the store. */
  close(): Promise<void>
}

export interface SessionSpec {
  name: string
  /** The session's state, as its store loaded it. */
  state: State
  store: Store
  /** World, limits and host hooks shared by every session (not state or persist). */
  engine: Omit<EngineOptions, 'state' | 'persist'>
  requestLogSize?: number
  /** The byte budget of request bodies, shared by every session's request log. */
  requestLogBudget: RequestLogBudget | number
  version: string
  /** What `health` says of the store. */
  storeInfo?: () => Record<string, unknown>
  live?: LiveHubOptions
}

export function createSession(spec: SessionSpec): Session {
  const { store } = spec
  const engine = engineOverStore(spec.engine, spec.state, store)
  const requestLog = new RequestLog(spec.requestLogSize ?? 1000, spec.requestLogBudget)
  const operations = createControlOperations({ engine, requestLog, version: spec.version, storeInfo: spec.storeInfo })
  let hub: LiveHub | undefined
  const closeStreams = () => hub?.close()
  return {
    name: spec.name,
    engine,
    store,
    requestLog,
    operations,
    live: () => (hub ??= new LiveHub(engine, requestLog, spec.live)),
    closeStreams,
    async close() {
      closeStreams()
      // A shared store: the coverage counts still waiting for a turn are written first (a store away keeps them unwritten).
      await engine.sync().catch(() => {})
      engine.release()
      await store.close()
    },
  }
}
