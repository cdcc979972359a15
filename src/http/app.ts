/**
 * The HTTP app over a host of sessions: one dispatch table answers every path (the merchant API, the
 * control API under /_sandbox, the console, the consent and return pages, OpenAPI). A path is looked
 * up once; a merchant path goes straight to its handler (the hot path). The session of a request is
 * the one X-DCB-Session names, the default session without the header: every session is served the
 * same way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { CONTROL_CALLS } from '../contract/calls.js'
import { DEFAULT_BASE_URL, SESSION_NAME_RULE } from '../contract/defaults.js'
import { fail, type FailurePayloadMode } from '../core/outcomes.js'
import { DEFAULT_SESSION, isSessionName, type Host, type Session } from '../runtime/host.js'
import { AdminAttempts } from './admin-attempts.js'
import { CONSOLE_PATHS, createConsoleHandler } from './console.js'
import { checkControlAccess, controlRoutes, createControlHandler, type ControlMatch } from './control.js'
import { crossSiteRefusal, hostLocal, hostName, sendRefusal, type CrossSiteOptions } from './guard.js'
import { inProcessCall } from './inprocess.js'
import { compileTrust, peerTrusted } from './ip.js'
import { MERCHANT_PATHS } from '../contract/merchant-calls.js'
import { createMerchantHandler, type Operation } from './merchant.js'
import { consentPage, returnPage } from './pages.js'
import { headerReason, notFoundReason } from './reason.js'
import { safeDecode, sendControlError, sendEnvelope, sendJson } from './respond.js'
import { SESSION_PATH_PREFIX, SESSIONS_PATH, sessionRoutes } from './sessions.js'

export interface SandboxAppOptions {
  /** The sessions this app serves (the default one and the named ones). */
  host: Host
  version: string
  /** `--trust-proxy`: addresses, CIDRs, `loopback`, `linklocal`, `uniquelocal` (comma-separated or a list). */
  trustProxy?: string | string[]
  adminToken?: string
  /** `--allow-host`: host names accepted on a loopback listener besides the loopback names. */
  allowHosts?: string[]
  /** Whether the listener is on loopback (default: yes, the safe side). */
  loopbackListener?: () => boolean
  failurePayload?: FailurePayloadMode
  /** Whether failures of the merchant API carry the X-DCB-Reason header (default true; `dcb serve --no-reasons`). */
  reasons?: boolean
  /** The error writes answer while they fail (health answers 503), or null. */
  storeFailure?: () => Error | null
  /** Asks the store whether it works (health with a shared database). */
  storeProbe?: () => Promise<Error | null>
  baseUrl?: () => string
  /** Where unexpected errors are reported (never on the wire). */
  onError?: (err: unknown) => void
}

export interface SandboxApp {
  host: Host
  listener: (req: IncomingMessage, res: ServerResponse) => void
}

/** What the dispatch table holds for a path: which handler, and whether the cross-site rules guard it. */
type Entry = { kind: 'merchant'; op: Operation } | { kind: 'control'; path: string } | { kind: 'sessions' | 'console' | 'consent' | 'return' | 'openapi' }

/** The control API and the console refuse what a web page could send them (guard.ts); the flow's pages do not. */
const GUARDED = new Set<Entry['kind']>(['control', 'sessions', 'console'])

/**
 * Loads what the first control call needs (zod and the schemas), which start-up leaves out: `dcb
 * serve` calls it once it is ready, so that call does not wait for it. A merchant body needs no zod.
 */
export async function warmUp(): Promise<void> {
  await controlRoutes()
}

