/**
 * The three merchant operations over HTTP, with the order of checks of SANDBOX.md section 1:
 * method (405) -> API key (401) -> source IP (403) -> content type, JSON, schema (400) -> the engine.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { z } from 'zod'
import type { Engine } from '../core/engine.js'
import { fail, type FailurePayloadMode, type Outcome } from '../core/outcomes.js'
import type { Merchant } from '../core/world.js'
import { isJsonContentType, isPlainObject, parseJson, readBody } from './body.js'
import { Allowlist, clientIp } from './ip.js'
import type { RequestJournal } from './journal.js'
import { sendEnvelope } from './respond.js'
import { InitBody, StatusBody, VerifyBody } from './schemas.js'
import { formatTimestamp } from '../core/time.js'

export type Operation = 'init' | 'verify' | 'status'

export const MERCHANT_PATHS: Record<string, Operation> = {
  '/subscriptions/init': 'init',
  '/subscriptions/verify': 'verify',
  '/subscriptions/status': 'status',
}

const SCHEMAS: Record<Operation, z.ZodType> = { init: InitBody, verify: VerifyBody, status: StatusBody }

export interface MerchantContext {
  engine: Engine
  journal: RequestJournal
  trustProxy: boolean
  failurePayload: FailurePayloadMode
  /** Where consent pages are served, when the Host header cannot say. */
  baseUrl: () => string
  onError: (err: unknown) => void
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export function createMerchantHandler(ctx: MerchantContext) {
  const allowlists = new Map<string, Allowlist>()
  const allowlist = (m: Merchant) => {
    let a = allowlists.get(m.id)
    if (!a) allowlists.set(m.id, (a = new Allowlist(m.allowlist)))
    return a
  }

  return async function handle(req: IncomingMessage, res: ServerResponse, op: Operation, path: string): Promise<void> {
    const started = performance.now()
    const ip = clientIp(req, ctx.trustProxy) ?? null
    let merchant: Merchant | undefined
    let request: unknown = null
    let outcome: Outcome
    let closeAfter = false
    try {
      outcome = await (async (): Promise<Outcome> => {
        if (req.method !== 'POST') return fail('METHOD_NOT_ALLOWED')
        const key = req.headers['api-key']
        merchant = ctx.engine.authenticate(Array.isArray(key) ? key[0] : key)
        if (!merchant) return fail('UNAUTHORIZED')
        if (!allowlist(merchant).allows(ip ?? undefined)) return fail('IP_NOT_ALLOWED')
        if (!isJsonContentType(req.headers['content-type'])) return fail('BAD_REQUEST')
        const body = await readBody(req)
        if (!body.ok) {
          closeAfter = true
          return fail(body.reason === 'too_large' ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST')
        }
        request = parseJson(body.text)
        if (!isPlainObject(request)) return fail('BAD_REQUEST')
        const parsed = SCHEMAS[op].safeParse(request)
        if (!parsed.success) return fail('BAD_REQUEST')
        const input = parsed.data as never
        if (op === 'init') return ctx.engine.init(merchant, input, { baseUrl: baseUrlOf(req, ctx) })
        if (op === 'verify') return ctx.engine.verify(merchant, input)
        return ctx.engine.status(merchant, input)
      })()
    } catch (err) {
      ctx.onError(err)
      outcome = fail('SERVER_ERROR')
    }
    if (outcome.delayMs) await sleep(outcome.delayMs)
    if (res.destroyed) return
    const response = sendEnvelope(res, outcome, ctx.failurePayload, closeAfter ? { connection: 'close' } : undefined)
    ctx.journal.add({
      time: new Date().toISOString(),
      sandbox_time: formatTimestamp(ctx.engine.now()),
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
  }
}

/** The server's own origin as the client sees it (for consent links). */
function baseUrlOf(req: IncomingMessage, ctx: MerchantContext): string {
  const host = req.headers.host
  if (host && /^[A-Za-z0-9.\-:[\]]+$/.test(host)) {
    const proto = ctx.trustProxy && req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http'
    return `${proto}://${host}`
  }
  return ctx.baseUrl()
}
