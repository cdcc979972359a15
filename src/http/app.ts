/**
 * The h3 app: merchant routes, the control API under /_sandbox, consent pages, OpenAPI.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createApp, eventHandler, toNodeListener, type App } from 'h3'
import type { Engine } from '../core/engine.js'
import { fail, type FailurePayloadMode } from '../core/outcomes.js'
import { scenarioList } from '../core/scenarios.js'
import { createControlHandler } from './control.js'
import { RequestJournal } from './journal.js'
import { createMerchantHandler, MERCHANT_PATHS } from './merchant.js'
import { openApiDocument } from './openapi.js'
import { consentPage, frontPage, returnPage } from './pages.js'
import { safeDecode, sendEnvelope, sendJson } from './respond.js'

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
  listener: (req: IncomingMessage, res: ServerResponse) => void
}

export function createSandboxApp(opts: SandboxAppOptions): SandboxApp {
  const journal = new RequestJournal(opts.journalSize ?? 1000)
  const onError = opts.onError ?? ((err: unknown) => console.error('dcb: unexpected error:', err))
  const failurePayload = opts.failurePayload ?? 'auto'
  const trustProxy = opts.trustProxy ?? false
  const merchant = createMerchantHandler({ engine: opts.engine, journal, trustProxy, failurePayload, baseUrl: opts.baseUrl ?? (() => 'http://127.0.0.1:7700'), onError })
  const control = createControlHandler({
    engine: opts.engine,
    journal,
    trustProxy,
    adminToken: opts.adminToken,
    version: opts.version,
    storeInfo: opts.storeInfo ?? (() => ({})),
    scenarios: () => scenarioList(opts.engine),
    onError,
  })
  let openapi: string | undefined

  const dispatch = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = req.url ?? '/'
    const q = raw.indexOf('?')
    const path = q >= 0 ? raw.slice(0, q) : raw
    const op = MERCHANT_PATHS[path]
    if (op) return merchant(req, res, op, path)
    if (path === '/_sandbox' || path.startsWith('/_sandbox/')) {
      if (path === '/_sandbox/return') return returnPage(res, new URLSearchParams(q >= 0 ? raw.slice(q + 1) : ''))
      return control(req, res, path, new URLSearchParams(q >= 0 ? raw.slice(q + 1) : ''))
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

  const app = createApp({
    onError: (err, event) => {
      onError(err)
      const res = event.node.res
      if (!res.headersSent) sendJson(res, 500, { status: 'FAIL', message: 'ERROR', status_code: 500, payload: null })
    },
  })
  app.use(
    eventHandler(async (event) => {
      const { req, res } = event.node
      try {
        await dispatch(req, res)
      } catch (err) {
        onError(err)
        if (!res.headersSent && !res.destroyed) sendEnvelope(res, fail('SERVER_ERROR'), failurePayload)
        else if (!res.writableEnded) res.destroy()
      }
    }),
  )
  // The three merchant paths are the hot path: they skip h3's event wrapper (measured ~10% of a
  // Status call's CPU) and go straight to their handler; everything else goes through the h3 app.
  const h3listener = toNodeListener(app)
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const raw = req.url ?? '/'
    const q = raw.indexOf('?')
    const path = q >= 0 ? raw.slice(0, q) : raw
    const op = MERCHANT_PATHS[path]
    if (!op) return void h3listener(req, res)
    merchant(req, res, op, path).catch((err) => {
      onError(err)
      if (!res.headersSent && !res.destroyed) sendEnvelope(res, fail('SERVER_ERROR'), failurePayload)
    })
  }
  return { app, journal, listener }
}
