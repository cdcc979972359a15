/**
 * The domain engine: the merchant operations (init, verify, status), the carrier side (MO messages,
 * consent, renewals, cancellations) and the sandbox clock. Pure TypeScript: no HTTP, no files; the
 * real clock, randomness and persistence are injected. Every operation runs synchronously against
 * the in-memory state inside one transaction (`EngineContext.transaction`), then waits until its
 * changes are durable.
 *
 * This class only wires the parts, each in its own file: the clock and its events (`clock.ts`,
 * `events.ts`), the flows (`merchant-flow.ts`, `mo-flow.ts`, `consent-flow.ts`, activation in
 * `subscriptions.ts`), renewals and retries (`renewals.ts`), inboxes (`inbox.ts`), read views
 * (`views.ts`), runtime rules (`runtime-rules.ts`) and seeding (`seeding.ts`).
 */
import { catchUp, Clock, moveClock, startsItsClock, type ClockView } from './clock.js'
import { ConsentFlow, type ConsentAction, type ConsentResult, type ConsentView } from './consent-flow.js'
import { EngineContext, type Committed, type EngineOptions } from './context.js'
import { Coverage, COVERAGE_SINCE, type CoverageReport } from './coverage.js'
import { SandboxError } from './errors.js'
import type { ClockMove } from './events.js'
import { Inbox } from './inbox.js'
import { MerchantFlow, type InitInput, type StatusInput, type VerifyInput } from './merchant-flow.js'
import { MoFlow, type MoInput, type MoResult } from './mo-flow.js'
import type { Outcome } from './outcomes.js'
import type { OtpLookup } from './otp-sms.js'
import { Renewals } from './renewals.js'
import { RuntimeRules } from './runtime-rules.js'
import type { RuleInForce } from './ruleset.js'
import { seed, type SeedOptions, type SeedPlan } from './seeding.js'
import type { Change, RuntimeRuleRecord, SmsRecord, State } from './state.js'
import type { Tx } from './tx.js'
import { Subscriptions } from './subscriptions.js'
import { SubscriptionViews, type SubscriptionDetail, type SubscriptionFilter, type SubscriptionView } from './views.js'
import type { RequestMention } from './timeline.js'
import type { WorldSources } from './layering.js'
import { worldDocument, type WorldDocument } from './world-doc.js'
import type { Carrier, Merchant, WorldIndex } from './world.js'

export type { SandboxEvent } from './events.js'
export type { RuleInForce } from './ruleset.js'
export type { WorldDocument } from './world-doc.js'
export type { WorldSources } from './layering.js'
export type { ClockView, ClockStart } from './clock.js'
export type { Committed, EngineOptions } from './context.js'
export type { ConsentAction, ConsentResult, ConsentView } from './consent-flow.js'
export type { InitInput, StatusInput, VerifyInput } from './merchant-flow.js'
export type { MoInput, MoResult } from './mo-flow.js'
export type { AnsweredCall, CoverageReport, CoverageOutcome, FindingCode } from './coverage.js'
export { FINDING_ADVICE, FINDING_CODES } from './coverage.js'
export type { SeedOptions, SeedPlan } from './seeding.js'
export type { ChargeView, StatusPayload, SubscriptionFilter, SubscriptionView } from './views.js'
export { SandboxError } from './errors.js'
export { appendQuery } from './consent-flow.js'
export { checkSeed, clashProblem, seedClash } from './seeding.js'
export { describePeriod } from './time.js'

/** A merchant API call, for `perform`. */
export type MerchantCall = { op: 'init'; input: InitInput; baseUrl: string } | { op: 'verify'; input: VerifyInput } | { op: 'status'; input: StatusInput }

/** Sizes of what the engine keeps. */
export interface EngineSizes {
  subscriptions: number
  verifications: number
  sms: number
  rules: number
  queue: number
}

