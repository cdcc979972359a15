/**
 * Coverage: what each merchant's traffic exercised (outcome counts) and what it did that a real
 * integration must not (findings), per session since its last reset. Counts live in the state's
 * `counters` (so they are stored, survive restarts and are not bounded by the request log):
 * `cov|ID|MERCHANT` for an outcome or a finding, `unrec|SUB` for a subscription the merchant has not
 * reconciled yet. A write counts inside its own transaction; a read (Status) and what only the HTTP
 * layer sees (a 400, a client gone) count through `EngineContext.soft`, which nobody waits for.
 * Examples (request log ids) live in memory: the request log is not stored either.
 */
import { isGatewayStatus } from './wire.js'
import type { EngineContext } from './context.js'
import { CARRIER_CODES, type Outcome } from './outcomes.js'
import { answerId, CODED_OUTCOMES, countableIds, outcomesFor, type CoverageOutcome, type OutcomeWorld } from './coverage-outcomes.js'
import type { SubscriptionRecord, VerificationRecord } from './state.js'
import type { Tx } from './tx.js'

export type { CoverageOutcome } from './coverage-outcomes.js'

/** Every finding with its advice (one sentence: what to do instead), in the order answers list them. */
export const FINDING_ADVICE = {
  LOST_ACTIVATION:
    "The Verify (or consent) answer was lost after the carrier charged: the subscription is ACTIVE, and the merchant API cannot look a subscription up by MSISDN, so it gives no remedy. Keep your client's timeout above the carrier's slowest answer, and never retry an activation that timed out as if it failed.",
  VERIFY_AFTER_LOCKOUT: 'After MAX_PIN_RETRIES or PIN_EXPIRED, start over with a new Init instead of sending Verify again for the same verif_request_id.',
  INVALID_REQUEST: 'Validate the body before sending: JSON with Content-Type application/json and every field of the spec, as a string.',
  AUTH_FAILURE: "Call from an address on the merchant's allowlist with the key of an active merchant (check its status and your egress IP).",
  FAST_RETRY: 'Back off before retrying a call that answered HTTP 500 or above: wait at least a second, doubling the wait on each retry.',
  INIT_WHILE_ACTIVE:
    'Keep the subscription_id each Verify answered per MSISDN and service, and call Status for it before another Init; the merchant API cannot look a subscription up by MSISDN.',
  UNRECONCILED:
    'Call Status for a subscription you were given after it may change outside your calls (consent, STOP, renewal failure, carrier cancellation): there are no callbacks.',
} as const
export type FindingCode = keyof typeof FINDING_ADVICE
export const FINDING_CODES = Object.keys(FINDING_ADVICE) as FindingCode[]

/** Counter keys: `cov|ID|MERCHANT` (ids hold no `|`), `unrec|SUB`, `unseen|SUB` (an activation whose answer was lost). */
const COV = 'cov|'
const UNREC = 'unrec|'
const UNSEEN = 'unseen|'
/** Where the sandbox time the counts started is kept (meta). */
export const COVERAGE_SINCE = 'coverage.since'
/** A call sent again within this much wall time after a 5xx answer to it is a FAST_RETRY. */
const FAST_RETRY_MS = 1000
/** How many 5xx answers are remembered for FAST_RETRY (the oldest go first). */
const MAX_REMEMBERED = 1000

export interface CoverageReport {
  merchant: string
  since: number
  covered: number
  total: number
  percent: number
  /** `how`: on an outcome never seen, how to produce it in the world in force; `codes`: counts per carrier code. */
  outcomes: { id: CoverageOutcome; count: number; how?: string; codes?: Record<string, number> }[]
  /** Request log ids as examples; the caller says which the request log still holds. */
  findings: { code: FindingCode; count: number; example: number | null; advice: string }[]
}

