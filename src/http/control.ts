/**
 * The sandbox control API under /_sandbox: handset inboxes, OTPs, MO messages, subscriptions,
 * carrier actions, the clock, rules, the request journal and reset. Open from loopback; from any
 * other address only with `Authorization: Bearer <admin token>`.
 * Success answers the resource as JSON; failure answers `{ "error": CODE, "message": text }`.
 */
import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ControlError, type Engine } from '../core/engine.js'
import type { SmsRecord } from '../core/state.js'
import { ClockMove } from '../core/events.js'
import { formatTimestamp } from '../core/time.js'
import { isPlainObject, parseJson, readBody } from './body.js'
import { clientIp, isLoopback } from './ip.js'
import type { RequestJournal } from './journal.js'
import { safeDecode, sendJson, sendJsonParts } from './respond.js'

export interface ControlContext {
  engine: Engine
  journal: RequestJournal
  trustProxy: boolean
  adminToken?: string
  version: string
  storeInfo: () => Record<string, unknown>
  scenarios: () => unknown
  onError: (err: unknown) => void
}

type Handler = (req: IncomingMessage, params: string[], query: URLSearchParams) => Promise<unknown> | unknown

interface Route {
  method: string
  pattern: RegExp
  handler: Handler
}

const MAX_OTP_WAIT_S = 120

export function smsView(m: SmsRecord): Record<string, unknown> {
  const { n: _n, at, ...rest } = m
  return { ...rest, at: formatTimestamp(at) }
}

