/**
 * `dcb serve` as a function: load the world, open the store, build the engine and the app, listen.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { DEFAULT_DATA_FILE, DEFAULT_HOST, DEFAULT_PORT } from './contract/defaults.js'
import { CLOCK } from './core/clock.js'
import { Engine } from './core/engine.js'
import type { FailurePayloadMode } from './core/outcomes.js'
import { State } from './core/state.js'
import { parseTimestamp } from './core/time.js'
import { layerWorlds } from './core/layering.js'
import { FixtureError, loadWorld } from './world/load.js'
import type { World } from './core/world-schema.js'
import { createSandboxApp, type SandboxApp } from './http/app.js'
import { RequestJournal } from './http/journal.js'
import { SessionRegistry } from './sessions.js'
import { FileStore } from './store/file.js'
import { MemoryStore } from './store/memory.js'
import type { Store } from './store/types.js'
import { version } from './version.js'

export interface ServeOptions {
  port?: number
  host?: string
  /** The data file (default `.dcb/sandbox.json`); ignored with `inMemory`. */
  data?: string
  inMemory?: boolean
  /** Fixture files layered on the default world. */
  fixtures?: string[]
  /** A world object instead of files (the library and tests). */
  world?: World
  trustProxy?: boolean
  adminToken?: string
  failurePayload?: FailurePayloadMode
  /** Start the sandbox clock at this time (ISO-8601), frozen unless `clockRunning`. */
  clock?: string
  clockRunning?: boolean
  journalSize?: number
  /** The most sessions (X-DCB-Session) beside the default one; a new one past it is 429 SESSION_LIMIT. */
  maxSessions?: number
  /** Whether merchant API failures carry the X-DCB-Reason header (default true). */
  reasons?: boolean
  smsPerMsisdn?: number
  chargesPerSubscription?: number
  maxSms?: number
  maxVerifications?: number
  /** How often the server runs events that fell due on their own (ms). */
  tickMs?: number
  compactBytes?: number
  onError?: (err: unknown) => void
  /** Where fixture warnings go (default: stderr, one `dcb: warning:` line each). */
  onWarning?: (text: string) => void
  /** Real time source (tests). */
  realNow?: () => number
}

export interface RunningSandbox {
  url: string
  port: number
  host: string
  engine: Engine
  store: Store
  app: SandboxApp
  server: Server
  close(): Promise<void>
  /** `clock` was given but the data file keeps its own clock (it was not applied). */
  clockKept: boolean
}

export class ServeError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ServeError'
  }
}

export async function startSandbox(opts: ServeOptions = {}): Promise<RunningSandbox> {
  // A world object goes through the same layering and checks as a fixture file.
  const layered = opts.world ? layerWorlds([{ source: 'world', data: opts.world }]) : undefined
  if (layered && !layered.ok) throw new FixtureError(layered.problems)
  const loaded = layered?.ok ? layered : loadWorld(opts.fixtures ?? [])
  const world = loaded.world
  // Warnings (a service left with no integration) load, but are said once at start-up.
  for (const w of loaded.warnings) (opts.onWarning ?? ((text: string) => process.stderr.write(`dcb: warning: ${text}\n`)))(w)
  let clockStart: { at: number; frozen: boolean } | undefined
  if (opts.clock) {
    const at = parseTimestamp(opts.clock)
    if (Number.isNaN(at)) throw new ServeError(`--clock "${opts.clock}" is not a time: use ISO-8601, e.g. 2026-01-31T00:00:00`)
    clockStart = { at, frozen: !opts.clockRunning }
  }
  const store: Store = opts.inMemory ? new MemoryStore() : new FileStore(opts.data ?? DEFAULT_DATA_FILE, { compactBytes: opts.compactBytes })
  const state = new State()
  await store.open(state)
  // A data file keeps its own clock: `clock` applies to a new one only (and to reset).
  const clockKept = clockStart !== undefined && state.meta.has(CLOCK)
  const engineOptions = {
    clockStart,
    smsPerMsisdn: opts.smsPerMsisdn,
    chargesPerSubscription: opts.chargesPerSubscription,
    maxSms: opts.maxSms,
    maxVerifications: opts.maxVerifications,
    realNow: opts.realNow,
  }
  const engine = new Engine({ world, sources: loaded.sources, state, persist: (changes) => store.append(changes), ...engineOptions })
  const sessions = new SessionRegistry({
    defaultEngine: engine,
    defaultJournal: new RequestJournal(opts.journalSize ?? 1000),
    defaultStore: store,
    engineOptions: { world: engine.world, ...engineOptions },
    folder: store instanceof FileStore ? SessionRegistry.folderFor(store.path) : undefined,
    journalSize: opts.journalSize,
    maxSessions: opts.maxSessions,
    compactBytes: opts.compactBytes,
  })
  const host = opts.host ?? DEFAULT_HOST
  const port = opts.port ?? DEFAULT_PORT
  let url = ''
  const app = createSandboxApp({
    engine,
    version: version(),
    trustProxy: opts.trustProxy,
    adminToken: opts.adminToken,
    failurePayload: opts.failurePayload,
    journalSize: opts.journalSize,
    sessions,
    reasons: opts.reasons,
    storeInfo: () => store.info(),
    baseUrl: () => url,
    onError: opts.onError,
  })
  const server = createServer({ keepAliveTimeout: 5000 }, app.listener)
  try {
    // Events that fell due while the server was down run now, in order, once (in every session).
    await engine.catchUp()
    await sessions.openStored()
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen({ port, host, exclusive: true }, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (e) {
    await sessions.close().catch(() => {})
    await store.close().catch(() => {})
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') throw new ServeError(`port ${port} on ${host} is already in use; stop what runs there or pick another --port`)
    if (code === 'EACCES') throw new ServeError(`no permission to listen on ${host}:${port}; pick a port above 1023`)
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ServeError(`cannot listen on ${host}: no such address on this machine`)
    throw e
  }
  const addr = server.address() as AddressInfo
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  url = `http://${shownHost}:${addr.port}`

  let ticking = false
  const timer = setInterval(() => {
    if (ticking) return
    ticking = true
    engine
      .catchUp()
      .then(() => sessions.catchUp())
      .catch((err) => (opts.onError ?? console.error)(err))
      .finally(() => (ticking = false))
  }, opts.tickMs ?? 1000)
  timer.unref()

  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= (async () => {
      clearInterval(timer)
      app.live.close()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
        // Requests in flight get a moment to finish; then the rest is cut.
        setTimeout(() => server.closeAllConnections(), 3000).unref()
      })
      await sessions.close()
      await store.close()
    })())

  return { url, port: addr.port, host, engine, store, app, server, close, clockKept }
}
