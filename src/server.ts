/**
 * `dcb serve` as a function: load the world, open the store, build the engine and the app, listen.
 */
import module from 'node:module'
import { createServer, maxHeaderSize, type RequestListener, type Server, type ServerResponse } from 'node:http'
import { isIP, type AddressInfo, type Socket } from 'node:net'
import { DEFAULT_DATA_FILE, DEFAULT_HOST, DEFAULT_PORT } from './contract/defaults.js'
import { startsItsClock, type ClockStart } from './core/clock.js'
import { Engine } from './core/engine.js'
import type { FailurePayloadMode } from './core/outcomes.js'
import { parseTimestamp, timeProblem } from './core/time.js'
import type { WorldSources } from './core/layering.js'
import { checkedDefaultWorld, type LoadedWorld } from './world/default-world.js'
import type { World } from './core/world-schema.js'
import type { ServeOptions } from './serve-options.js'

export type { ServeOptions } from './serve-options.js'
import { createSandboxApp, warmUp, type SandboxApp } from './http/app.js'
import { capRemoteConnections } from './http/connections.js'
import { beingClosed, endAndLinger, lingerOnClose } from './http/linger.js'
import { answerProtocolErrors, missingHost, rawAnswer } from './http/protocol.js'
import { compileTrust, isLoopback, normalizeIp, TrustProxyError } from './http/ip.js'
import { createHost, DEFAULT_SESSION, type Host, type Session } from './runtime/host.js'
import { fileSessions } from './store/file-sessions.js'
import { memorySessions } from './store/memory.js'
import type { Sessions, Store } from './store/types.js'
import type { StoreIo } from './store/wal.js'
import { version } from './version.js'
import { yieldToEventLoop } from './yield.js'

/** What the server needs beyond the options (`dcb serve --https/--lan/--open`). */
export interface ServeHooks extends ServeOptions {
  /**
   * Listens in place of node:http (`dcb serve --https/--lan/--open` use listhen). Must fail with
   * EADDRINUSE on a busy port rather than pick another. The server it makes gets the same timeouts,
   * connection cap and protocol-error answers.
   */
  listen?: (listener: RequestListener, port: number, host: string) => Promise<{ server: Server; protocol: 'http' | 'https' }>
  /** Where the data files' writes and fsyncs can be made to fail (tests). */
  storeIo?: StoreIo
  /** The world already loaded and checked, in place of `fixtures` (the library's `startSandbox`, through `worldOf`). */
  loaded?: LoadedWorld
}

export interface RunningSandbox {
  url: string
  port: number
  host: string
  /** The default session's engine and store. */
  engine: Engine
  store: Store
  /** Every session, the default one included. */
  sessions: Host
  app: SandboxApp
  server: Server
  close(): Promise<void>
  /** `clock` was given but the data file keeps its own clock (it was not applied). */
  clockKept: boolean
  /** The fixture files loaded, the default world first (none for a world object). */
  files: string[]
  /** What recovery did to the data files, the sessions' included (a torn last line dropped). */
  recoveryNotes: string[]
  /** Requests received so far (whether the server is idle). */
  readonly requests: number
}

/**
 * The runtime rules a session leaves out, a line each: a rule stored before its regex was bounded
 * would stall or exhaust the server, and the regex pool of all sessions has a budget.
 */
function leftOut(s: Session, rules: readonly { id: string; problem: string }[]): string[] {
  return rules.map(
    (d) =>
      `session "${s.name}": runtime rule ${d.id} is left out (${d.problem}); remove it with dcb rules remove ${d.id}${s.name === DEFAULT_SESSION ? '' : ` --session ${s.name}`}`,
  )
}

