/**
 * The three merchant operations over HTTP, with the order of checks of SANDBOX.md section 1:
 * method (405) -> API key (401) -> source IP (403) -> content type, size, JSON, schema (400/413) ->
 * the engine. Written with callbacks so that an answer that needs no write (every failure before the
 * engine, and Status) leaves in the same tick as the request's last byte.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Engine } from '../core/engine.js'
import { fail, type FailurePayloadMode, type Outcome } from '../core/outcomes.js'
import type { Merchant } from '../core/world.js'
import { isJsonContentType, isPlainObject, parseJson, readBodyThen } from './body.js'
import { inProcessCall } from './inprocess.js'
import { Allowlist, clientIp } from './ip.js'
import type { RequestJournal } from './journal.js'
import { sendEnvelope } from './respond.js'
import { InitBody, StatusBody, VerifyBody } from '../contract/merchant.js'

export type Operation = 'init' | 'verify' | 'status'

export const MERCHANT_PATHS: Record<string, Operation> = {
  '/subscriptions/init': 'init',
  '/subscriptions/verify': 'verify',
  '/subscriptions/status': 'status',
}

export interface MerchantContext {
  engine: Engine
  journal: RequestJournal
  trustProxy: boolean
  failurePayload: FailurePayloadMode
  /** Where consent pages are served, when the Host header cannot say. */
  baseUrl: () => string
  onError: (err: unknown) => void
}

export function createMerchantHandler(ctx: MerchantContext) {
  const allowlists = new Map<string, Allowlist>()
  const allowlist = (m: Merchant) => {
    let a = allowlists.get(m.id)
    if (!a) allowlists.set(m.id, (a = new Allowlist(m.allowlist)))
    return a
  }

  /** Resolves once the answer is written (h3 waits for it); the answer itself is written synchronously where it can be. */
  return function handle(req: IncomingMessage, res: ServerResponse, op: Operation, path: string): Promise<void> {
    return new Promise<void>((done) => serve(req, res, op, path, done))
  }

  function serve(req: IncomingMessage, res: ServerResponse, op: Operation, path: string, done: () => void): void {
    const started = performance.now()
    const ip = clientIp(req, ctx.trustProxy) ?? null
    let merchant: Merchant | undefined
    let request: unknown = null
    let closeAfter = false

    const answer = (outcome: Outcome) => {
      if (outcome.delayMs) {
        setTimeout(() => answer({ ...outcome, delayMs: undefined }), outcome.delayMs)
        return
      }
      if (res.destroyed || res.headersSent) return done()
      const response = sendEnvelope(res, outcome, ctx.failurePayload, closeAfter ? { connection: 'close' } : undefined)
      ctx.journal.add({
        time: Date.now(),
        sandbox_time: ctx.engine.now(),
        method: req.method ?? '',
        path,
        ip,
        merchant: merchant?.id ?? null,
        http_status: response.status_code as number,
        message: response.message as string,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        request,
        response,
      })
      done()
    }
    const crash = (err: unknown) => {
      ctx.onError(err)
      answer(fail('SERVER_ERROR'))
    }

    if (req.method !== 'POST') return answer(fail('METHOD_NOT_ALLOWED'))
    const key = req.headers['api-key']
    merchant = ctx.engine.authenticate(Array.isArray(key) ? key[0] : key)
    if (!merchant) return answer(fail('UNAUTHORIZED'))
    if (!allowlist(merchant).allows(ip ?? undefined)) return answer(fail('IP_NOT_ALLOWED'))
    if (!isJsonContentType(req.headers['content-type'])) return answer(fail('BAD_REQUEST'))
    const m = merchant
    readBodyThen(req, (body) => {
      try {
        if (!body.ok) {
          closeAfter = true
          return answer(fail(body.reason === 'too_large' ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST'))
        }
        request = parseJson(body.text)
        if (!isPlainObject(request)) return answer(fail('BAD_REQUEST'))
        const call = parseCall(op, request, req, ctx)
        if (!call) return answer(fail('BAD_REQUEST'))
        const { result, durable } = ctx.engine.perform(m, call)
        if (!durable) return answer(result)
        durable.then(() => answer(result), crash)
      } catch (err) {
        crash(err)
      }
    })
  }
}

/** The engine call of a request body that fits its operation's schema; undefined when it does not. */
function parseCall(op: Operation, body: unknown, req: IncomingMessage, ctx: MerchantContext): Parameters<Engine['perform']>[1] | undefined {
  if (op === 'init') {
    const r = InitBody.safeParse(body)
    return r.success ? { op, input: r.data, baseUrl: baseUrlOf(req, ctx) } : undefined
  }
  if (op === 'verify') {
    const r = VerifyBody.safeParse(body)
    return r.success ? { op, input: r.data } : undefined
  }
  const r = StatusBody.safeParse(body)
  return r.success ? { op, input: r.data } : undefined
}

/** The server's own origin as the client sees it (for consent links). */
function baseUrlOf(req: IncomingMessage, ctx: MerchantContext): string {
  const inProcess = inProcessCall(req)
  if (inProcess) return inProcess.publicBase
  const host = req.headers.host
  if (host && /^[A-Za-z0-9.\-:[\]]+$/.test(host)) {
    const proto = ctx.trustProxy && req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http'
    return `${proto}://${host}`
  }
  return ctx.baseUrl()
}
