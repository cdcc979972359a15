/**
 * The control operations in-process, over one engine and its request log: what `/_sandbox`
 * does, as typed functions. The HTTP handlers call them (parse, call, send); the library exports
 * them as they are. Made per (engine, request log) pair, so a session can get its own set.
 * Arguments are checked with the wire contract's schemas: a library caller gets the same
 * `SandboxError` (BAD_REQUEST naming the field) as an HTTP caller.
 */
import type { z } from 'zod'
import type { Engine } from '../core/engine.js'
import { seedOf } from '../core/delays.js'
import { SandboxError } from '../core/errors.js'
import { scenarioList } from '../core/scenarios.js'
import type { SmsRecord } from '../core/state.js'
import { formatTimestamp, parseTimestamp, timeProblem } from '../core/time.js'
import type { RequestLogEntry, MoAnswer, OtpAnswer, SmsMessage, SubscriptionDetail, SubscriptionView, WorldDocument } from '../contract/control.js'
import type { ControlOperations } from '../contract/operations.js'
import { aboutSubscription } from './about-subscription.js'
import { HINT_KEYS } from '../core/nearest.js'

/** What the operations read of a session's request log (runtime's `RequestLog`): control stands below runtime. */
export interface RequestLogReader {
  readonly capacity: number
  list(limit: number, since: number, msisdn?: string): RequestLogEntry[]
  holds(id: number): boolean
  clear(): void
  /** A shared store's log: read what the other replicas added first. */
  sync?: (() => Promise<void>) | null
}

export interface OperationsContext {
  engine: Engine
  requestLog: RequestLogReader
  version: string
  /** What `health` says of the store (file, sizes). */
  storeInfo?: () => Record<string, unknown>
}

type ControlSchemas = typeof import('../contract/control.js')
let schemas: ControlSchemas | undefined

/**
 * The schemas of the operations' arguments (zod): loaded by the first operation that checks one, not
 * at start; once loaded, an operation runs without waiting.
 */
function loadSchemas(): Promise<ControlSchemas> {
  return import('../contract/control.js').then((m) => (schemas = m))
}

