/**
 * The control API under /_sandbox, the same pipeline for every call: access check (one call, first)
 * -> the route the app's dispatch table found for the path, by method (405 naming the others) ->
 * query and body read with their zod schemas (a bad one is 400 naming the field) -> the session
 * (made now if new) -> the typed operation -> JSON. Failures answer `{ "error": CODE, "message" }`
 * with the status of the control error table. Changes are logged like merchant calls.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { z } from 'zod'
import type { Engine } from '../core/engine.js'
import { requestLogView } from '../core/encoded.js'
import { SandboxError } from '../core/errors.js'
import type { ControlOperations } from '../contract/operations.js'
import { check } from '../control/operations.js'
import { isPlainObject, readJsonBody } from './body.js'
import type { ControlRoute } from './control-routes.js'
import type { OperationName } from '../contract/calls.js'
import type { AdminAttempts } from './admin-attempts.js'
import { hasConsoleCookie } from './console-cookie.js'
import { accessRefusal, bearerAdmin, CONTROL_API_WORDS, type AccessWords } from './guard.js'
import { clientIp, peerIp, type ProxyTrust } from './ip.js'
import { whenSocketCloses } from './connections.js'
import { refuseReadIfFull, sendBounded } from './control-answers.js'
import type { RequestLog } from '../runtime/request-log.js'
import { sendJson, sendControlError } from './respond.js'
import { nearestName } from '../core/nearest.js'
import { DECIMAL } from '../contract/defaults.js'
import { mergedCoverage, sessionsNamed } from './coverage-sessions.js'

export { smsView } from '../control/operations.js'

/** Where a control call runs: a session's engine, request log and operations. */
export interface ControlTarget {
  engine: Engine
  requestLog: RequestLog
  operations: ControlOperations
}

/** The control path a request matched (its declared form, `/subscriptions/:id`) and its parameters (decoded). */
export interface ControlMatch {
  path: string
  params: Record<string, string>
}

let routesByPath: Promise<Map<string, Map<string, ControlRoute>>> | undefined

/**
 * The control routes by path, then method (in the table's order: a 405 names them so). Their schemas
 * are zod's: loaded by the first control call, not at start.
 */
export function controlRoutes(): Promise<Map<string, Map<string, ControlRoute>>> {
  return (routesByPath ??= import('./control-routes.js').then(({ CONTROL_ROUTES }) => {
    const byPath = new Map<string, Map<string, ControlRoute>>()
    for (const r of CONTROL_ROUTES) byPath.set(r.path, (byPath.get(r.path) ?? new Map<string, ControlRoute>()).set(r.method, r))
    return byPath
  }))
}

export interface ControlContext {
  /**
   * The sessions: the one open now, if any, and how one is made: only once its call passed access,
   * route, method, query and body checks (a refused one creates nothing).
   */
  sessions: {
    peek(name: string): ControlTarget | undefined
    open(name: string): Promise<ControlTarget>
    /** Whether the session is there already (a call refused on one it made drops it again: `discardUnused`). */
    has?(name: string): boolean
    discardUnused?(name: string): Promise<void>
  }
  /** The names of the sessions there (for `coverage?sessions=`). */
  sessionNames?: () => Promise<string[]>
  trustProxy: ProxyTrust | undefined
  adminToken?: string
  /** Whether the loaded world has a merchant of this id (every session shares the world). */
  hasMerchant: (id: string) => boolean
  /** The service codes of the loaded world (every merchant's). */
  serviceCodes?: () => ReadonlySet<string>
  /** The error writes answer while they fail (health answers 503 with it), or null. */
  storeFailure?: () => Error | null
  /** Asks the store whether it works (health; a shared database is asked, not remembered). */
  storeProbe?: () => Promise<Error | null>
  /** Whether a request's Host is a loopback or --allow-host name (guard.ts `hostLocal`; default: yes). */
  hostLocal?: (req: IncomingMessage) => boolean
  /** Wrong admin tokens per address (one for the server: the control API and the console share it). */
  adminAttempts?: AdminAttempts
  onError: (err: unknown) => void
}

/**
 * The control API's access rule (`guard.ts`): open when the socket peer and the client are both
 * loopback and the Host is a loopback or --allow-host name; otherwise only with `Authorization: Bearer <admin token>` or the console's sign-in cookie
 * sent from the server's own pages (a merchant API key never opens it). Throws FORBIDDEN.
 */
export function checkControlAccess(
  req: IncomingMessage,
  ctx: Pick<ControlContext, 'trustProxy' | 'adminToken' | 'hostLocal' | 'adminAttempts'>,
  words: AccessWords = CONTROL_API_WORDS,
): void {
  const client = clientIp(req, ctx.trustProxy)
  const refused = accessRefusal(req, {
    peer: peerIp(req),
    client,
    // Asked only of a request the loopback rule does not let in: an address refused for wrong tokens is refused whatever it sends.
    isAdmin: (r) => {
      ctx.adminAttempts?.check(client)
      const admin = bearerAdmin(ctx.adminToken)(r) || hasConsoleCookie(req, ctx.adminToken)
      if (ctx.adminToken && (admin || r.headers.authorization !== undefined)) ctx.adminAttempts?.given(client, admin)
      return admin
    },
    adminTokenSet: !!ctx.adminToken,
    hostLocal: ctx.hostLocal?.(req) ?? true,
    words,
  })
  if (refused) throw new SandboxError(refused.error, refused.message)
}

