/**
 * The h3 app: merchant routes, the control API under /_sandbox, consent pages, OpenAPI.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createApp, eventHandler, toNodeListener, type App, type H3Event } from 'h3'
import { DEFAULT_BASE_URL } from '../contract/defaults.js'
import type { ControlOperations } from '../contract/operations.js'
import { createControlOperations } from '../control/operations.js'
import type { Engine } from '../core/engine.js'
import { SandboxError } from '../core/errors.js'
import { fail, type FailurePayloadMode } from '../core/outcomes.js'
import { createConsoleHandler, isConsolePath } from './console.js'
import { checkControlAccess, createControlHandler } from './control.js'
import { crossSiteRefusal, hostLocal, hostName, sendRefusal, type CrossSiteOptions } from './guard.js'
import { inProcessCall } from './inprocess.js'
import { compileTrust, peerTrusted } from './ip.js'
import { RequestJournal } from './journal.js'
import { LiveHub, type LiveHubOptions } from './live.js'
import { createMerchantHandler, MERCHANT_PATHS, type Operation } from './merchant.js'
import { openApiDocument } from './openapi.js'
import { consentPage, returnPage } from './pages.js'
import { headerReason, notFoundReason } from './reason.js'
import { safeDecode, sendEnvelope, sendJson } from './respond.js'
import { isSessionName, SessionRegistry, type Session } from '../sessions.js'
import { sessionRoutes } from './sessions.js'

export interface SandboxAppOptions {
  engine: Engine
  version: string
  /** `--trust-proxy`: addresses, CIDRs, `loopback`, `linklocal`, `uniquelocal` (comma-separated or a list). */
  trustProxy?: string | string[]
  adminToken?: string
  /** `--allow-host`: host names accepted on a loopback listener besides the loopback names. */
  allowHosts?: string[]
  /** Whether the listener is on loopback (default: yes, the safe side). */
  loopbackListener?: () => boolean
  failurePayload?: FailurePayloadMode
  journalSize?: number
  /** Whether failures of the merchant API carry the X-DCB-Reason header (default true; `dcb serve --no-reasons`). */
  reasons?: boolean
  /** Bytes of request bodies the request journals of all sessions keep together (default 32 MiB). */
  journalBytes?: number
  storeInfo?: () => Record<string, unknown>
  baseUrl?: () => string
  /** Where unexpected errors are reported (never on the wire). */
  onError?: (err: unknown) => void
  /**
   * The sessions (header X-DCB-Session); their default session is `engine`'s. Without it, sessions
   * are kept in memory over the same world.
   */
  sessions?: SessionRegistry
  /** The console's live streams (tests shorten their intervals). */
  live?: LiveHubOptions
}

interface SessionHandlers {
  engine: Engine
  journal: RequestJournal
  operations: ControlOperations
  /** The session's live stream for the console (made on its first use). */
  live: () => LiveHub
}

export interface SandboxApp {
  app: App
  /** The default session's request journal. */
  journal: RequestJournal
  sessions: SessionRegistry
  /** The control operations of a session (made on its first use). */
  operationsOf(session: Session): ControlOperations
  /** The control operations of this app's engine and journal (what /_sandbox calls). */
  operations: ControlOperations
  /** The default session's live stream for the console. */
  live: LiveHub
  /** Ends every session's live streams (server shutdown). */
  closeStreams(): void
  listener: (req: IncomingMessage, res: ServerResponse) => void
}