export function createSandboxApp(opts: SandboxAppOptions): SandboxApp {
  const { host } = opts
  const onError = opts.onError ?? ((err: unknown) => console.error('dcb: unexpected error:', err))
  const failurePayload = opts.failurePayload ?? 'auto'
  // Compiled once; undefined when nothing is trusted (then X-Forwarded-For is never read).
  const trustProxy = compileTrust(opts.trustProxy)
  const crossSite: CrossSiteOptions = {
    socket: true,
    loopbackListener: opts.loopbackListener ?? (() => true),
    allowHosts: (opts.allowHosts ?? []).map(hostName),
    forwardedHost: (req) => {
      const fh = req.headers['x-forwarded-host']
      return peerTrusted(req as IncomingMessage, trustProxy) ? (Array.isArray(fh) ? fh[0] : fh) : undefined
    },
  }
  // In process (`sandbox.fetch`, msw) there is no listener: the socket-only checks are off.
  const crossSiteInProcess: CrossSiteOptions = { ...crossSite, socket: false }
  const reasons = opts.reasons ?? true
  const why = (reason: string) => (reasons ? { 'x-dcb-reason': headerReason(reason) } : undefined)
  const baseUrl = opts.baseUrl ?? (() => DEFAULT_BASE_URL)
  // Whether a request's Host may go without the admin token from loopback (DNS rebinding, every listener).
  // Wrong admin tokens from one address lock it out for a while (the control API and the console share the count).
  const adminAttempts = new AdminAttempts()
  const hostIsLocal = (req: IncomingMessage) => inProcessCall(req) !== undefined || hostLocal(req, crossSite)
  /** A session for a request that passed its checks: open, or made now (a full host is SESSION_LIMIT). */
  const sessions = { peek: (name: string) => host.peek(name), open: async (name: string) => host.get(name) }
  const merchant = createMerchantHandler({ world: host.default.engine.world, sessions, trustProxy, failurePayload, reasons, baseUrl, onError })
  // A control call reads: the host answers a session up to date (with a shared store, after taking in what the others wrote).
  const controlSessions = {
    peek: () => undefined,
    open: async (name: string) => host.get(name),
    has: (name: string) => host.has(name),
    discardUnused: (name: string) => host.discardUnused(name),
  }
  const control = createControlHandler({
    sessions: controlSessions,
    sessionNames: async () => {
      await host.syncSessions()
      return host.all().map((s) => s.name)
    },
    trustProxy,
    hasMerchant: (id) => host.default.engine.world.merchants.has(id),
    serviceCodes: () => new Set(host.default.engine.world.world.services.map((s) => s.code)),
    adminToken: opts.adminToken,
    hostLocal: hostIsLocal,
    adminAttempts,
    storeFailure: opts.storeFailure,
    storeProbe: opts.storeProbe,
    onError,
  })
  const sessionControl = sessionRoutes(host, (req) =>
    checkControlAccess(req, { trustProxy, adminToken: opts.adminToken, hostLocal: hostIsLocal, adminAttempts }),
  )

  /**
   * The session name a request gives (X-DCB-Session; the default session's without it), or, when it
   * is not a session name, the refusal written (an envelope on the merchant API, error JSON
   * elsewhere) and null. Checking a name makes nothing.
   */
  const sessionName = (req: IncomingMessage, res: ServerResponse, envelopeErrors: boolean): string | null => {
    const header = req.headers['x-dcb-session']
    if (header === undefined) return DEFAULT_SESSION
    const name = Array.isArray(header) ? header.join(', ') : header
    if (isSessionName(name)) return name
    const message = `X-DCB-Session must be ${SESSION_NAME_RULE}`
    if (envelopeErrors) sendEnvelope(res, fail('BAD_REQUEST'), failurePayload, why(message))
    else sendJson(res, 400, { error: 'BAD_REQUEST', message })
    return null
  }
  /** A consent link carries no header (a browser follows it): its id finds the session. */
  const consentSession = (id: string): Session => {
    for (const s of host.all()) if (s.engine.consentView(id)) return s
    return host.default
  }
  const consoleHandler = createConsoleHandler({
    trustProxy,
    adminToken: opts.adminToken,
    adminAttempts,
    hostLocal: hostIsLocal,
    // The stream of the session the console shows: X-DCB-Session, or ?session= (EventSource sends no headers).
    // Asked only once the request passed the console's access check.
    liveOf: async (req, res, name) => {
      if (name !== null) req.headers['x-dcb-session'] = name
      const session = sessionName(req, res, false)
      if (session === null) return undefined
      try {
        const s = await host.get(session)
        // A shared store's request log is the database's: read it first, so the hello names its next id
        // and the first batch carries only what is new (not what this replica had not read yet).
        await s.requestLog.sync?.()
        return s.live()
      } catch (e) {
        // A refused session (bad name, the cap) or one that could not be stored: the error JSON, never a 500.
        if (!sendControlError(res, e)) throw e
        return undefined
      }
    },
  })
  let openapi: string | undefined

  // The dispatch table: exact paths, then the paths with a parameter, then the prefixes (the id is the rest).
  const exact = new Map<string, Entry>()
  const patterns: { re: RegExp; keys: string[]; entry: Entry }[] = []
  const prefixes: [string, Entry][] = [
    ['/consent/', { kind: 'consent' }],
    // `/_sandbox/sessions/NAME` (its declared path before the name): sessions.ts reads the name.
    [SESSION_PATH_PREFIX, { kind: 'sessions' }],
  ]
  for (const [path, op] of Object.entries(MERCHANT_PATHS)) exact.set(path, { kind: 'merchant', op })
  // The control paths come from the calls' declarations (no zod): the routes with their schemas are
  // loaded by the first control call (control.ts).
  for (const path of new Set(Object.values(CONTROL_CALLS).map((c) => c.path))) {
    const entry: Entry = { kind: 'control', path }
    if (!path.includes(':')) exact.set(`/_sandbox${path}`, entry)
    else {
      const keys: string[] = []
      const re = new RegExp(`^/_sandbox${path.replace(/:(\w+)/g, (_, k: string) => (keys.push(k), '([^/]+)'))}$`)
      patterns.push({ re, keys, entry })
    }
  }
  // `/_sandbox/sessions/NAME` is a prefix (above); sessions.ts serves both.
  exact.set(SESSIONS_PATH, { kind: 'sessions' })
  for (const path of CONSOLE_PATHS) exact.set(path, { kind: 'console' })
  exact.set('/_sandbox/return', { kind: 'return' })
  exact.set('/openapi.json', { kind: 'openapi' })

  /** The entry of a path and its parameters (decoded); undefined when no entry takes it. */
  const lookup = (path: string): { entry: Entry; params: Record<string, string> } | undefined => {
    const hit = exact.get(path)
    if (hit) return { entry: hit, params: {} }
    // A control path may end with one slash (`/_sandbox/health/`), as the control API always took it.
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
    const control = trimmed.startsWith('/_sandbox/') ? exact.get(trimmed) : undefined
    if (control?.kind === 'control') return { entry: control, params: {} }
    for (const p of patterns) {
      const m = p.re.exec(trimmed)
      if (m) return { entry: p.entry, params: Object.fromEntries(p.keys.map((k, i) => [k, safeDecode(m[i + 1]!)])) }
    }
    for (const [prefix, entry] of prefixes) if (path.startsWith(prefix)) return { entry, params: {} }
    return undefined
  }

  /** After an unexpected error: the envelope if nothing was sent yet, else cut the response. */
  const crashed = (res: ServerResponse, err: unknown) => {
    onError(err)
    if (!res.headersSent && !res.destroyed) sendEnvelope(res, fail('SERVER_ERROR'), failurePayload, why('unexpected server error (see the server log)'))
    else if (!res.writableEnded) res.destroy()
  }

  const dispatch = async (req: IncomingMessage, res: ServerResponse, path: string, query: string, found: ReturnType<typeof lookup>) => {
    const entry = found?.entry
    const underSandbox = path === '/_sandbox' || path.startsWith('/_sandbox/')
    if (entry ? GUARDED.has(entry.kind) : underSandbox) {
      const refused = crossSiteRefusal(req, inProcessCall(req) ? crossSiteInProcess : crossSite)
      if (refused) return sendRefusal(res, refused)
    }
    switch (entry?.kind) {
      case 'console':
        return consoleHandler(req, res, path, new URLSearchParams(query))
      case 'return':
        return returnPage(res, new URLSearchParams(query))
      case 'sessions':
        return sessionControl(req, res, path, query)
      case 'control': {
        const name = sessionName(req, res, false)
        if (name === null) return
        const match: ControlMatch = { path: entry.path, params: found!.params }
        return control(req, res, path, query, match, name)
      }
      case 'consent': {
        const id = safeDecode(path.slice('/consent/'.length))
        const name = sessionName(req, res, false)
        if (name === null) return
        // A consent page never makes a session: one not open is looked up by the consent id, as without the header.
        await host.resync()
        const session = (req.headers['x-dcb-session'] !== undefined && host.peek(name)) || consentSession(id)
        return consentPage(session.engine, req, res, id, session.requestLog, trustProxy, reasons)
      }
      case 'openapi':
        if (req.method === 'GET' || req.method === 'HEAD') {
          // Made from every schema (zod), so on the first request for it.
          openapi ??= JSON.stringify((await import('./openapi.js')).openApiDocument(opts.version))
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(openapi) })
          return void res.end(openapi)
        }
        break
      default:
        // Any other path under /_sandbox: the control API's refusal (a bad session name, access, then NOT_FOUND).
        if (underSandbox) {
          const name = sessionName(req, res, false)
          return name === null ? undefined : control(req, res, path, query, undefined, name)
        }
    }
    sendEnvelope(res, fail('NOT_FOUND'), failurePayload, why(notFoundReason(req.method, path)))
  }

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const path = q >= 0 ? url.slice(0, q) : url
    const hit = exact.get(path)
    try {
      if (hit?.kind === 'merchant') {
        // The hot path: one lookup, no allocation; a bad session name is refused first (making nothing).
        const name = sessionName(req, res, true)
        if (name !== null) merchant(req, res, hit.op, path, name)
        return
      }
      dispatch(req, res, path, q >= 0 ? url.slice(q + 1) : '', hit ? { entry: hit, params: {} } : lookup(path)).catch((err) => crashed(res, err))
    } catch (err) {
      crashed(res, err)
    }
  }
  return { host, listener }
}