/** What the HTTP layer saw of one merchant request, once answered (or its client gone). */
export interface AnsweredCall {
  op: 'init' | 'verify' | 'status'
  http: number
  /** The envelope's message code (UNAUTHORIZED, IP_NOT_ALLOWED...). */
  code: string
  /** Answered by the HTTP layer after a failure it did not expect (the engine's outcome was not sent). */
  crashed: boolean
  clientGone: boolean
  /** The call activated a subscription (Verify SUCCESS). */
  activated: boolean
  /** A rule replaced the answer (a fault, a gateway's page, a 500 after the call). */
  replaced: boolean
  /** The subscription an activating call made. */
  subscriptionId: string | null
  /** The body as received, or null (none read). */
  body: string | null
  /** A fault sent no status line (reset, close, garbage, hang): the client got no answer to back off from. */
  noStatus?: boolean
  /** Wall times (epoch ms): when the request came, when it was answered. */
  sentAt: number
  answeredAt: number
}

export class Coverage {
  /** merchant|code -> the request log id of the latest occurrence. */
  private readonly examples = new Map<string, number>()
  /** Findings raised and not yet given their request log entry (merchant|code). */
  private raised: string[] = []
  /** merchant|op|body -> wall time of its latest 5xx answer. */
  private readonly failures = new Map<string, number>()
  /** Counter keys per merchant and id, made once (`cov|` + id + `|` + merchant). */
  private readonly keys = new Map<string, Map<string, string>>()

  constructor(private readonly ctx: EngineContext) {}

  private key(merchant: string, id: string): string {
    let m = this.keys.get(merchant)
    if (!m) this.keys.set(merchant, (m = new Map()))
    let k = m.get(id)
    if (k === undefined) m.set(id, (k = COV + id + '|' + merchant))
    return k
  }

  /** Adds one to an outcome or finding: in `tx`, or (null) as a soft change nobody waits for. */
  private add(tx: Tx | null, merchant: string, id: string, now: number): void {
    const { state } = this.ctx
    const k = this.key(merchant, id)
    if (tx) {
      tx.put('counters', k, (state.counters.get(k) ?? 0) + 1)
      if (!state.meta.has(COVERAGE_SINCE)) tx.put('meta', COVERAGE_SINCE, now)
    } else {
      this.ctx.soft('counters', k, addOne)
      if (!state.meta.has(COVERAGE_SINCE)) this.ctx.soft('meta', COVERAGE_SINCE, (since) => since ?? now)
    }
  }

  /** One more of an outcome; `code`: the carrier code it failed with (counted in `codes` too). */
  count(tx: Tx | null, merchant: string, id: CoverageOutcome, now: number, code?: string): void {
    this.add(tx, merchant, id, now)
    if (code !== undefined && CODED_OUTCOMES.has(id)) this.add(tx, merchant, id + ':' + code, now)
  }

  /** Counts an operation's answer under the id the outcome tables give it (none: not counted). */
  private answer(tx: Tx | null, merchant: string, op: 'init' | 'verify' | 'status', code: Outcome['code'], now: number, part?: string): void {
    const id = answerId(op, code, part)
    if (id !== undefined) this.add(tx, merchant, id, now)
  }

  raise(tx: Tx | null, merchant: string, code: FindingCode, now: number): void {
    if (code !== 'UNRECONCILED') this.add(tx, merchant, code, now)
    this.raised.push(merchant + '|' + code)
  }

  // ------------------------------------------------------------ where the engine decides

  /** An Init's answer; `input` what it asked for (whose subscription an ALREADY_SUBSCRIBED is). */
  init(tx: Tx, now: number, merchant: string, out: Outcome, input?: { msisdn: string; service_code: string }): void {
    if (this.wire(tx, now, merchant, 'init', out)) return
    if (out.code === 'SUCCESS') {
      const p = out.payload!
      this.count(tx, merchant, p.verif_request_id ? 'init.otp' : p.redirect_url ? 'init.redirect' : 'init.psms', now)
      return
    }
    this.answer(tx, merchant, 'init', out.code, now)
    if (out.code === 'ALREADY_SUBSCRIBED' && this.activeGiven(merchant, input)) this.raise(tx, merchant, 'INIT_WHILE_ACTIVE', now)
  }