/** Why an `allowIps` entry is not an IPv4 or IPv6 address or CIDR range, or undefined when it is one. */
export function allowIpProblem(text: string): string | undefined {
  const [addr, bits, extra] = text.split('/')
  const family = isIP(addr ?? '')
  const n = bits === undefined ? 0 : Number(bits)
  if (!family || extra !== undefined || !Number.isInteger(n) || n < 0 || n > (family === 4 ? 32 : 128) || bits === '')
    return `--allow-ip "${text}" is not an IP address or CIDR range (e.g. 192.168.1.0/24, 10.0.0.7, fd00::/8)`
}

/**
 * The world with `allowIps` added to every merchant that allows loopback (the demo keys; `offsite`
 * keeps showing the 403); the sources name `--allow-ip` beside the files of the merchants it changed.
 */
function withAllowedIps(world: World, sources: WorldSources | undefined, cidrs: string[]): { world: World; sources: WorldSources | undefined } {
  if (!cidrs.length) return { world, sources }
  const changed = world.merchants.filter((m) => m.allowlist.includes('127.0.0.0/8')).map((m) => m.id)
  return {
    world: { ...world, merchants: world.merchants.map((m) => (changed.includes(m.id) ? { ...m, allowlist: [...m.allowlist, ...cidrs] } : m)) },
    sources: sources && {
      ...sources,
      merchants: { ...sources.merchants, ...Object.fromEntries(changed.map((id) => [id, [...(sources.merchants[id] ?? []), '--allow-ip']])) },
    },
  }
}

export class ServeError extends Error {
  /** `usage`: an option refused as given (dcb serve exits 2), not a start that failed (exit 1). */
  constructor(
    message: string,
    readonly kind: 'usage' | 'start' = 'start',
  ) {
    super(message)
    this.name = 'ServeError'
  }
}