/** The names a call's query or body schema takes; undefined for a schema that takes any (a rule, judged by the engine). */
function takes(schema: z.ZodType | undefined): string[] | undefined {
  if (!schema) return []
  // Read off the schema's definition: this file is on the start-up path, which loads no zod.
  const def = schema.def as { type: string; catchall?: unknown; shape?: Record<string, unknown> }
  if (def.type !== 'object' || def.catchall) return undefined
  return Object.keys(def.shape ?? {})
}

/** The query parameters each call's schema reads as numbers (read off its definition once, as `takes` is). */
const numberParamsOf = new WeakMap<z.ZodObject, string[]>()
function numberParams(schema: z.ZodObject | undefined): string[] {
  if (!schema) return []
  let names = numberParamsOf.get(schema)
  if (!names) numberParamsOf.set(schema, (names = readNumberParams(schema)))
  return names
}
function readNumberParams(schema: z.ZodObject): string[] {
  type Def = { type: string; coerce?: boolean; innerType?: { def: Def } }
  return Object.entries(schema.def.shape as Record<string, { def: Def }>)
    .filter(([, field]) => {
      const def = field.def.type === 'optional' ? field.def.innerType!.def : field.def
      return def.type === 'number' && def.coerce === true
    })
    .map(([name]) => name)
}

/** What a call is told when it names something the call does not take (a typo would otherwise do nothing, silently). */
function unknownName(name: string, kind: 'query parameter' | 'field', method: string, path: string, known: string[]): SandboxError {
  return new SandboxError('BAD_REQUEST', `${name}: unknown ${kind}; ${method} ${path} takes ${known.length ? known.join(', ') : 'none'}`)
}

/** A query string as an object: a parameter the call does not take, or one given twice, is refused by name (BAD_REQUEST). */
export function queryObject(query: string | URLSearchParams, known: string[], method: string, path: string): Record<string, string> {
  const out = new Map<string, string>()
  for (const [k, v] of typeof query === 'string' ? new URLSearchParams(query) : query) {
    if (!known.includes(k)) throw unknownName(k, 'query parameter', method, path, known)
    if (out.has(k)) throw new SandboxError('BAD_REQUEST', `${k}: given more than once`)
    out.set(k, v)
  }
  return Object.fromEntries(out)
}

/** The body's fields the call does not take are refused by name (the first one). */
function refuseUnknownFields(body: unknown, known: string[] | undefined, method: string, path: string): void {
  if (!known || !isPlainObject(body)) return
  const extra = Object.keys(body).find((k) => !known.includes(k))
  if (extra !== undefined) throw unknownName(extra, 'field', method, path, known)
}