  /**
   * Whether the merchant API gave the merchant this subscription's id: not for one an MO made, nor for
   * one whose activation's answer was lost. No Status can be asked for it, so no finding is raised on it.
   */
  private given(sub: SubscriptionRecord): boolean {
    return sub.flow !== 'psms' && !this.ctx.state.counters.has(UNSEEN + sub.id)
  }

  /** Whether the ACTIVE subscription an Init met is one the merchant was given (unknown: yes). */
  private activeGiven(merchant: string, input: { msisdn: string; service_code: string } | undefined): boolean {
    if (!input) return true
    const { state } = this.ctx
    for (const id of state.subsByMsisdn.get(input.msisdn) ?? []) {
      const s = state.subs.get(id)
      if (s && s.status === 'ACTIVE' && s.merchant === merchant && s.service === input.service_code) return this.given(s)
    }
    return true
  }

  /** An activation whose answer the merchant never got: its id was never given (a soft change). */
  private unseen(subscriptionId: string): void {
    this.ctx.soft('counters', UNSEEN + subscriptionId, () => 1)
    if (this.ctx.state.counters.has(UNREC + subscriptionId)) this.ctx.soft('counters', UNREC + subscriptionId, toNull)
  }

  /**
   * A Verify's answer. `before` is the verification as it was (a Verify for one that had answered
   * MAX_PIN_RETRIES or PIN_EXPIRED is a finding); one that answers either is marked so.
   */
  verify(tx: Tx, now: number, merchant: string, before: VerificationRecord | undefined, out: Outcome): void {
    if (!this.wire(tx, now, merchant, 'verify', out)) this.answer(tx, merchant, 'verify', out.code, now, 'SUCCESS')
    if (!before || before.merchant !== merchant) return
    if (before.locked_out) this.raise(tx, merchant, 'VERIFY_AFTER_LOCKOUT', now)
    else if (out.code === 'MAX_PIN_RETRIES' || out.code === 'PIN_EXPIRED') {
      const v = this.ctx.state.verifs.get(before.id)
      if (v) tx.put('verifs', v.id, { ...v, locked_out: true })
    }
  }

  /** A Status's answer (a read: soft); a subscription answered is reconciled. */
  status(now: number, merchant: string, subscriptionId: string, out: Outcome): void {
    if (this.wire(null, now, merchant, 'status', out)) return
    if (out.code !== 'SUCCESS') return this.answer(null, merchant, 'status', out.code, now)
    const sub = this.ctx.state.subs.get(subscriptionId)
    if (!sub) return
    this.answer(null, merchant, 'status', 'SUCCESS', now, sub.status)
    const k = UNREC + sub.id
    if (this.ctx.state.counters.has(k)) this.ctx.soft('counters', k, toNull)
  }

  /**
   * An answer a rule replaced (wire.ts): a fault counts `op.fault`, a 429, 502, 503 or 504
   * `op.gateway`, a 500 `after` the call `op.ERROR_500` (what the merchant got). True when the call
   * did nothing (`before`) and its answer was a fault or a gateway's: the 500 ERROR it cut was never
   * seen, so it is not counted. An `after` counts the call's own outcome too (false).
   */
  private wire(tx: Tx | null, now: number, merchant: string, op: 'init' | 'verify' | 'status', out: Outcome): boolean {
    const w = out.wire
    if (!w) return false
    if (w.fault) this.count(tx, merchant, `${op}.fault`, now)
    else if (isGatewayStatus(w.http)) this.count(tx, merchant, `${op}.gateway`, now)
    else if (w.when === 'after') this.count(tx, merchant, `${op}.ERROR_500`, now)
    else return false // HTTP 500 before: the call's own ERROR_500, as always
    return w.when === 'before'
  }

  /** A subscription changed outside the merchant's calls (MO, consent, STOP, renewal failure, carrier): unreconciled until its next Status. */
  changed(tx: Tx, sub: SubscriptionRecord, now: number): void {
    // An MO-made subscription, or one whose activation's answer was lost: no Status can clear it.
    if (!this.given(sub)) return
    const k = UNREC + sub.id
    if (!this.ctx.state.counters.has(k)) tx.put('counters', k, 1)
    this.raise(tx, sub.merchant, 'UNRECONCILED', now)
  }

