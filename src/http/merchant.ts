/**
 * The three merchant operations over HTTP, with the order of checks of docs/reference/spec-silent.md:
 * method (405) -> API key (401) -> source IP (403) -> content type, size, JSON, schema (400/413) ->
 * the engine. Written with callbacks so that an answer that needs no write (every failure before the
 * engine, and Status) leaves in the same tick as the request's last byte.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Engine, MerchantCall as EngineCall } from '../core/engine.js'
import { fail, type FailurePayloadMode, type Outcome } from '../core/outcomes.js'
import { answerOf, writeAnswer, type Answer } from './answer.js'
import type { Merchant, WorldIndex } from '../core/world.js'
import { isJsonContentType, isPlainObject, parseJson, readBodyThen } from './body.js'
import { inProcessCall } from './inprocess.js'
import { requestLogHeaders } from './request-log-headers.js'
import { Allowlist, clientIp, clientUsedHttps, type ProxyTrust } from './ip.js'
import type { RequestLog } from '../runtime/request-log.js'
import type { RequestLogRecord } from '../store/request-log-feed.js'
import {
  abortedReason,
  headerReason,
  contentTypeReason,
  encodingReason,
  inactiveReason,
  ipReason,
  jsonReason,
  methodReason,
  noKeyReason,
  notObjectReason,
  bodyReason,
  tooLargeReason,
  repeatedKeyReason,
  unknownKeyReason,
} from './reason.js'
import { BODY_LIMIT } from './body.js'
import { notChanged } from './respond.js'
import { checkBody, fieldNames, takesOrigin, type BodyProblem, type MerchantOperation } from '../contract/merchant-calls.js'
import { SandboxError } from '../core/errors.js'
import { MAX_DELAY_MS } from '../core/limits.js'
import { StoreError } from '../store/types.js'

export type Operation = MerchantOperation

/** Where a call runs: a session's engine and request log. */
export interface MerchantTarget {
  engine: Engine
  requestLog: RequestLog
}

export interface MerchantContext {
  /** The loaded world, shared by every session (API keys, merchants). */
  world: WorldIndex
  /**
   * The sessions: the one open now, if any, and how one is made. A session is made only once its
   * request passed every check (a refused one creates and stores nothing).
   */
  sessions: { peek(name: string): MerchantTarget | undefined; open(name: string): Promise<MerchantTarget> }
  trustProxy: ProxyTrust | undefined
  failurePayload: FailurePayloadMode
  /** Whether failures carry the X-DCB-Reason header (`dcb serve --no-reasons`: not). */
  reasons: boolean
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