export class Engine {
  readonly state: State
  /** What each merchant's traffic exercised and did wrong (counted where outcomes are decided). */
  readonly coverage: Coverage
  private readonly ctx: EngineContext
  private readonly inbox: Inbox
  private readonly views: SubscriptionViews
  private readonly subscriptions: Subscriptions
  private readonly merchantFlow: MerchantFlow
  private readonly moFlow: MoFlow
  private readonly consentFlow: ConsentFlow
  private readonly runtimeRules: RuntimeRules

  constructor(opts: EngineOptions) {
    const ctx = (this.ctx = new EngineContext(opts))
    this.state = ctx.state
    this.inbox = new Inbox(ctx)
    this.coverage = ctx.coverage = new Coverage(ctx)
    this.views = new SubscriptionViews(ctx)
    this.subscriptions = new Subscriptions(ctx, this.inbox)
    this.merchantFlow = new MerchantFlow(ctx, this.inbox, this.subscriptions, this.views)
    this.moFlow = new MoFlow(ctx, this.inbox, this.subscriptions)
    this.consentFlow = new ConsentFlow(ctx, this.subscriptions)
    this.runtimeRules = new RuntimeRules(ctx)
    const renewals = new Renewals(ctx, this.subscriptions, this.inbox, this.merchantFlow.otpSms)
    ctx.runDueWith((tx, to, log, budget) => renewals.runDue(tx, to, log, budget))
    // A shared store: the messages other processes sent reach this one's listeners (an OTP long poll).
    if (opts.gate)
      ctx.onTaken = (changes) => {
        for (const c of changes) if ('c' in c && c.c === 'sms' && c.v) this.inbox.heard(c.v as SmsRecord)
      }
    const start = opts.clockStart
    // Checked again as the write runs: with a shared store another process may have written first.
    if (start && startsItsClock(ctx.state)) void ctx.write((tx) => startsItsClock(ctx.state) && ctx.clock.start(tx, start), false).catch(() => {})
  }

  get world(): WorldIndex {
    return this.ctx.world
  }

  // ---------------------------------------------------------------- clock

  /** The sandbox time now, in epoch ms. */
  now(): number {
    return this.ctx.clock.now()
  }

  clockView(): ClockView {
    return this.ctx.clock.view(this.nextEventAt())
  }

  /** Moves the clock forward by a duration and runs every event that falls due, in time order. */
  async advance(by: string): Promise<ClockMove<ClockView>> {
    const target = Clock.byDuration(by)
    return moveClock(this.ctx, target)
  }

  /** Sets the clock to a time (forward only) and runs every event that falls due. */
  async setTime(to: string): Promise<ClockMove<ClockView>> {
    const target = Clock.toTime(to)
    return moveClock(this.ctx, target)
  }

  /** Resolves once no clock move runs; null when none runs (merchant calls wait for it; reads need not). */
  get busy(): Promise<void> | null {
    return this.ctx.busy
  }

  /** Resolves once no clock move runs (one queued meanwhile included). */
  idle(): Promise<void> {
    return this.ctx.idle()
  }

  /**
   * The host shuts down: a running clock move stops at its next batch boundary (503 SHUTTING_DOWN), and
   * so does any later one; whoever waits on this engine (an OTP long poll) is told, through `onInterrupt`.
   */
  interrupt(): void {
    this.ctx.interrupted = true
    for (const listener of [...this.interruptListeners]) listener()
  }

  /** Whether the host shuts down (`interrupt`). */
  get interrupted(): boolean {
    return this.ctx.interrupted
  }

  /** Calls `listener` when the host shuts down (see `interrupted` for whether it has); returns the unsubscribe function. */
  onInterrupt(listener: () => void): () => void {
    this.interruptListeners.add(listener)
    return () => this.interruptListeners.delete(listener)
  }
  private readonly interruptListeners = new Set<() => void>()

