/**
 * Coverage: what each merchant's traffic exercised (outcome counts) and what it did that a real
 * integration must not (findings), per session since its last reset. Counts live in the state's
 * `counters` (so they are stored, survive restarts and are not bounded by the request journal):
 * `cov|ID|MERCHANT` for an outcome or a finding, `unrec|SUB` for a subscription the merchant has not
 * reconciled yet. A write counts inside its own transaction; a read (Status) and what only the HTTP
 * layer sees (a 400, a client gone) count through `EngineContext.soft`, which nobody waits for.
 * Examples (journal ids) live in memory: the request journal is not stored either.
 */
import { isGatewayStatus } from './wire.js'
import type { EngineContext } from './context.js'
import type { Outcome } from './outcomes.js'
import type { SubscriptionRecord, VerificationRecord } from './state.js'
import type { Tx } from './tx.js'

/** Every outcome, in the order answers list them. */
export const COVERAGE_OUTCOMES = [
  'init.otp',
  'init.psms',
  'init.redirect',
  'init.INVALID_MSISDN',
  'init.INVALID_MSISDN_LANDLINE',
  'init.CARRIER_NOT_SUPPORTED',
  'init.FAILED_INIT_SUB',
  'init.NOT_ALLOWED_CHANNEL',
  'init.BLACKLISTED',
  'init.BARRED',
  'init.NOT_ELIGIBLE',
  'init.INVALID_USER',
  'init.ALREADY_SUBSCRIBED',
  'init.ERROR',
  'init.ERROR_500',
  'init.fault',
  'init.gateway',
  'verify.SUCCESS',
  'verify.INVALID_PIN',
  'verify.PIN_EXPIRED',
  'verify.MAX_PIN_RETRIES',
  'verify.INSUFFICIENT_FUNDS',
  'verify.BLACKLISTED',
  'verify.BARRED',
  'verify.NOT_ELIGIBLE',
  'verify.INVALID_USER',
  'verify.ALREADY_SUBSCRIBED',
  'verify.SPENDING_LIMIT_REACHED',
  'verify.TRX_COUNT_REACHED',
  'verify.TRX_LIMIT_EXCEEDED',
  'verify.ERROR',
  'verify.ERROR_500',
  'verify.fault',
  'verify.gateway',
  'status.ACTIVE',
  'status.CANCELED',
  'status.EXPIRED',
  'status.SUBSCRIPTION_NOT_FOUND',
  'status.fault',
  'status.gateway',
  'mo.subscribed',
  'mo.charge_failed',
  'mo.stop',
  'consent.approved',
  'consent.denied',
  'consent.charge_failed',
  'renewal.succeeded',
  'renewal.failed',
  'retry.succeeded',
  'carrier.canceled',
  'client.gone',
] as const
export type CoverageOutcome = (typeof COVERAGE_OUTCOMES)[number]

/** Every finding with its advice (one sentence: what to do instead), in the order answers list them. */
export const FINDING_ADVICE = {
  LOST_ACTIVATION:
    'A subscription was activated while your client had gone: after a Verify that timed out, look the MSISDN up (Status of the subscriptions you know, or your own records) instead of assuming it failed.',
  VERIFY_AFTER_LOCKOUT: 'After MAX_PIN_RETRIES or PIN_EXPIRED, start over with a new Init instead of sending Verify again for the same verif_request_id.',
  INVALID_REQUEST: 'Validate the body before sending: JSON with Content-Type application/json and every field of the spec, as a string.',
  AUTH_FAILURE: "Call from an address on the merchant's allowlist with the key of an active merchant (check its status and your egress IP).",
  FAST_RETRY: 'Back off before retrying a call that answered HTTP 500 or above: wait at least a second, doubling the wait on each retry.',
  INIT_WHILE_ACTIVE: 'Check with Status (or your records) whether the MSISDN holds an ACTIVE subscription before starting another Init.',
  UNRECONCILED:
    'Call Status for a subscription after it changes outside your calls (PSMS MO, consent, STOP, renewal failure, carrier cancellation): there are no callbacks.',
} as const
export type FindingCode = keyof typeof FINDING_ADVICE
export const FINDING_CODES = Object.keys(FINDING_ADVICE) as FindingCode[]