  /**
   * Serves one call; the answer is written synchronously where it can be (every failure before the
   * engine, and Status). `session`: the X-DCB-Session name, already checked (the default session's
   * without the header). `done` is told once the answer is written.
   */
  return function serve(req: IncomingMessage, res: ServerResponse, op: Operation, path: string, session: string, done: () => void = noop): void {
    const started = performance.now()
    const sentAt = Date.now()
    // A named session not made yet stays so until the request passed every check (nothing logged before).
    let target: MerchantTarget | undefined = ctx.sessions.peek(session)
    let sandboxAt = target ? target.engine.now() : 0
    const ip = clientIp(req, ctx.trustProxy) ?? null
    let merchant: Merchant | undefined
    /** The merchant of a known key that was refused (inactive): its coverage counts the refusal. */
    let refused: Merchant | undefined
    /** The answer is the crash envelope, not the engine's outcome. */
    let crashed = false
    let request: unknown = null
    /** The body as received: what the request log keeps (one string, not the object graph of it). */
    let requestText: string | null = null
    let allowPost = false
    let closeAfter = false
    /** A `hang` fault held its time already: now the connection closes. */
    let hung = false
    /** How long the answer was held already (its delay): a hang waits the rest of the bound at most. */
    let heldMs = 0

    const record = (outcome: Outcome, sent: Answer, clientClosed: boolean) => {
      if (!target) return
      const msisdn = outcome.msisdn ?? (op === 'init' && isPlainObject(request) && typeof request.msisdn === 'string' ? request.msisdn : null)
      const answeredAt = Date.now()
      // One literal of one shape (no spread): this runs for every call.
      const entry: RequestLogRecord = {
        time: answeredAt,
        sandbox_time: sandboxAt,
        method: req.method ?? '',
        path,
        ip,
        merchant: merchant?.id ?? null,
        msisdn,
        http_status: sent.status,
        message: sent.message,
        reason: outcome.code === 'SUCCESS' ? (outcome.wire?.reason ?? null) : (outcome.reason ?? null),
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        request: requestText,
        response: sent.logged,
        headers: requestLogHeaders(req.headers),
      }
      if (clientClosed) entry.client_closed = true
      if (heldMs) entry.delay_ms = heldMs
      if (sent.fault) entry.fault = { kind: sent.fault.kind, when: sent.fault.when }
      if (sent.replaced) entry.response_headers = sent.headers
      const id = target.requestLog.add(entry)
      const who = merchant ?? refused
      if (who)
        target.engine.coverage.answered(
          who.id,
          {
            op,
            http: sent.status,
            code: sent.message,
            crashed,
            clientGone: clientClosed,
            activated: op === 'verify' && outcome.code === 'SUCCESS',
            replaced: outcome.wire !== undefined,
            subscriptionId: op === 'verify' && typeof outcome.payload?.subscription_id === 'string' ? outcome.payload.subscription_id : null,
            body: requestText,
            noStatus: sent.fault !== undefined && sent.fault.kind !== 'truncate',
            sentAt,
            answeredAt,
          },
          id,
          outcome.raised,
        )
    }
    /** The one answer of the call, as the request log keeps it and the transport's writer sends it. */
    const sending = (outcome: Outcome): Answer => {
      // A success whose answer a rule replaced names the rule too.
      const why = outcome.code === 'SUCCESS' ? outcome.wire?.reason : outcome.reason
      let headers: Record<string, string> | undefined = ctx.reasons && why ? { 'x-dcb-reason': headerReason(why) } : undefined
      if (allowPost) headers = { ...headers, allow: 'POST' }
      return answerOf(outcome, ctx.failurePayload, closeAfter ? { ...headers, connection: 'close' } : headers)
    }
    const answer = (outcome: Outcome) => {
      if (outcome.delayMs) {
        heldMs = outcome.delayMs
        return hold(outcome, outcome.delayMs)
      }
      const hangMs = outcome.wire?.fault === 'hang' && !hung ? outcome.wire.hangMs : undefined
      if (hangMs !== undefined) {
        hung = true
        return hold(outcome, Math.max(0, Math.min(hangMs, MAX_DELAY_MS - heldMs)))
      }
      if (res.destroyed || res.headersSent) {
        // The client went away before its answer: logged all the same, as what it would have got.
        if (res.destroyed && !res.headersSent) record(outcome, sending(outcome), true)
        return done()
      }
      const sent = sending(outcome)
      writeAnswer(res, sent)
      record(outcome, sent, false)
      done()
    }
    /** A delayed answer (5NN endings, delay rules): a client that leaves meanwhile is logged at once. */
    const hold = (outcome: Outcome, ms: number) => {
      const later = { ...outcome, delayMs: undefined }
      // Gone already (while the answer was worked out): logged now, not after the delay.
      if (res.destroyed) {
        record(later, sending(later), true)
        return done()
      }
      const onClose = () => {
        clearTimeout(timer)
        if (!res.headersSent) record(later, sending(later), true)
        done()
      }
      const timer = setTimeout(() => {
        res.off('close', onClose)
        answer(later)
      }, ms)
      res.once('close', onClose)
    }
    const crash = (err: unknown) => {
      ctx.onError(err)
      crashed = true
      answer(fail('SERVER_ERROR', undefined, 'unexpected server error (see the server log)'))
    }
    /** The call's changes could not be made durable: they were taken back, and the answer says why (a read: why it could not be). */
    const notStored = (err: unknown) =>
      err instanceof StoreError && err.outcome === 'not read'
        ? answer(fail('SERVER_ERROR', undefined, err.message))
        : err instanceof StoreError
          ? answer(
              fail(
                'SERVER_ERROR',
                undefined,
                `the change ${err.outcome === 'unknown' ? 'may not have been' : 'could not be'} stored (${err.message})${notChanged(err)}`,
              ),
            )
          : crash(err)
    const refusedSession = (err: unknown) =>
      err instanceof SandboxError ? answer(fail(err.code === 'SESSION_LIMIT' ? 'SESSION_LIMIT' : 'BAD_REQUEST', undefined, err.message)) : notStored(err)

    if (req.method !== 'POST') {
      allowPost = true
      return answer(fail('METHOD_NOT_ALLOWED', undefined, methodReason(req.method, path)))
    }
    const header = req.headers['api-key']
    const key = Array.isArray(header) ? header[0] : header
    const known = key ? ctx.world.merchantByKey(key) : undefined
    merchant = known?.active ? known : undefined
    if (!merchant) {
      refused = known
      return answer(fail('UNAUTHORIZED', undefined, unauthorizedReason(key, req)))
    }
    if (!allowlist(merchant).allows(ip ?? undefined)) return answer(fail('IP_NOT_ALLOWED', undefined, ipReason(ip, merchant.id)))
    const contentType = req.headers['content-type']
    if (!isJsonContentType(contentType)) return answer(fail('BAD_REQUEST', undefined, contentTypeReason(contentType)))
    const m = merchant
    readBodyThen(req, (body) => {
      try {
        if (!body.ok) {
          if (body.reason === 'encoded') return answer(fail('BAD_REQUEST', undefined, encodingReason(body.encoding)))
          closeAfter = true
          return body.reason === 'too_large'
            ? answer(fail('PAYLOAD_TOO_LARGE', undefined, tooLargeReason(BODY_LIMIT)))
            : answer(fail('BAD_REQUEST', undefined, abortedReason()))
        }
        requestText = body.text
        request = parseJson(body.text)
        if (request === undefined) return answer(fail('BAD_REQUEST', undefined, jsonReason(body.text)))
        if (!isPlainObject(request)) return answer(fail('BAD_REQUEST', undefined, notObjectReason(request)))
        proceed(parseCall(op, request, req, ctx))
      } catch (err) {
        crash(err)
      }
    })

    function proceed(call: ReturnType<typeof parseCall>): void {
      try {
        if ('problem' in call) return answer(fail('BAD_REQUEST', undefined, bodyReason(call.problem, request as Record<string, unknown>, fieldNames(op))))
        // A clock move runs alone: the call waits for it (and for one queued behind it).
        const run = (engine: Engine): void => {
          const busy = engine.busy
          if (busy) return void busy.then(() => run(engine)).catch(crash)
          // A store other processes share: the call runs in a turn of it (null: this process owns its state).
          const turn = engine.turn(call)
          // A session made anew by the turn (deleted meanwhile) may be refused as a new one is: SESSION_LIMIT,
          // logged nowhere (as a refused new one): the refusal says the session is not there.
          if (turn)
            return void turn.then(
              () => perform(engine),
              (err: unknown) => {
                if (err instanceof SandboxError) target = undefined
                refusedSession(err)
              },
            )
          perform(engine)
        }
        const perform = (engine: Engine): void => {
          const { result, durable } = engine.perform(m, call)
          if (!durable) return answer(result)
          durable.then(() => answer(result), notStored)
        }
        if (target) return run(target.engine)
        // Every check passed: now the named session is made (or refused: the cap).
        ctx.sessions.open(session).then((made) => {
          target = made
          sandboxAt = made.engine.now()
          run(made.engine)
        }, refusedSession)
      } catch (err) {
        crash(err)
      }
    }
  }