  /**
   * With a store several processes share: resolves once this engine may run a transaction (its turn,
   * the state up to date); `perform` then runs in it. Null when the engine owns its state alone (the
   * hot path reads one field).
   */
  turn(call?: MerchantCall): Promise<void> | null {
    if (!this.ctx.gate) return null
    // A Status writes nothing unless an event falls due or a counting rule decides: it needs the lock only then.
    return call?.op === 'status' ? this.ctx.enterRead(call.input.subscription_id) : this.ctx.enterTurn()
  }

  /** With a store several processes share: the state gets what they wrote (before a read); its own soft changes are written. */
  async sync(): Promise<void> {
    if (!this.ctx.gate) return
    await this.ctx.softSettled()
    await this.ctx.sync()
  }

  /** Runs the events due by now; answers how many ran (`synced`: with a shared store, the state is known to be up to date). */
  async catchUp(opts: { synced?: boolean } = {}): Promise<number> {
    // A shared store: the soft counts waiting go now (the server's timer), and what others wrote comes in
    // (unless the caller knows nobody wrote since: then only the soft counts).
    if (this.ctx.gate) await (opts.synced ? this.ctx.softSettled() : this.sync())
    const mark = this.coverage.mark()
    const ran = await catchUp(this.ctx)
    // Findings of a catch-up no call asked for have no request log entry to point at.
    this.coverage.take(mark)
    return ran
  }

  /** When the next event falls due (sandbox time), or null. */
  nextEventAt(): number | null {
    return this.ctx.queue.nextAt()
  }

  // ---------------------------------------------------------------- merchant API

  /** The merchant behind an API key, if it is known and active. */
  authenticate(apiKey: string | undefined): Merchant | undefined {
    if (!apiKey) return undefined
    const m = this.ctx.world.merchantByKey(apiKey)
    return m && m.active ? m : undefined
  }

  /**
   * A merchant operation, run now. The HTTP layer answers as soon as `durable` resolves, or at once
   * when it is null (no write: a Status call never waits).
   */
  perform(merchant: Merchant, call: MerchantCall): Committed<Outcome> {
    const coverage = this.coverage
    const mark = coverage.mark()
    const done = this.ctx.transaction(this.operation(merchant, call))
    const raised = coverage.take(mark)
    if (raised) done.result.raised = raised
    return done
  }

  /** A merchant call as a transaction's function: the flow decides the outcome, and coverage counts it. */
  private operation(merchant: Merchant, call: MerchantCall): (tx: Tx, now: number) => Outcome {
    const { merchantFlow: flow, coverage } = this
    if (call.op === 'init')
      return (tx, now) => {
        const out = flow.init(tx, now, merchant, call.input, call.baseUrl)
        coverage.init(tx, now, merchant.id, out, call.input)
        return out
      }
    if (call.op === 'verify')
      return (tx, now) => {
        const before = this.state.verifs.get(call.input.verif_request_id)
        const out = flow.verify(tx, now, merchant, call.input)
        coverage.verify(tx, now, merchant.id, before, out)
        return out
      }
    return (tx, now) => {
      const out = flow.status(tx, merchant, call.input)
      coverage.status(now, merchant.id, call.input.subscription_id, out)
      return out
    }
  }

  init(merchant: Merchant, input: InitInput, ctx: { baseUrl: string }): Promise<Outcome> {
    return this.ctx.write(this.operation(merchant, { op: 'init', input, baseUrl: ctx.baseUrl }))
  }

  verify(merchant: Merchant, input: VerifyInput): Promise<Outcome> {
    return this.ctx.write(this.operation(merchant, { op: 'verify', input }))
  }

  status(merchant: Merchant, input: StatusInput): Promise<Outcome> {
    return this.ctx.write(this.operation(merchant, { op: 'status', input }))
  }