/** Counter keys: `cov|ID|MERCHANT` (ids hold no `|`), `unrec|SUB`. */
const COV = 'cov|'
const UNREC = 'unrec|'
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
  outcomes: { id: CoverageOutcome; count: number }[]
  /** Journal ids as examples; the caller says which the journal still holds. */
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
  /** The body as received, or null (none read). */
  body: string | null
  /** Wall times (epoch ms): when the request came, when it was answered. */
  sentAt: number
  answeredAt: number
}

export class Coverage {
  /** merchant|code -> the journal id of the latest occurrence. */
  private readonly examples = new Map<string, number>()
  /** Findings raised and not yet given their journal entry (merchant|code). */
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

  count(tx: Tx | null, merchant: string, id: CoverageOutcome, now: number): void {
    this.add(tx, merchant, id, now)
  }

  raise(tx: Tx | null, merchant: string, code: FindingCode, now: number): void {
    if (code !== 'UNRECONCILED') this.add(tx, merchant, code, now)
    this.raised.push(merchant + '|' + code)
  }

  // ------------------------------------------------------------ where the engine decides

  /** An Init's answer. */
  init(tx: Tx, now: number, merchant: string, out: Outcome): void {
    if (this.wire(tx, now, merchant, 'init', out)) return
    if (out.code === 'SUCCESS') {
      const p = out.payload!
      this.count(tx, merchant, p.verif_request_id ? 'init.otp' : p.redirect_url ? 'init.redirect' : 'init.psms', now)
      return
    }
    const id = out.code === 'SERVER_ERROR' ? 'init.ERROR_500' : `init.${out.code}`
    if (isOutcome(id)) this.count(tx, merchant, id, now)
    if (out.code === 'ALREADY_SUBSCRIBED') this.raise(tx, merchant, 'INIT_WHILE_ACTIVE', now)
  }

  /**
   * A Verify's answer. `before` is the verification as it was (a Verify for one that had answered
   * MAX_PIN_RETRIES or PIN_EXPIRED is a finding); one that answers either is marked so.
   */
  verify(tx: Tx, now: number, merchant: string, before: VerificationRecord | undefined, out: Outcome): void {
    const id = out.code === 'SUCCESS' ? 'verify.SUCCESS' : out.code === 'SERVER_ERROR' ? 'verify.ERROR_500' : `verify.${out.code}`
    if (!this.wire(tx, now, merchant, 'verify', out) && isOutcome(id)) this.count(tx, merchant, id, now)
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
    if (out.code === 'SUBSCRIPTION_NOT_FOUND') return this.count(null, merchant, 'status.SUBSCRIPTION_NOT_FOUND', now)
    if (out.code !== 'SUCCESS') return
    const sub = this.ctx.state.subs.get(subscriptionId)
    if (!sub) return
    this.count(null, merchant, `status.${sub.status}`, now)
    const k = UNREC + sub.id
    if (this.ctx.state.counters.has(k)) this.ctx.soft('counters', k, toNull)
  }

  /**
   * An answer a rule replaced (wire.ts): a fault counts `op.fault`, a 429, 502, 503 or 504
   * `op.gateway`. True when the call did nothing (`before`): its own code is not counted.
   */
  private wire(tx: Tx | null, now: number, merchant: string, op: 'init' | 'verify' | 'status', out: Outcome): boolean {
    const w = out.wire
    if (!w) return false
    if (w.fault) this.count(tx, merchant, `${op}.fault`, now)
    else if (isGatewayStatus(w.http)) this.count(tx, merchant, `${op}.gateway`, now)
    else if (w.when === 'before') return false // HTTP 500: ERROR_500, as always
    return w.when === 'before'
  }

  /** A subscription changed outside the merchant's calls (MO, consent, STOP, renewal failure, carrier): unreconciled until its next Status. */
  changed(tx: Tx, sub: SubscriptionRecord, now: number): void {
    const k = UNREC + sub.id
    if (!this.ctx.state.counters.has(k)) tx.put('counters', k, 1)
    this.raise(tx, sub.merchant, 'UNRECONCILED', now)
  }

  // ------------------------------------------------------------ what only the HTTP layer sees