export function createControlHandler(ctx: ControlContext) {
  const { engine } = ctx
  const routes: Route[] = []
  const route = (method: string, path: string, handler: Handler) =>
    routes.push({ method, pattern: new RegExp(`^${path.replace(/:(\w+)/g, '([^/]+)')}$`), handler })

  const body = async (req: IncomingMessage): Promise<Record<string, unknown>> => {
    const r = await readBody(req)
    if (!r.ok)
      throw new ControlError(
        r.reason === 'too_large' ? 413 : 400,
        'BAD_REQUEST',
        r.reason === 'too_large' ? 'the body is larger than 64 KiB' : 'the body could not be read',
      )
    if (!r.text.trim()) return {}
    const data = parseJson(r.text)
    if (!isPlainObject(data)) throw new ControlError(400, 'BAD_REQUEST', 'the body must be a JSON object')
    return data
  }
  const str = (data: Record<string, unknown>, key: string): string => {
    const v = data[key]
    if (typeof v !== 'string' || !v) throw new ControlError(400, 'BAD_REQUEST', `"${key}" must be a non-empty string`)
    return v
  }
  const msisdnParam = (q: URLSearchParams): string => {
    const m = q.get('msisdn')
    if (!m) throw new ControlError(400, 'BAD_REQUEST', 'the query parameter msisdn is required')
    return m
  }

  route('GET', '/health', () => {
    const mem = process.memoryUsage()
    return {
      ok: true,
      version: ctx.version,
      now: engine.clockView().now,
      store: ctx.storeInfo(),
      sizes: engine.sizes(),
      memory_mib: { rss: Math.round(mem.rss / 2 ** 20), heap_used: Math.round(mem.heapUsed / 2 ** 20) },
    }
  })
  route('GET', '/sms', (_req, _p, q) => {
    const msisdn = msisdnParam(q)
    return { msisdn, messages: engine.smsFor(msisdn).map(smsView) }
  })
  route('GET', '/otp', async (req, _p, q) => {
    const msisdn = msisdnParam(q)
    const wait = q.has('wait') ? Number(q.get('wait')) : 0
    if (!Number.isFinite(wait) || wait < 0 || wait > MAX_OTP_WAIT_S)
      throw new ControlError(400, 'BAD_REQUEST', `wait must be a number of seconds from 0 to ${MAX_OTP_WAIT_S}`)
    const view = (m: SmsRecord) => ({ otp: m.otp, verif_request_id: m.verif_request_id, msisdn, sent_dt: formatTimestamp(m.at), text: m.text })
    const have = engine.latestOtp(msisdn)
    if (have || wait === 0) {
      if (!have) throw new ControlError(404, 'NO_OTP', `no OTP has been sent to ${msisdn}`)
      return view(have)
    }
    const got = await new Promise<SmsRecord | undefined>((resolve) => {
      const timer = setTimeout(() => finish(undefined), wait * 1000)
      const off = engine.onSms((m) => {
        if (m.msisdn === msisdn && m.kind === 'otp') finish(m)
      })
      const onClose = () => finish(undefined)
      req.socket.once('close', onClose)
      function finish(m: SmsRecord | undefined) {
        clearTimeout(timer)
        off()
        req.socket.off('close', onClose)
        resolve(m)
      }
    })
    if (!got) throw new ControlError(404, 'NO_OTP', `no OTP was sent to ${msisdn} within ${wait} s`)
    return view(got)
  })
  route('POST', '/mo', async (req) => {
    const data = await body(req)
    return engine.mo({ msisdn: str(data, 'msisdn'), short_code: str(data, 'short_code'), text: str(data, 'text') })
  })
  route('GET', '/subscriptions', (_req, _p, q) => {
    const limit = q.has('limit') ? Number(q.get('limit')) : undefined
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new ControlError(400, 'BAD_REQUEST', 'limit must be a positive whole number')
    return {
      subscriptions: engine.listSubscriptions({
        msisdn: q.get('msisdn') ?? undefined,
        merchant: q.get('merchant') ?? undefined,
        service: q.get('service') ?? q.get('service_code') ?? undefined,
        status: q.get('status') ?? undefined,
        limit,
      }),
    }
  })
  route('GET', '/subscriptions/:id', (_req, [id]) => engine.subscription(id!))
  route('POST', '/subscriptions/:id/cancel', (_req, [id]) => engine.cancel(id!))
  route('GET', '/clock', () => engine.clockView())
  route('POST', '/clock/advance', async (req) => engine.advance(str(await body(req), 'by')))
  route('POST', '/clock/set', async (req) => engine.setTime(str(await body(req), 'to')))
  route('GET', '/requests', (_req, _p, q) => {
    const limit = Number(q.get('limit') ?? 100)
    const since = Number(q.get('since') ?? 0)
    if (!Number.isInteger(limit) || limit < 1 || !Number.isInteger(since) || since < 0)
      throw new ControlError(400, 'BAD_REQUEST', 'limit and since must be whole numbers')
    return { capacity: ctx.journal.capacity, requests: ctx.journal.list(limit, since) }
  })
  route('POST', '/reset', async () => {
    await engine.reset()
    ctx.journal.clear()
    return { ok: true, clock: engine.clockView() }
  })
  route('GET', '/rules', () => engine.rules())
  route('POST', '/rules', async (req) => engine.addRule(await body(req)))
  route('DELETE', '/rules', async () => ({ deleted: await engine.deleteAllRules() }))
  route('DELETE', '/rules/:id', async (_req, [id]) => {
    await engine.deleteRule(safeDecode(id!))
    return { deleted: 1 }
  })
  route('GET', '/scenarios', () => ctx.scenarios())

  const authorized = (req: IncomingMessage): boolean => {
    if (isLoopback(clientIp(req, ctx.trustProxy))) return true
    const auth = req.headers.authorization
    if (!ctx.adminToken || !auth?.startsWith('Bearer ')) return false
    const given = Buffer.from(auth.slice(7).trim())
    const want = Buffer.from(ctx.adminToken)
    return given.length === want.length && timingSafeEqual(given, want)
  }

  return async function handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    try {
      if (!authorized(req)) {
        throw new ControlError(
          403,
          'FORBIDDEN',
          ctx.adminToken
            ? 'the control API needs Authorization: Bearer <admin token> from this address'
            : 'the control API is open from loopback only; start the server with --admin-token to open it to other addresses',
        )
      }
      const sub = path.slice('/_sandbox'.length) || '/'
      let allowed: string[] = []
      for (const r of routes) {
        const m = r.pattern.exec(sub)
        if (!m) continue
        if (r.method !== req.method && !(r.method === 'GET' && req.method === 'HEAD')) {
          allowed.push(r.method)
          continue
        }
        const started = performance.now()
        const result = await r.handler(req, m.slice(1), query)
        if (!res.destroyed) {
          if (result instanceof ClockMove) sendJsonParts(res, 200, result.jsonParts())
          else sendJson(res, 200, result)
        }
        // Changes made through the control API (MO, rules, clock, cancel, reset) are journaled too.
        if (req.method !== 'GET' && req.method !== 'HEAD' && path !== '/_sandbox/reset') {
          ctx.journal.add({
            time: Date.now(),
            sandbox_time: engine.now(),
            method: req.method ?? '',
            path,
            ip: clientIp(req, ctx.trustProxy) ?? null,
            merchant: null,
            http_status: 200,
            message: '',
            duration_ms: Math.round((performance.now() - started) * 10) / 10,
            request: null,
            response: result instanceof ClockMove ? result.summary() : result,
          })
        }
        return
      }
      if (allowed.length) {
        allowed = [...new Set(allowed)]
        throw new ControlError(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}; use ${allowed.join(' or ')}`)
      }
      throw new ControlError(404, 'NOT_FOUND', `no control call ${req.method} ${path}`)
    } catch (err) {
      if (res.headersSent || res.destroyed) return
      if (err instanceof ControlError) return sendJson(res, err.status, { error: err.code, message: err.message })
      ctx.onError(err)
      sendJson(res, 500, { error: 'ERROR', message: 'unexpected server error (see the server log)' })
    }
  }
}