/** The value as the schema reads it, or BAD_REQUEST naming the first field that does not fit. */
export function check<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const r = schema.safeParse(value, HINT_KEYS)
  if (r.success) return r.data
  const issue = r.error.issues[0]!
  if (!issue.path.length && issue.code === 'invalid_type') throw new SandboxError('BAD_REQUEST', 'the body must be a JSON object')
  throw new SandboxError('BAD_REQUEST', `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
}

export function smsView(m: SmsRecord): SmsMessage {
  const { n: _n, at, sent_at, ...rest } = m
  // A late SMS (deliver_after) says when it was sent and when it reached the inbox (`at`).
  if (sent_at !== undefined) return { ...rest, at: formatTimestamp(at), sent_dt: formatTimestamp(sent_at), delivered_dt: formatTimestamp(at) }
  return { ...rest, at: formatTimestamp(at) }
}

export function createControlOperations(ctx: OperationsContext): ControlOperations {
  const { engine, requestLog } = ctx
  const otpView = (m: SmsRecord): OtpAnswer => ({
    otp: m.otp!,
    verif_request_id: m.verif_request_id!,
    msisdn: m.msisdn,
    sent_dt: formatTimestamp(m.sent_at ?? m.at),
    ...(m.sent_at !== undefined ? { delivered_dt: formatTimestamp(m.at) } : {}),
    text: m.text,
  })

  /**
   * The next OTP SMS sent to `q.msisdn` (or of verification request `q.verif_request_id`) within
   * `waitS` seconds, or undefined (also when `signal` aborts); SHUTTING_DOWN when the host shuts down
   * meanwhile (the wait would hold the close up). `due`: a late SMS is due then; on a running clock
   * its time comes without a move, so the events due run then (not at the server's next tick, and in
   * the library, which has none).
   */
  const nextOtp = (q: { msisdn?: string; verif_request_id?: string }, waitS: number, signal?: AbortSignal, due?: number) =>
    new Promise<SmsRecord | undefined>((resolve, reject) => {
      const what = q.msisdn ?? `verification request ${q.verif_request_id}`
      const shuttingDown = () => new SandboxError('SHUTTING_DOWN', `the server is shutting down: no OTP came for ${what} before it stopped waiting`)
      if (engine.interrupted) return reject(shuttingDown())
      if (signal?.aborted) return resolve(undefined)
      const timer = setTimeout(() => finish(undefined), waitS * 1000)
      const running = due !== undefined && !engine.clockView().frozen
      const delivery = running ? setTimeout(() => void engine.catchUp().catch(() => {}), Math.max(0, due - engine.now()) + 1) : undefined
      const off = engine.onSms((m) => {
        if (m.kind === 'otp' && (q.verif_request_id !== undefined ? m.verif_request_id === q.verif_request_id : m.msisdn === q.msisdn)) finish(m)
      })
      const onAbort = () => finish(undefined)
      signal?.addEventListener('abort', onAbort, { once: true })
      const offInterrupt = engine.onInterrupt(() => finish(undefined, shuttingDown()))
      function finish(m: SmsRecord | undefined, stopped?: SandboxError) {
        clearTimeout(timer)
        clearTimeout(delivery)
        off()
        offInterrupt()
        signal?.removeEventListener('abort', onAbort)
        if (stopped) reject(stopped)
        else resolve(m)
      }
    })

  return {
    async health() {
      const mem = process.memoryUsage()
      return {
        ok: true,
        version: ctx.version,
        now: engine.clockView().now,
        store: ctx.storeInfo?.() ?? {},
        sizes: engine.sizes(),
        memory_mib: { rss: Math.round(mem.rss / 2 ** 20), heap_used: Math.round(mem.heapUsed / 2 ** 20) },
      }
    },
    async scenarios() {
      return scenarioList(engine)
    },
    async otp(which, opts = {}) {
      const S = schemas ?? (await loadSchemas())
      const target = which && typeof which === 'object' ? which : { msisdn: which }
      const { wait = 0, ...q } = check(S.OtpQuery, { ...target, wait: opts.wait })
      let found = engine.otpLookup(q)
      // A late SMS whose time came on a running clock before the events due ran: delivered now.
      if ('due' in found && found.due !== undefined && found.due <= engine.now()) {
        await engine.catchUp()
        found = engine.otpLookup(q)
      }
      if ('sms' in found) return otpView(found.sms)
      if ('unknown' in found) throw new SandboxError('VERIFICATION_NOT_FOUND', found.unknown)
      if (wait === 0 || !found.wait) throw new SandboxError('NO_OTP', found.missing)
      const got = await nextOtp(q, wait, opts.signal, found.due)
      if (got) return otpView(got)
      throw new SandboxError('NO_OTP', found.due === undefined ? `no OTP was sent to ${q.msisdn} within ${wait} s` : `${found.missing} (waited ${wait} s)`)
    },
    async sms(msisdn) {
      const S = schemas ?? (await loadSchemas())
      check(S.MsisdnQuery, { msisdn })
      return { msisdn, messages: engine.smsFor(msisdn).map(smsView) }
    },
    async messages(query = {}) {
      const S = schemas ?? (await loadSchemas())
      const { msisdn, limit = 200 } = check(S.MessagesQuery, query)
      const list = msisdn ? engine.smsFor(msisdn).slice(0, limit) : engine.recentSms(limit)
      return { messages: list.map(smsView) }
    },
    async mo(message) {
      const S = schemas ?? (await loadSchemas())
      return (await engine.mo(check(S.MoBody, message))) as MoAnswer
    },
    async subscriptions(filter = {}) {
      const S = schemas ?? (await loadSchemas())
      const f = check(S.SubscriptionFilter, filter)
      return { subscriptions: engine.listSubscriptions(f) as SubscriptionView[] }
    },
    async subscription(id) {
      await requestLog.sync?.()
      // The request log's entries about it (bounded: the whole log is read), oldest first in its timeline.
      const requests = aboutSubscription(requestLog.list(requestLog.capacity, 0), id).map((e) => ({
        at: parseTimestamp(e.sandbox_time),
        request_id: e.id,
        method: e.method,
        path: e.path,
        http_status: e.http_status,
        message: e.message,
        reason: e.reason,
      }))
      return engine.subscription(id, requests) as SubscriptionDetail
    },
    async cancel(id) {
      return (await engine.cancel(id)) as SubscriptionView
    },
    async now() {
      return engine.clockView()
    },
    async advance(by) {
      const S = schemas ?? (await loadSchemas())
      return engine.advance(check(S.AdvanceBody, { by }).by)
    },
    async setTime(to) {
      const S = schemas ?? (await loadSchemas())
      return engine.setTime(check(S.SetTimeBody, { to }).to)
    },
    rules: {
      async add(rule) {
        return engine.addRule(rule)
      },
      async remove(id) {
        await engine.deleteRule(id)
        return { deleted: 1 }
      },
      async list() {
        return engine.rules()
      },
      async clear() {
        return { deleted: await engine.deleteAllRules() }
      },
    },
    async world() {
      return engine.worldDocument() as WorldDocument
    },
    async worldSources() {
      return { world: engine.worldDocument() as WorldDocument, sources: engine.worldSources() }
    },
    async requests(opts = {}) {
      const S = schemas ?? (await loadSchemas())
      await requestLog.sync?.()
      const { limit = 100, since = 0, msisdn, subscription } = check(S.RequestsQuery, opts)
      if (subscription === undefined) return { capacity: requestLog.capacity, requests: requestLog.list(limit, since, msisdn) }
      // The entries that created it are found from the ones that name it: the whole request log is read (it is bounded).
      const about = aboutSubscription(requestLog.list(requestLog.capacity, since, msisdn), subscription)
      return { capacity: requestLog.capacity, requests: about.slice(0, limit) }
    },
    async coverage(opts = {}) {
      const S = schemas ?? (await loadSchemas())
      const { merchant, sessions } = check(S.CoverageQuery, opts)
      // Merging sessions is the server's (it holds them all); in process, merge with mergeCoverage.
      if (sessions !== undefined)
        throw new SandboxError('BAD_REQUEST', 'sessions: merged by GET /_sandbox/coverage?sessions=...; in process, merge the sessions with mergeCoverage(...)')
      return {
        coverage: engine.coverageReport(merchant).map((c) => ({
          ...c,
          since: formatTimestamp(c.since),
          // An example the request log no longer holds (dropped, or before a restart) reads as null.
          findings: c.findings.map((f) => ({ ...f, example: f.example !== null && requestLog.holds(f.example) ? f.example : null })),
        })),
      }
    },
    async reset(opts = {}) {
      const S = schemas ?? (await loadSchemas())
      const { clock, frozen, seed } = check(S.ResetBody, opts)
      let start: { at: number; frozen?: boolean } | undefined
      if (clock !== undefined) {
        const problem = timeProblem(clock)
        if (problem) throw new SandboxError('BAD_TIME', `clock: ${problem}`)
        const at = parseTimestamp(clock)
        start = { at, frozen }
      }
      await engine.reset(start, seed)
      requestLog.clear()
      return { ok: true, clock: engine.clockView(), seed: seedOf(engine.state) }
    },
  }
}