  /** Where the list of raised findings stands (before a transaction). */
  mark(): number {
    return this.raised.length
  }

  /** The findings raised since `mark` (a merchant call's own, given its journal entry later), taken off the list. */
  take(mark: number): string[] | undefined {
    return this.raised.length > mark ? this.raised.splice(mark) : undefined
  }

  /**
   * A merchant request answered (or its client gone); `journalId` its journal entry, `raised` what
   * its transaction raised (`take`). Soft changes only.
   */
  answered(merchant: string, call: AnsweredCall, journalId: number | null, raised?: string[]): void {
    if (raised && journalId !== null) for (const k of raised) this.examples.set(k, journalId)
    // The usual answer (200, client there, no 5xx remembered) costs these few comparisons.
    if (call.http === 400) this.raise(null, merchant, 'INVALID_REQUEST', this.ctx.clock.now())
    else if (call.http === 401 || (call.http === 403 && call.code === 'UNAUTHORIZED')) this.raise(null, merchant, 'AUTH_FAILURE', this.ctx.clock.now())
    if (call.crashed && call.op !== 'status') this.count(null, merchant, call.op === 'init' ? 'init.ERROR_500' : 'verify.ERROR_500', this.ctx.clock.now())
    if (call.clientGone) {
      this.count(null, merchant, 'client.gone', this.ctx.clock.now())
      if (call.activated) this.raise(null, merchant, 'LOST_ACTIVATION', this.ctx.clock.now())
    }
    if (call.body !== null && (this.failures.size || call.http >= 500)) {
      const k = merchant + '|' + call.op + '|' + call.body
      const failedAt = this.failures.get(k)
      if (failedAt !== undefined) {
        this.failures.delete(k)
        if (call.sentAt >= failedAt && call.sentAt - failedAt < FAST_RETRY_MS) this.raise(null, merchant, 'FAST_RETRY', this.ctx.clock.now())
      }
      if (call.http >= 500) {
        if (this.failures.size >= MAX_REMEMBERED) this.failures.delete(this.failures.keys().next().value!)
        this.failures.set(k, call.answeredAt)
      }
    }
    this.exampleOf(journalId)
  }

  /** A consent approval that activated a subscription whose browser had gone before the answer. */
  consentLost(merchant: string, journalId: number | null): void {
    this.raise(null, merchant, 'LOST_ACTIVATION', this.ctx.clock.now())
    this.exampleOf(journalId)
  }

  /** The findings raised and not taken (by a control call, a consent) get this journal entry as their example (none: dropped). */
  exampleOf(journalId: number | null): void {
    if (!this.raised.length) return
    if (journalId !== null) for (const k of this.raised) this.examples.set(k, journalId)
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

  report(merchant: string): CoverageReport {
    const { state } = this.ctx
    const outcomes = COVERAGE_OUTCOMES.map((id) => ({ id, count: state.counters.get(this.key(merchant, id)) ?? 0 }))
    const covered = outcomes.filter((o) => o.count > 0).length
    const total = outcomes.length
    let unreconciled = 0
    for (const k of state.counters.keys()) if (k.startsWith(UNREC) && state.subs.get(k.slice(UNREC.length))?.merchant === merchant) unreconciled++
    const findings: CoverageReport['findings'] = []
    for (const code of FINDING_CODES) {
      const count = code === 'UNRECONCILED' ? unreconciled : (state.counters.get(this.key(merchant, code)) ?? 0)
      if (count > 0) findings.push({ code, count, example: this.examples.get(merchant + '|' + code) ?? null, advice: FINDING_ADVICE[code] })
    }
    const since = (state.meta.get(COVERAGE_SINCE) as number | undefined) ?? this.ctx.clock.now()
    return { merchant, since, covered, total, percent: Math.floor((covered * 100) / total), outcomes, findings }
  }
}

const OUTCOME_SET = new Set<string>(COVERAGE_OUTCOMES)
function isOutcome(id: string): id is CoverageOutcome {
  return OUTCOME_SET.has(id)
}

/** Soft updates (see `EngineContext.soft`): one more, and deleted. */
const addOne = (n: unknown): number => ((n as number | undefined) ?? 0) + 1
const toNull = (): null => null