  /** Each merchant's coverage (`merchant`: that one's, else every merchant with traffic), for `GET /_sandbox/coverage`. */
  coverageReport(merchant?: string): CoverageReport[] {
    if (merchant !== undefined && !this.ctx.world.merchants.has(merchant)) throw new SandboxError('MERCHANT_NOT_FOUND', `no merchant ${merchant} in the world`)
    return (merchant !== undefined ? [merchant] : this.coverage.merchantsWithTraffic()).map((m) => this.coverage.report(m))
  }

  // ---------------------------------------------------------------- carrier side

  /** A mobile-originated SMS from a handset to a short code: a PSMS keyword, STOP, or anything else. */
  mo(input: MoInput): Promise<MoResult> {
    const carrier = this.moFlow.carrier(input.msisdn)
    return this.ctx.write((tx, now) => this.moFlow.receive(tx, now, carrier, input))
  }

  /** The carrier that owns an MSISDN in any country of the world. */
  carrierOf(msisdn: string): Carrier | undefined {
    return this.ctx.world.carrierOf(msisdn)
  }

  /** What the consent page shows, or undefined when there is no such consent request. */
  consentView(id: string): ConsentView | undefined {
    return this.consentFlow.view(id, this.now())
  }

  /** Approve or deny a consent link. Answers where to send the browser (the service's return URL + query). */
  consent(id: string, action: ConsentAction): Promise<ConsentResult> {
    return this.ctx.write((tx, now) => this.consentFlow.decide(tx, now, id, action))
  }

  /** Carrier-side cancellation. */
  cancel(id: string): Promise<SubscriptionView> {
    return this.ctx.write((tx, now) => {
      const done = this.subscriptions.cancelByCarrier(tx, now, this.subscriptions.cancelable(id), 'cancel')
      this.coverage.count(tx, done.merchant, 'carrier.canceled', now)
      this.coverage.changed(tx, done, now)
      return this.views.view(done)
    })
  }

  // ---------------------------------------------------------------- subscriptions and inboxes (read)

  listSubscriptions(filter: SubscriptionFilter): SubscriptionView[] {
    return this.views.list(filter)
  }

  /** One subscription with its timeline (`requests`: the request log's entries about it, which the engine does not keep). */
  subscription(id: string, requests: readonly RequestMention[] = []): SubscriptionDetail {
    return this.views.detail(id, (msisdn) => this.smsFor(msisdn), requests)
  }

  /** The handset's messages, newest first (with the carrier's charge notices). */
  readonly smsFor = (msisdn: string): SmsRecord[] => this.inbox.messagesOf(msisdn)

  /** Every handset's latest messages, newest first (with the charge notices), at most `limit`. */
  readonly recentSms = (limit: number): SmsRecord[] => this.inbox.recent(limit)

  /** How many messages the console's Messages page lists (`recentSms` with no limit). */
  readonly smsCount = (): number => this.inbox.count()

  /** The latest OTP SMS of an MSISDN, or undefined. */
  readonly latestOtp = (msisdn: string): SmsRecord | undefined => this.inbox.latestOtp(msisdn)

  /** An OTP SMS (an MSISDN's latest Init's, or a verification request's), or why there is none: `OtpSms.lookup`. */
  otpLookup(q: { msisdn?: string; verif_request_id?: string }): OtpLookup {
    return this.merchantFlow.otpSms.lookup(q)
  }

  /** Calls `listener` for every SMS sent from now on; returns the unsubscribe function. */
  onSms(listener: (sms: SmsRecord) => void): () => void {
    this.smsListeners++
    const off = this.inbox.listen(listener)
    return () => {
      this.smsListeners--
      off()
    }
  }
  private smsListeners = 0

  /** Whether anyone waits for what happens (the console's stream, an OTP long poll): a shared store tells this engine at once. */
  get watched(): boolean {
    return this.smsListeners > 0 || this.ctx.listened
  }