export function createSandboxApp(opts: SandboxAppOptions): SandboxApp {
  const sessions =
    opts.sessions ??
    new SessionRegistry({
      defaultEngine: opts.engine,
      defaultJournal: new RequestJournal(opts.journalSize ?? 1000, opts.journalBytes),
      engineOptions: { world: opts.engine.world },
      journalSize: opts.journalSize,
    })
  const journal = sessions.default.journal
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
  const hubs = new Set<LiveHub>()
  // Whether a request's Host may go without the admin token from loopback (DNS rebinding, every listener).
  const hostIsLocal = (req: IncomingMessage) => inProcessCall(req) !== undefined || hostLocal(req, crossSite)
  const handlersOf = (session: Session): SessionHandlers => {
    if (session.handlers) return session.handlers as SessionHandlers
    const { engine, journal } = session
    const operations = createControlOperations({ engine, journal, version: opts.version, storeInfo: opts.storeInfo })
    let live: LiveHub | undefined
    const handlers: SessionHandlers = {
      engine,
      journal,
      operations,
      live: () => {
        const hub = (live ??= new LiveHub(engine, journal, opts.live))
        hubs.add(hub)
        return hub
      },
    }
    session.handlers = handlers
    return handlers
  }
  const { operations } = handlersOf(sessions.default)
  /** A named session for a request that passed its checks: open, or made now (a full registry is a SandboxError). */
  const named = {
    peek: (name: string) => {
      const s = sessions.peek(name)
      return s && handlersOf(s)
    },
    open: async (name: string) => handlersOf(await sessions.get(name)),
  }
  const merchant = createMerchantHandler({
    engine: opts.engine,
    journal,
    sessions: named,
    trustProxy,
    failurePayload,
    reasons,
    baseUrl,
    onError,
  })
  const control = createControlHandler({
    engine: opts.engine,
    journal,
    operations,
    sessions: named,
    trustProxy,
    adminToken: opts.adminToken,
    hostLocal: hostIsLocal,
    onError,
  })
  const sessionControl = sessionRoutes(sessions, (req) => checkControlAccess(req, { trustProxy, adminToken: opts.adminToken, hostLocal: hostIsLocal }))

  /**
   * The session name a request gives (X-DCB-Session; undefined: the default session), or, when it is
   * not a session name, the refusal written (an envelope on the merchant API, error JSON elsewhere)
   * and null. Checking a name makes nothing.
   */
  const sessionName = (req: IncomingMessage, res: ServerResponse, envelopeErrors: boolean): string | undefined | null => {
    const header = req.headers['x-dcb-session']
    if (header === undefined) return undefined
    const name = Array.isArray(header) ? header.join(', ') : header
    if (isSessionName(name)) return name
    const message = 'X-DCB-Session must be 1-64 characters of A-Z a-z 0-9 . _ -'
    if (envelopeErrors) sendEnvelope(res, fail('BAD_REQUEST'), failurePayload, why(message))
    else sendJson(res, 400, { error: 'BAD_REQUEST', message })
    return null
  }
  /** The session a request names, made on first use (for calls that passed their checks), or the refusal written. */
  const sessionOf = async (req: IncomingMessage, res: ServerResponse): Promise<Session | undefined> => {
    const name = sessionName(req, res, false)
    if (name === null) return undefined
    if (name === undefined) return sessions.default
    try {
      return await sessions.get(name)
    } catch (e) {
      if (!(e instanceof SandboxError)) throw e
      sendJson(res, e.status, { error: e.code, message: e.message })
      return undefined
    }
  }
  /** A merchant call; a bad session name is refused first (making nothing). */
  const merchantCall = (req: IncomingMessage, res: ServerResponse, op: Operation, path: string): Promise<void> => {
    if (req.headers['x-dcb-session'] === undefined) return merchant(req, res, op, path)
    const name = sessionName(req, res, true)
    return name === null ? Promise.resolve() : merchant(req, res, op, path, name)
  }
  /** A consent link carries no header (a browser follows it): its id finds the session. */
  const consentSession = (id: string): Session => {
    for (const s of sessions.all()) if (s.engine.consentView(id)) return s
    return sessions.default
  }
  const consoleHandler = createConsoleHandler({
    trustProxy,
    adminToken: opts.adminToken,
    hostLocal: hostIsLocal,
    // The stream of the session the console shows: X-DCB-Session, or ?session= (EventSource sends no headers).
    // Asked only once the request passed the console's access check.
    liveOf: async (req, res, name) => {
      if (name !== null) req.headers['x-dcb-session'] = name
      const session = await sessionOf(req, res)
      return session && handlersOf(session).live()
    },
  })
  let openapi: string | undefined

  /** After an unexpected error: the envelope if nothing was sent yet, else cut the response. */
  const crashed = (res: ServerResponse, err: unknown) => {
    onError(err)
    if (!res.headersSent && !res.destroyed) sendEnvelope(res, fail('SERVER_ERROR'), failurePayload, why('unexpected server error (see the server log)'))
    else if (!res.writableEnded) res.destroy()
  }

  const dispatch = async (event: H3Event): Promise<void> => {
    const { req, res } = event.node
    const { path, query } = splitUrl(req.url)
    const op = MERCHANT_PATHS[path]
    if (op) return merchantCall(req, res, op, path)
    // The control API and the console (`/` and its paths) refuse what a web page could send them (guard.ts). The
    // return page is where a consent page sends the subscriber's browser: a page of the flow, not guarded.
    if (((path === '/_sandbox' || path.startsWith('/_sandbox/')) && path !== '/_sandbox/return') || path === '/' || isConsolePath(path)) {
      const refused = crossSiteRefusal(req, inProcessCall(req) ? crossSiteInProcess : crossSite)
      if (refused) return sendRefusal(res, refused)
    }
    if (isConsolePath(path)) return consoleHandler(req, res, path, new URLSearchParams(query))
    if (path === '/_sandbox' || path.startsWith('/_sandbox/')) {
      if (path === '/_sandbox/return') return returnPage(res, new URLSearchParams(query))
      if (await sessionControl(req, res, path)) return
      if (req.headers['x-dcb-session'] === undefined) return control(event, path)
      const name = sessionName(req, res, false)
      if (name !== null) return control(event, path, name)
      return
    }
    if (path.startsWith('/consent/')) {
      const id = safeDecode(path.slice('/consent/'.length))
      const name = sessionName(req, res, false)
      if (name === null) return
      // A consent page never makes a session: one not open is looked up by the consent id, as without the header.
      const session = (name !== undefined && sessions.peek(name)) || consentSession(id)
      return consentPage(session.engine, req, res, id, session.journal, trustProxy, reasons)
    }
    if (path === '/openapi.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      openapi ??= JSON.stringify(openApiDocument(opts.version))
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(openapi) })
      return void res.end(openapi)
    }
    sendEnvelope(res, fail('NOT_FOUND'), failurePayload, why(notFoundReason(req.method, path)))
  }

  const app = createApp({ onError: (err, event) => crashed(event.node.res, err) })
  app.use(
    eventHandler(async (event) => {
      await dispatch(event).catch((err) => crashed(event.node.res, err))
    }),
  )
  // The h3 app serves every path. The listener sends the three merchant paths (the hot path)
  // straight to their handler, skipping h3's event wrapper (measured ~10% of a Status call's CPU).
  const h3listener = toNodeListener(app)
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const { path } = splitUrl(req.url)
    const op = MERCHANT_PATHS[path]
    if (!op) return void h3listener(req, res)
    merchantCall(req, res, op, path).catch((err) => crashed(res, err))
  }
  const closeStreams = () => {
    for (const hub of hubs) hub.close()
  }
  const live = handlersOf(sessions.default).live()
  return { app, journal, operations, live, closeStreams, sessions, operationsOf: (s) => handlersOf(s).operations, listener }
}

function splitUrl(url = '/'): { path: string; query: string } {
  const q = url.indexOf('?')
  return q >= 0 ? { path: url.slice(0, q), query: url.slice(q + 1) } : { path: url, query: '' }
}