  function unauthorizedReason(key: string | undefined, req: IncomingMessage): string {
    if (!key) return noKeyReason()
    const known = ctx.world.merchantByKey(key)
    if (known) return inactiveReason(known.id)
    // Node joins a header sent twice into one value ("k1, k2"), which is no merchant's key: say so.
    const times = (req.rawHeaders ?? []).filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'api-key').length
    return times > 1 ? repeatedKeyReason(times) : unknownKeyReason()
  }
}

function noop(): void {}

/** The engine call of a request body that fits its call's fields (checked once, without zod), or the first problem. */
function parseCall(op: Operation, body: Record<string, unknown>, req: IncomingMessage, ctx: MerchantContext): EngineCall | { problem: BodyProblem } {
  const c = checkBody(op, body)
  if ('problem' in c) return c
  // One shape for every call, read from the declaration: `c.input` is the body of `op` (checkBody's type, per call).
  return (takesOrigin(op) ? { op, input: c.input, baseUrl: baseUrlOf(req, ctx) } : { op, input: c.input }) as EngineCall
}

/** The server's own origin as the client sees it (for consent links). */
function baseUrlOf(req: IncomingMessage, ctx: MerchantContext): string {
  const inProcess = inProcessCall(req)
  if (inProcess) return inProcess.publicBase
  const host = req.headers.host
  if (host && /^[A-Za-z0-9.\-:[\]]+$/.test(host)) {
    return `${clientUsedHttps(req, ctx.trustProxy) ? 'https' : 'http'}://${host}`
  }
  return ctx.baseUrl()
}