export async function startSandbox(opts: ServeHooks = {}): Promise<RunningSandbox> {
  // Everything that can refuse an option comes first: a bad option touches nothing on disk.
  // The default world alone is the one the build checked; fixture files load the layering and its
  // schema (zod) now, and only then. The library's startSandbox hands the world it loaded as
  // createSandbox loads it (a world object layered, its sources kept): taken as it is.
  const loaded = opts.loaded ?? ((!opts.fixtures?.length && checkedDefaultWorld()) || (await import('./world/load.js')).loadWorld(opts.fixtures ?? []))
  for (const cidr of opts.allowIps ?? []) {
    const problem = allowIpProblem(cidr)
    if (problem) throw new ServeError(problem, 'usage')
  }
  const { world, sources } = withAllowedIps(loaded.world, loaded.sources, opts.allowIps ?? [])
  // Warnings (a service left with no integration) load, but are said once at start-up.
  const warn = opts.onWarning ?? ((text: string) => void process.stderr.write(`dcb: warning: ${text}\n`))
  for (const w of loaded.warnings) warn(w)
  let clockStart: { at: number; frozen: boolean } | undefined
  // Alone it would do nothing (the clock runs unless --clock freezes it): say so instead.
  if (opts.clockRunning && !opts.clock) throw new ServeError('--clock-running (clockRunning) goes with --clock: the time the clock runs from', 'usage')
  if (opts.clock) {
    const problem = timeProblem(opts.clock)
    if (problem) throw new ServeError(`--clock ${problem}`, 'usage')
    const at = parseTimestamp(opts.clock)
    clockStart = { at, frozen: !opts.clockRunning }
  }
  try {
    compileTrust(opts.trustProxy)
  } catch (e) {
    if (e instanceof TrustProxyError) throw new ServeError(e.message, 'usage')
    throw e
  }
  if (opts.store !== undefined && (opts.inMemory || opts.data !== undefined))
    throw new ServeError(`--store keeps the state in a database: it goes with neither --data nor --in-memory`, 'usage')
  if (opts.replaceWorld && opts.store === undefined)
    throw new ServeError('--replace-world (replaceWorld) goes with --store (the world of a shared database)', 'usage')
  // A shared database: connected, its tables made or upgraded and its world checked now (a refusal writes nothing).
  const shared = opts.store !== undefined ? await openShared(opts.store, world, opts.replaceWorld) : undefined
  const kept: Sessions =
    shared?.sessions ?? (opts.inMemory ? memorySessions() : fileSessions(opts.data ?? DEFAULT_DATA_FILE, { compactBytes: opts.compactBytes, io: opts.storeIo }))
  /** What recovery did to the data files (a torn last line dropped), said once at start-up. */
  let recoveryNotes: string[]
  try {
    // Reads and checks every session's files and takes the lock, writing nothing (that waits until
    // the port is ours): damage refuses the start before anything is written.
    recoveryNotes = await kept.load()
  } catch (e) {
    await shared?.db.close()
    throw e
  }
  const { store, state } = kept.default()
  // A data file keeps its own clock: `clock` applies to a new one only (and to reset). A shared
  // database keeps the one its sessions and resets start at too: the same through every replica.
  const fresh = startsItsClock(state)
  const sessionsClock = shared ? await shared.clock(clockStart, fresh) : clockStart
  const clockKept = clockStart !== undefined && (!fresh || sessionsClock?.at !== clockStart.at || sessionsClock.frozen !== clockStart.frozen)
  const host = opts.host ?? DEFAULT_HOST
  const port = opts.port ?? DEFAULT_PORT
  let url = ''
  let loopbackListener = true
  let sessions: Host
  let app: SandboxApp
  try {
    sessions = createHost(kept, {
      engine: {
        world,
        sources,
        clockStart: sessionsClock,
        smsPerMsisdn: opts.smsPerMsisdn,
        chargesPerSubscription: opts.chargesPerSubscription,
        maxSms: opts.maxSms,
        maxVerifications: opts.maxVerifications,
        maxSubscriptions: opts.maxSubscriptions,
        realNow: opts.realNow,
        // Between two batches of a long clock move the server answers requests and hears signals.
        yieldToHost: yieldToEventLoop,
        workClock: () => performance.now(),
      },
      requestLogSize: opts.requestLogSize ?? opts.journalSize,
      requestLogBytes: opts.requestLogBytes ?? opts.journalBytes,
      maxSessions: opts.maxSessions,
      version: version(),
      storeInfo: () => store.info(),
      // Said with the recovery notes at start-up; after it (a shared store's session or rule), as a warning.
      onLeftOut: (s, rules) => {
        for (const note of leftOut(s, rules)) (ready ? warn : (n: string) => recoveryNotes.push(n))(note)
      },
    })
    app = createSandboxApp({
      host: sessions,
      version: version(),
      trustProxy: opts.trustProxy,
      adminToken: opts.adminToken,
      allowHosts: opts.allowHosts,
      loopbackListener: () => loopbackListener,
      failurePayload: opts.failurePayload,
      reasons: opts.reasons,
      storeFailure: () => sessions.failure(),
      storeProbe: shared ? () => shared.db.probe() : undefined,
      baseUrl: () => url,
      onError: opts.onError,
    })
  } catch (e) {
    await kept.abandon()
    await shared?.db.close()
    throw e
  }
  // Requests that arrive while the server catches up wait for it (one flag on the hot path).
  let ready = false
  let markReady!: () => void
  const readyGate = new Promise<void>((resolve) => (markReady = resolve))
  const listener = app.listener
  let requests = 0
  const answers = { failurePayload: opts.failurePayload, reasons: opts.reasons ?? true }
  const handler: RequestListener = (req, res) => {
    // A connection being closed (refused past its share, answered last) serves nothing more: what comes is read and dropped.
    if (beingClosed(req.socket)) return void req.resume()
    if (missingHost(req, res, answers)) return
    requests++
    if (ready) return listener(req, res)
    void readyGate.then(() => listener(req, res))
  }
  const headersTimeout = opts.headersTimeoutMs ?? 20_000
  // Node looks for requests over their time every connectionsCheckingInterval (30 s unless told): a
  // 20 s header limit cut at 30 s, a short one in tests at 30 s too. Checked every second at most.
  const timeouts = {
    keepAliveTimeout: 5000,
    headersTimeout,
    requestTimeout: opts.requestTimeoutMs ?? 60_000,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 2))),
  }
  // Idle connections: a keep-alive one closes after 5 s; one that sends nothing is closed after the
  // idle timeout; a request that arrives too slowly is cut by the header and request timeouts. An
  // answer in progress (a long poll, the console's event stream) is never cut for being quiet.
  const guard = (server: Server, plain: boolean): Server => {
    server.timeout = opts.idleTimeoutMs ?? 30_000
    server.on('timeout', (socket: Socket) => {
      if (!(socket as unknown as { _httpMessage?: ServerResponse })._httpMessage) socket.destroy()
    })
    server.maxConnections = opts.maxConnections ?? 1024
    lingerOnClose(server)
    answerProtocolErrors(server, answers)
    capRemoteConnections(server, { maxConnections: server.maxConnections, plain, failurePayload: opts.failurePayload, reasons: opts.reasons ?? true })
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) =>
      answerClientError(err, socket, opts.failurePayload, opts.reasons ?? true, timeouts),
    )
    return server
  }
  let server: Server
  let protocol = 'http'
  try {
    if (opts.listen) {
      // listhen made the server (http or https): the same timeouts and guards as our own.
      ;({ server, protocol } = await opts.listen(handler, port, host))
      guard(Object.assign(server, timeouts), protocol === 'http')
    } else {
      const own = (server = guard(createServer(timeouts, handler), true))
      await new Promise<void>((resolve, reject) => {
        own.once('error', reject)
        own.listen({ port, host, exclusive: true }, () => {
          own.off('error', reject)
          resolve()
        })
      })
    }
  } catch (e) {
    await kept.abandon()
    await shared?.db.close()
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') throw new ServeError(`port ${port} on ${host} is already in use; stop what runs there or pick another --port`)
    if (code === 'EACCES') throw new ServeError(`no permission to listen on ${host}:${port}; pick a port above 1023`)
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ServeError(`cannot listen on ${host}: no such address on this machine`)
    throw e
  }
  const addr = server.address() as AddressInfo
  loopbackListener = isLoopback(normalizeIp(addr.address))
  url = `${protocol}://${openableHost(addr)}:${addr.port}`
  if (shared) {
    // What the other replicas do reaches this one: the console's streams and the list of sessions follow.
    shared.db.onNotice = (payload) => sessions.notice(payload)
    shared.db.onBack = () => void sessions.resync()
    await shared.db.listen()
  }
  try {
    // Only once the port is ours (a start that fails before changes no data file): the stores made
    // ready for writes, then events that fell due while the server was down run, in order, once, in every session.
    await sessions.activate()
    // The named sessions said theirs as they opened (`onLeftOut`).
    recoveryNotes.push(...leftOut(sessions.default, sessions.default.engine.disabledRules()))
  } catch (e) {
    server.close()
    server.closeAllConnections()
    // Given back without a snapshot: a start refused here leaves the files as it found them.
    await sessions.abandon()
    await shared?.db.close()
    throw e
  }
  ready = true
  markReady()
  // What start-up leaves out (zod and the schemas a failing merchant body or a control call needs)
  // loads now in the background, once the caller has said it is ready, so the first such call does
  // not wait for it; on Node 22+ those modules then go to the compile cache too.
  setImmediate(() =>
    warmUp().then(
      () => (module as { flushCompileCache?: () => void }).flushCompileCache?.(),
      () => {},
    ),
  )

  let ticking = false
  const timer = setInterval(() => {
    if (ticking) return
    ticking = true
    sessions
      .catchUp()
      .catch((err) => (opts.onError ?? console.error)(err))
      .finally(() => (ticking = false))
  }, opts.tickMs ?? 1000)
  timer.unref()

  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= (async () => {
      clearInterval(timer)
      // Every session's live streams end now (a console open on any session would hold the server up).
      sessions.closeStreams()
      // A clock move stops at its next batch boundary (what it committed stays); its call answers 503.
      sessions.interrupt()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
        // Connections whose answer was in progress (a move that just stopped) close once it is sent.
        void sessions.idle().then(() => setImmediate(() => server.closeIdleConnections()))
        // Requests in flight get a moment to finish; then the rest is cut.
        setTimeout(() => server.closeAllConnections(), 3000).unref()
      })
      try {
        await sessions.close()
      } finally {
        await shared?.db.close()
      }
    })())

  const engine = sessions.default.engine
  return {
    url,
    port: addr.port,
    host,
    engine,
    store,
    sessions,
    app,
    server,
    close,
    clockKept,
    files: loaded.files,
    recoveryNotes,
    get requests() {
      return requests
    },
  }
}

