/**
 * The h3 app: merchant routes, the control API under /_sandbox, consent pages, OpenAPI.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createApp, eventHandler, toNodeListener, type App, type H3Event } from 'h3'
import { DEFAULT_BASE_URL } from '../contract/defaults.js'
import type { ControlOperations } from '../contract/operations.js'
import { createControlOperations } from '../control/operations.js'
import type { Engine } from '../core/engine.js'
import { fail, type FailurePayloadMode } from '../core/outcomes.js'
import { createControlHandler } from './control.js'
import { RequestJournal } from './journal.js'
import { createMerchantHandler, MERCHANT_PATHS } from './merchant.js'
import { openApiDocument } from './openapi.js'
import { consentPage, frontPage, returnPage } from './pages.js'
import { safeDecode, sendEnvelope } from './respond.js'

export interface SandboxAppOptions {
  engine: Engine
  version: string
  trustProxy?: boolean
  adminToken?: string
  failurePayload?: FailurePayloadMode
  journalSize?: number
  storeInfo?: () => Record<string, unknown>
  baseUrl?: () => string
  /** Where unexpected errors are reported (never on the wire). */
  onError?: (err: unknown) => void
}

export interface SandboxApp {
  app: App
  journal: RequestJournal
  /** The control operations of this app's engine and journal (what /_sandbox calls). */
  operations: ControlOperations
  listener: (req: IncomingMessage, res: ServerResponse) => void
}

export function createSandboxApp(opts: SandboxAppOptions): SandboxApp {
  const journal = new RequestJournal(opts.journalSize ?? 1000)
  const onError = opts.onError ?? ((err: unknown) => console.error('dcb: unexpected error:', err))
  const failurePayload = opts.failurePayload ?? 'auto'
  const trustProxy = opts.trustProxy ?? false
  const merchant = createMerchantHandler({
    engine: opts.engine,
    journal,
    trustProxy,
    failurePayload,
    baseUrl: opts.baseUrl ?? (() => DEFAULT_BASE_URL),
    onError,
  })
  const operations = createControlOperations({ engine: opts.engine, journal, version: opts.version, storeInfo: opts.storeInfo })
  const control = createControlHandler({ engine: opts.engine, journal, operations, trustProxy, adminToken: opts.adminToken, onError })
  let openapi: string | undefined

  /** After an unexpected error: the envelope if nothing was sent yet, else cut the response. */
  const crashed = (res: ServerResponse, err: unknown) => {
    onError(err)
    if (!res.headersSent && !res.destroyed) sendEnvelope(res, fail('SERVER_ERROR'), failurePayload)
    else if (!res.writableEnded) res.destroy()
  }

  const dispatch = async (event: H3Event): Promise<void> => {
    const { req, res } = event.node
    const { path, query } = splitUrl(req.url)
    const op = MERCHANT_PATHS[path]
    if (op) return merchant(req, res, op, path)
    if (path === '/_sandbox' || path.startsWith('/_sandbox/')) {
      if (path === '/_sandbox/return') return returnPage(res, new URLSearchParams(query))
      return control(event, path)
    }
    if (path.startsWith('/consent/')) return consentPage(opts.engine, req, res, safeDecode(path.slice('/consent/'.length)))
    if (path === '/openapi.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      openapi ??= JSON.stringify(openApiDocument(opts.version))
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(openapi) })
      return void res.end(openapi)
    }
    if (path === '/' && (req.method === 'GET' || req.method === 'HEAD')) return frontPage(res, opts.version)
    sendEnvelope(res, fail('NOT_FOUND'), failurePayload)
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
    merchant(req, res, op, path).catch((err) => crashed(res, err))
  }
  return { app, journal, operations, listener }
}

function splitUrl(url = '/'): { path: string; query: string } {
  const q = url.indexOf('?')
  return q >= 0 ? { path: url.slice(0, q), query: url.slice(q + 1) } : { path: url, query: '' }
}