  // ------------------------------------------------------------ what only the HTTP layer sees

  /** Where the list of raised findings stands (before a transaction). */
  mark(): number {
    return this.raised.length
  }

  /** The findings raised since `mark` (a merchant call's own, given its request log entry later), taken off the list. */
  take(mark: number): string[] | undefined {
    return this.raised.length > mark ? this.raised.splice(mark) : undefined
  }

  /**
   * A merchant request answered (or its client gone); `entryId` its request log entry, `raised` what
   * its transaction raised (`take`). Soft changes only.
   */
  answered(merchant: string, call: AnsweredCall, entryId: number | null, raised?: string[]): void {
    if (raised && entryId !== null) for (const k of raised) this.examples.set(k, entryId)
    // The usual answer (200, client there, no 5xx remembered) costs these few comparisons.
    const refused = call.http === 401 || (call.http === 403 && call.code === 'UNAUTHORIZED')
    if (call.http === 400 || call.http === 413) {
      this.raise(null, merchant, 'INVALID_REQUEST', this.ctx.clock.now())
      this.answer(null, merchant, call.op, 'BAD_REQUEST', this.ctx.clock.now())
    } else if (refused) {
      this.raise(null, merchant, 'AUTH_FAILURE', this.ctx.clock.now())
      this.answer(null, merchant, call.op, call.http === 401 ? 'UNAUTHORIZED' : 'IP_NOT_ALLOWED', this.ctx.clock.now())
    }
    if (call.crashed) this.answer(null, merchant, call.op, 'SERVER_ERROR', this.ctx.clock.now())
    if (call.clientGone) {
      this.count(null, merchant, 'client.gone', this.ctx.clock.now())
      // A rule's fault lost the answer, not the client's timeout: the activation is the test itself.
      if (call.activated && !call.replaced) this.lost(merchant, call.answeredAt - call.sentAt)
    }
    if (call.activated && call.subscriptionId !== null && (call.clientGone || call.replaced)) this.unseen(call.subscriptionId)
    // A retry is checked whatever its own answer; only an answer with a status of 500 or above is remembered.
    const failed = call.http >= 500 && !call.noStatus
    if (call.body !== null && (this.failures.size || failed)) {
      const k = merchant + '|' + call.op + '|' + call.body
      const failedAt = this.failures.get(k)
      if (failedAt !== undefined) {
        this.failures.delete(k)
        if (call.sentAt >= failedAt && call.sentAt - failedAt < FAST_RETRY_MS) this.raise(null, merchant, 'FAST_RETRY', this.ctx.clock.now())
      }
      if (failed) {
        if (this.failures.size >= MAX_REMEMBERED) this.failures.delete(this.failures.keys().next().value!)
        this.failures.set(k, call.answeredAt)
      }
    }
    this.exampleOf(entryId)
  }

  /** A consent approval that activated a subscription whose browser had gone before the answer. */
  consentLost(merchant: string, entryId: number | null, tookMs = 0, subscriptionId: string | null = null): void {
    this.lost(merchant, tookMs)
    if (subscriptionId !== null) this.unseen(subscriptionId)
    this.exampleOf(entryId)
  }

  /** A lost activation, and how long its answer took (the slowest is kept: the timeout the advice names). */
  private lost(merchant: string, tookMs: number): void {
    this.raise(null, merchant, 'LOST_ACTIVATION', this.ctx.clock.now())
    const ms = Math.max(0, Math.round(tookMs))
    this.ctx.soft('counters', this.key(merchant, SLOWEST), (n) => Math.max((n as number | undefined) ?? 0, ms))
  }

  /** The findings raised and not taken (by a control call, a consent) get this request log entry as their example (none: dropped). */
  exampleOf(entryId: number | null): void {
    if (!this.raised.length) return
    if (entryId !== null) for (const k of this.raised) this.examples.set(k, entryId)
    this.raised = []
  }

