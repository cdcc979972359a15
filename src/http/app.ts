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
import { crossSiteRefusal, hostName, sendRefusal, type CrossSiteOptions } from './guard.js'
import { inProcessCall } from './inprocess.js'
import { compileTrust, peerTrusted } from './ip.js'
import { RequestJournal } from './journal.js'
import { LiveHub, type LiveHubOptions } from './live.js'
import { createMerchantHandler, MERCHANT_PATHS, type Operation } from './merchant.js'
import { openApiDocument } from './openapi.js'
import { consentPage, returnPage } from './pages.js'
import { headerReason, notFoundReason } from './reason.js'
import { safeDecode, sendEnvelope, sendJson } from './respond.js'
import { SessionRegistry, type Session } from '../sessions.js'
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
  /** Bytes of request bodies each request journal keeps (default 32 MiB). */
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
  merchant: ReturnType<typeof createMerchantHandler>
  control: ReturnType<typeof createControlHandler>
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
      journalBytes: opts.journalBytes,
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
  const handlersOf = (session: Session): SessionHandlers => {
    if (session.handlers) return session.handlers as SessionHandlers
    const { engine, journal } = session
    const operations = createControlOperations({ engine, journal, version: opts.version, storeInfo: opts.storeInfo })
    let live: LiveHub | undefined
    const handlers: SessionHandlers = {
      merchant: createMerchantHandler({ engine, journal, trustProxy, failurePayload, reasons, baseUrl, onError }),
      control: createControlHandler({ engine, journal, operations, trustProxy, adminToken: opts.adminToken, onError }),
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
  const { merchant, control, operations } = handlersOf(sessions.default)
  const sessionControl = sessionRoutes(sessions, (req) => checkControlAccess(req, { trustProxy, adminToken: opts.adminToken }))

  /**
   * The session a request names (X-DCB-Session), made on first use; or, when the name is bad or
   * the cap is reached, the refusal written (an envelope on the merchant API, error JSON elsewhere).
   */
  const sessionOf = async (req: IncomingMessage, res: ServerResponse, envelopeErrors: boolean): Promise<Session | undefined> => {
    const name = req.headers['x-dcb-session']
    if (name === undefined) return sessions.default
    try {
      const got = sessions.get(Array.isArray(name) ? name.join(', ') : name)
      return got instanceof Promise ? await got : got
    } catch (e) {
      if (!(e instanceof SandboxError)) throw e
      if (envelopeErrors) sendEnvelope(res, fail(e.code === 'SESSION_LIMIT' ? 'SESSION_LIMIT' : 'BAD_REQUEST'), failurePayload, why(e.message))
      else sendJson(res, e.status, { error: e.code, message: e.message })
      return undefined
    }
  }
  /** A merchant call in a named session (the default session's calls skip this). */
  const merchantIn = async (req: IncomingMessage, res: ServerResponse, op: Operation, path: string): Promise<void> => {
    const session = await sessionOf(req, res, true)
    if (session) await handlersOf(session).merchant(req, res, op, path)
  }
  /** A consent link carries no header (a browser follows it): its id finds the session. */
  const consentSession = (id: string): Session => {
    for (const s of sessions.all()) if (s.engine.consentView(id)) return s
    return sessions.default
  }
  const consoleHandler = createConsoleHandler({
    trustProxy,
    adminToken: opts.adminToken,
    // The stream of the session the console shows: X-DCB-Session, or ?session= (EventSource sends no headers).
    liveOf: async (req, res, name) => {
      if (name !== null) req.headers['x-dcb-session'] = name
      const session = await sessionOf(req, res, false)
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
    if (op) return req.headers['x-dcb-session'] === undefined ? merchant(req, res, op, path) : merchantIn(req, res, op, path)
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
      const session = await sessionOf(req, res, false)
      if (session) return handlersOf(session).control(event, path)
      return
    }
    if (path.startsWith('/consent/')) {
      const id = safeDecode(path.slice('/consent/'.length))
      const session = req.headers['x-dcb-session'] === undefined ? consentSession(id) : await sessionOf(req, res, false)
      if (session) return consentPage(session.engine, req, res, id, session.journal, trustProxy, reasons)
      return
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
    const done = req.headers['x-dcb-session'] === undefined ? merchant(req, res, op, path) : merchantIn(req, res, op, path)
    done.catch((err) => crashed(res, err))
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