export function createControlHandler(ctx: ControlContext) {
  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: string,
    r: ControlRoute,
    params: Record<string, string>,
    session: string,
  ) {
    const started = performance.now()
    // The signal (for calls that wait, e.g. an OTP with `wait`) is made only when a call asks for it.
    let aborted: AbortController | undefined
    let gone = false
    const onClose = () => {
      gone = true
      aborted?.abort()
    }
    const stopWaiting = whenSocketCloses(req.socket, onClose)
    let result: unknown
    let body: unknown = null
    let target: ControlTarget
    /** A read's key for the bound on answers in flight (its session, path and query); none for a change or health. */
    const readKey = r.method === 'GET' && r.operation !== 'health' ? `${session}\n${path}?${query}` : undefined
    try {
      const read = query ? queryObject(query, takes(r.query) ?? [], r.method, path) : {}
      // A number written otherwise is refused by its schema in its own words, as a word would be.
      for (const name of numberParams(r.query)) if (read[name] !== undefined && !DECIMAL.test(read[name])) read[name] = 'not a number'
      const values = r.query ? check(r.query, read) : {}
      // A filter on a merchant the world does not have would answer an empty list, as if it had none yet (coverage refuses it too).
      if (typeof values.merchant === 'string' && !ctx.hasMerchant(values.merchant))
        throw new SandboxError('MERCHANT_NOT_FOUND', `no merchant ${values.merchant} in the world`)
      // The same of a service: a typo (STREAMPLUSS) would answer an empty list.
      const services = typeof values.service === 'string' ? ctx.serviceCodes?.() : undefined
      if (services && !services.has(values.service as string)) {
        const near = nearestName(values.service as string, services)
        throw new SandboxError(
          'BAD_REQUEST',
          `service: no service "${values.service as string}" in the world (services: ${[...services].sort().join(', ') || 'none'})${near ? `; did you mean ${near}?` : ''}`,
        )
      }
      // A POST's body is read and checked (one that takes nothing takes {}); a DELETE takes none.
      if (r.method === 'POST') {
        const given = await readJsonBody(req)
        refuseUnknownFields(given, takes(r.body), r.method, path)
        if (r.body) body = check(r.body, given)
        else if (!isPlainObject(given)) throw new SandboxError('BAD_REQUEST', 'the body must be a JSON object')
      }
      // While writes fail, health says so (reads keep answering).
      const failure = r.operation === 'health' ? ((await ctx.storeProbe?.()) ?? ctx.storeFailure?.()) : null
      if (failure) {
        sendJson(res, 503, { ok: false, store: failure.message })
        return true
      }
      // A read past the bound on answers in flight is refused before it is built (health always answers).
      if (readKey !== undefined) refuseReadIfFull(readKey)
      const made = ctx.sessions.has?.(session) === false
      target = ctx.sessions.peek(session) ?? (await ctx.sessions.open(session))
      const merged = r.operation === 'coverage' && typeof values.sessions === 'string' && ctx.sessionNames ? values.sessions : undefined
      if (merged !== undefined) {
        const { merchant } = values as { merchant?: string }
        const names = sessionsNamed(merged, await ctx.sessionNames!())
        result = await mergedCoverage(names, async (n) => (await ctx.sessions.open(n)).operations.coverage(merchant === undefined ? {} : { merchant }))
      } else
        result = await r
          .call(target.operations, {
            query: values,
            body: body ?? {},
            params,
            get signal() {
              if (!aborted) {
                aborted = new AbortController()
                if (gone) aborted.abort()
              }
              return aborted.signal
            },
          })
          .catch(async (e: unknown) => {
            // A refused change creates no session: one it made holds nothing, and goes again (a read makes its session, as a read always does).
            if (made && r.method !== 'GET' && e instanceof SandboxError && e.status < 500) await ctx.sessions.discardUnused?.(session)
            throw e
          })
    } finally {
      stopWaiting()
    }
    if (!res.destroyed) sendBounded(res, result, readKey)
    // Changes made through the control API (MO, rules, clock, cancel) are logged too; reset empties the request log.
    if (r.method !== 'GET' && r.operation !== 'reset') {
      const id = target.requestLog.add({
        time: Date.now(),
        sandbox_time: target.engine.now(),
        method: req.method ?? '',
        path,
        ip: clientIp(req, ctx.trustProxy) ?? null,
        merchant: null,
        msisdn: msisdnOf(r.operation, body, result),
        http_status: 200,
        message: moOutcome(result)?.code ?? '',
        reason: moOutcome(result)?.reason ?? null,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        // The request log keeps bodies as text (bounded by bytes); this one is schema-shaped, so small and shallow.
        request: body === null ? null : JSON.stringify(body),
        response: requestLogView(result),
      })
      // Coverage findings this call raised (a subscription changed outside the merchant's calls) point here.
      target.engine.coverage.exampleOf(id)
    }
  }

  /**
   * Serves one request under /_sandbox: `path` without the query, `match` the routes the dispatch
   * table found for it (none: NOT_FOUND once access is checked), `session` the checked X-DCB-Session
   * name (the default session's without the header).
   */
  return async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: string,
    match: ControlMatch | undefined,
    session: string,
  ): Promise<void> {
    try {
      checkControlAccess(req, ctx)
      const method = req.method ?? 'GET'
      const methods = match && (await controlRoutes()).get(match.path)
      if (!methods) throw new SandboxError('NOT_FOUND', `no control call ${method} ${path}`)
      const r = methods.get(method) ?? (method === 'HEAD' ? methods.get('GET') : undefined)
      if (!r) throw new SandboxError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; use ${[...methods.keys()].join(' or ')}`)
      await serve(req, res, path, query, r, match.params, session)
    } catch (err) {
      if (res.headersSent || res.destroyed) return
      if (sendControlError(res, err)) return
      ctx.onError(err)
      sendJson(res, 500, { error: 'ERROR', message: 'unexpected server error (see the server log)' })
    }
  }
}

/** The MSISDN a control call concerns: an MO's, a canceled subscription's, a rule's match; else null. */
function msisdnOf(operation: OperationName, body: unknown, result: unknown): string | null {
  if (operation === 'mo' && isPlainObject(body) && typeof body.msisdn === 'string') return body.msisdn
  if (operation === 'cancel' && isPlainObject(result) && typeof result.msisdn === 'string') return result.msisdn
  if (operation === 'rules.add' && isPlainObject(body) && isPlainObject(body.match) && typeof body.match.msisdn === 'string') return body.match.msisdn
  return null
}

/**
 * An MO that did not do what it asked: its code and reason (the request log's message and reason). A
 * refused or failed charge gives its carrier code; a keyword no service has, or a message the carrier
 * drops, its action (a support engineer following a PSMS ticket reads why nothing happened).
 */
function moOutcome(result: unknown): { code: string; reason: string } | undefined {
  if (!isPlainObject(result)) return undefined
  if (result.action === 'rejected' || result.action === 'charge_failed') return { code: String(result.code), reason: String(result.reason ?? '') }
  if (result.action === 'unknown_keyword') return { code: 'unknown_keyword', reason: String(result.message ?? '') }
  if (result.action === 'ignored') return { code: 'ignored', reason: String(result.reason ?? '') }
  return undefined
}