/** Whether a listener on `address` is on every interface (0.0.0.0, ::). */
export const isWildcardAddress = (address: string): boolean => address === '0.0.0.0' || address === '::'

/**
 * The host of the URL a client opens: the address bound, or on every interface (0.0.0.0, ::) the
 * loopback one of its family, as no client can connect to a wildcard address.
 */
function openableHost(addr: AddressInfo): string {
  if (isWildcardAddress(addr.address)) return addr.address === '::' ? '[::1]' : '127.0.0.1'
  return addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
}

/** The shared database of `--store` and its sessions (loaded on first use, so the file store never loads `pg`). */
async function openShared(url: string, world: World, replaceWorld: boolean | undefined) {
  const [{ SharedDatabase }, { sharedSessions, sessionClock }] = await Promise.all([
    import('./store/postgres.js'),
    import('./store/postgres-shared-sessions.js'),
  ])
  const db = await SharedDatabase.open({ url, world, replaceWorld })
  const clock = async (mine: ClockStart | undefined, fresh: boolean) => {
    try {
      return await sessionClock(db, mine, fresh)
    } catch (e) {
      await db.close()
      throw e
    }
  }
  return { db, sessions: sharedSessions(db), clock }
}

/**
 * A request Node could not parse (oversized headers, malformed, cut off): the envelope, where the
 * socket can still take one. An answer still owed to an earlier, complete request on the connection
 * (pipelined before the bad one) goes out first: the 400 must not take its place (a committed Init
 * would reach its client as a refusal).
 */