  /** Forgets what is kept in memory (a reset). */
  clear(): void {
    this.examples.clear()
    this.failures.clear()

    this.raised = []
  }

  // ------------------------------------------------------------ the answer

  /** Merchants with any count, in the world's order. */
  merchantsWithTraffic(): string[] {
    const seen = new Set<string>()
    const { state } = this.ctx
    for (const [k, n] of state.counters) {
      if (n <= 0) continue
      if (k.startsWith(COV)) seen.add(k.slice(k.indexOf('|', COV.length) + 1))
      else if (k.startsWith(UNREC)) {
        const sub = state.subs.get(k.slice(UNREC.length))
        if (sub) seen.add(sub.merchant)
      }
    }
    return [...this.ctx.world.merchants.keys()].filter((m) => seen.has(m))
  }

  /** The flows a merchant's services reach: through the provisioned carriers of each integration's country. */
  private flowsOf(merchant: string): OutcomeWorld['flows'] {
    const flows = new Map<'otp' | 'psms' | 'redirect', { service: string; carrier: string; prefix: string }>()
    const { world } = this.ctx.world
    for (const s of world.services) {
      if (s.merchant !== merchant) continue
      for (const i of s.integrations)
        for (const c of world.carriers) {
          if (c.country !== i.country || !c.provisioned || (i.carriers && !i.carriers.includes(c.code)) || flows.has(c.flow)) continue
          flows.set(c.flow, { service: s.code, carrier: c.code, prefix: c.prefixes[0]! })
        }
    }
    return flows
  }

  report(merchant: string): CoverageReport {
    const { state, world } = this.ctx
    const m = world.merchants.get(merchant)!
    const defs = outcomesFor({
      merchant: m,
      flows: this.flowsOf(merchant),
      rules: this.ctx.ruleset.list(),
      landlines: world.world.countries.some((c) => c.landlines.length > 0),
    })
    const counted = (id: string) => state.counters.get(this.key(merchant, id)) ?? 0
    // An outcome counted but not listed (the world changed since) is shown too: no count is hidden.
    const listed = new Set(defs.map((d) => d.id))
    for (const id of countableIds()) if (!listed.has(id) && counted(id) > 0) defs.push({ id, how: '' })
    const outcomes: CoverageReport['outcomes'] = defs.map(({ id, how }) => {
      const count = counted(id)
      const o: CoverageReport['outcomes'][number] = { id: id as CoverageOutcome, count }
      if (!count) o.how = how
      if (count && CODED_OUTCOMES.has(id)) {
        const codes: Record<string, number> = {}
        for (const c of CARRIER_CODES) if (counted(id + ':' + c)) codes[c] = counted(id + ':' + c)
        o.codes = codes
      }
      return o
    })
    const covered = outcomes.filter((o) => o.count > 0).length
    const total = outcomes.length
    let unreconciled = 0
    for (const k of state.counters.keys()) if (k.startsWith(UNREC) && state.subs.get(k.slice(UNREC.length))?.merchant === merchant) unreconciled++
    const findings: CoverageReport['findings'] = []
    for (const code of FINDING_CODES) {
      const count = code === 'UNRECONCILED' ? unreconciled : counted(code)
      let advice: string = FINDING_ADVICE[code]
      if (code === 'LOST_ACTIVATION' && counted(SLOWEST)) advice += ` The slowest lost answer here took ${counted(SLOWEST)} ms.`
      if (count > 0) findings.push({ code, count, example: this.examples.get(merchant + '|' + code) ?? null, advice })
    }
    const since = (state.meta.get(COVERAGE_SINCE) as number | undefined) ?? this.ctx.clock.now()
    const percent = total ? Math.floor((covered * 100) / total) : 100
    return { merchant, since, covered, total, percent, outcomes, findings }
  }
}

/** Not an outcome: the slowest lost activation's answer (ms), named in the advice. */
const SLOWEST = '+slowest_lost_ms'

/** Soft updates (see `EngineContext.soft`): one more, and deleted. */
const addOne = (n: unknown): number => ((n as number | undefined) ?? 0) + 1
const toNull = (): null => null