  /** Calls `listener` with what every transaction changed, as it ends (the console's live stream); returns the unsubscribe function. */
  onChange(listener: (changes: readonly Change[]) => void): () => void {
    return this.ctx.listen(listener)
  }

  /** Sizes of what the engine keeps, for health and the benchmark. */
  sizes(): EngineSizes {
    const { state, queue } = this.ctx
    return { subscriptions: state.subs.size, verifications: state.verifs.size, sms: state.sms.size, rules: state.rules.size, queue: queue.size }
  }

  // ---------------------------------------------------------------- rules

  /**
   * Every rule in force in the order consulted (`rules`, each with its source and `used`), and the
   * runtime rule records as added (`runtime`, oldest first); the stored ones left out, with why (`left_out`).
   */
  rules(): { rules: RuleInForce[]; runtime: RuntimeRuleRecord[]; left_out?: { id: string; problem: string }[] } {
    const { ruleset } = this.ctx
    return { rules: ruleset.list(), runtime: ruleset.runtimeRecords(), ...(ruleset.disabled.length ? { left_out: [...ruleset.disabled] } : {}) }
  }

  /** Stored runtime rules left out of force, each with why (a regex costlier than a rule may be, or no room in the host's regex pool). */
  readonly disabledRules = (): readonly { id: string; problem: string }[] => this.ctx.ruleset.disabled

  /** Calls `listener` with the stored rules a later change leaves out (another replica's rule past this one's regex budget). */
  onRulesLeftOut(listener: (rules: readonly { id: string; problem: string }[]) => void): void {
    this.ctx.ruleset.onLeftOut = listener
  }

  /** The session is closed: what it holds in the host's regex pool goes back. */
  release(): void {
    this.ctx.ruleset.release()
  }

  /**
   * Adds a runtime rule, checked by the one rule validation (schema, step/effect table, names in
   * `match`): a SandboxError 400 BAD_RULE names the field. See `runtime-rules.ts`.
   */
  addRule(input: unknown): Promise<RuntimeRuleRecord> {
    return this.runtimeRules.add(input)
  }

  /**
   * The world as loaded, as one fixture document (`"extends": "none"`, API keys as their SHA-256,
   * rules in the order consulted, runtime rules not included): loaded alone it gives the same world.
   */
  worldDocument(): WorldDocument {
    return worldDocument(this.ctx.world.world)
  }

  /** Where the world's records and rules came from (the files), when the loader said. */
  worldSources(): WorldSources | null {
    return this.ctx.sources ?? null
  }

  deleteRule(id: string): Promise<void> {
    return this.runtimeRules.remove(id)
  }

  deleteAllRules(): Promise<number> {
    return this.runtimeRules.clear()
  }

  // ---------------------------------------------------------------- seeding, reset

  /** Creates `count` ACTIVE subscriptions at once (no SMS, no flow); answers the ids. See `seeding.ts` (and its `checked`). */
  seed(count: number, o: SeedOptions = {}, checked?: SeedPlan): Promise<string[]> {
    return seed(this.ctx, count, o, checked)
  }

  /** Back to the loaded fixtures: no subscriptions, messages, runtime rules; the clock as at start (or at `start`, earlier than now too); delays drawn from `seed`. */
  reset(start?: { at: number; frozen?: boolean }, seed?: number): Promise<void> {
    const { clock, clockStart, queue, ruleset } = this.ctx
    // A reset at a given time keeps the clock frozen or running as it is, unless told.
    const from = start ? { at: start.at, frozen: start.frozen ?? this.clockView().frozen } : clockStart
    this.coverage.clear()
    return this.ctx.write((tx) => {
      tx.reset()
      this.merchantFlow.reseed(tx, seed)
      if (from) clock.start(tx, from)
      // Coverage counts start over, from the time the sandbox starts over at.
      tx.put('meta', COVERAGE_SINCE, clock.now())
      queue.rebuild()
      ruleset.reload()
      ruleset.resetCounts()
    }, false)
  }
}