function answerClientError(
  err: NodeJS.ErrnoException,
  socket: Socket,
  mode: FailurePayloadMode | undefined,
  reasons: boolean,
  limits: { headersTimeout: number; requestTimeout: number },
): void {
  const owed = (socket as unknown as { _httpMessage?: ServerResponse })._httpMessage
  if (owed && !owed.writableFinished && owed.req.complete) {
    owed.once('finish', () => answerClientError(err, socket, mode, reasons, limits))
    return
  }
  // A connection being closed already: what its client still sends is dropped, a request Node cannot parse too.
  if (beingClosed(socket)) return
  if (!socket.writable || owed?.headersSent) return void socket.destroy()
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW'
  // Too slow (headers or body): Node says so with this code; it is not a malformed request.
  const tooSlow = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
  const status = tooLarge ? 431 : tooSlow ? 408 : 400
  const reason = tooLarge
    ? `the request's headers are larger than ${maxHeaderSize / 1024} KiB`
    : tooSlow
      ? `the request did not arrive in time: its headers are due within ${limits.headersTimeout / 1000} s, all of it within ${limits.requestTimeout / 1000} s`
      : err.code === 'HPE_INVALID_EOF_STATE'
        ? 'the connection ended in the middle of the request'
        : `the request is not valid HTTP/1.1 (${err.code ?? 'unparsable'})`
  const statusText = tooLarge ? 'Request Header Fields Too Large' : tooSlow ? 'Request Timeout' : 'Bad Request'
  endAndLinger(socket, rawAnswer(status, statusText, 'BAD_REQUEST', reasons ? reason : undefined, mode))
}
