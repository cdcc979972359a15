/**
 * The domain engine: the merchant operations (init, verify, status), the carrier side (MO messages,
 * consent, renewals, cancellations) and the sandbox clock. Pure TypeScript: no HTTP, no files; the
 * real clock, randomness and persistence are injected. Every operation runs synchronously against
 * the in-memory state inside one transaction, then waits until its changes are durable.
 */
import { randomUUID } from 'node:crypto'
import type { RuleEffect } from './world-schema.js'
import { RuleSchema } from './world-schema.js'
import { ClockMove, EventLog, EventSubject } from './events.js'
import { EventQueue, subEventAt } from './queue.js'
import { fail, ok, type CarrierCode, type Outcome, type OutcomeCode } from './outcomes.js'
import type { CompiledRule, RuleContext } from './rules.js'
import { RuleSet } from './ruleset.js'
import {
  State,
  Tx,
  type Change,
  type Charge,
  type ClockRecord,
  type RuntimeRuleRecord,
  type SmsRecord,
  type SubscriptionRecord,
  type VerificationRecord,
} from './state.js'
import { addDuration, formatTimestamp, isZeroDuration, LAST_TIME, parseDuration, parseTimestamp, type Duration } from './time.js'
import { WorldIndex, type Carrier, type Integration, type Merchant, type Service, type World } from './world.js'

export type { SandboxEvent } from './events.js'

export interface EngineOptions {
  world: World
  state?: State
  /** Persists a transaction's changes; resolves when they are durable. */
  persist?: (changes: Change[]) => Promise<void>
  /** Real time in epoch ms (tests inject a fake). */
  realNow?: () => number
  /** A number in [0, 1), for OTPs. */
  random?: () => number
  newId?: () => string
  /** Start the sandbox clock at this time, frozen or running, when the state has no clock yet (and on reset). */
  clockStart?: { at: number; frozen: boolean }
  /** How many SMS messages to keep per MSISDN (oldest are dropped). */
  smsPerMsisdn?: number
  /** How many SMS messages to keep in all (oldest are dropped). */
  maxSms?: number
  /** How many verification requests (OTP and consent) to keep; the oldest are dropped (a dropped id answers INVALID_PIN). */
  maxVerifications?: number
  /** How many charges each subscription's history keeps (oldest are dropped; `charge_count` counts all). */
  chargesPerSubscription?: number
}

export interface InitInput {
  msisdn: string
  service_code: string
  country_code: string
  language?: string | null
}
export interface VerifyInput {
  verif_request_id: string
  otp: string
  language?: string | null
}
export interface StatusInput {
  subscription_id: string
}

export class ControlError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

interface RenewalPlan {
  carrier: Carrier | undefined
  period: Duration
  price: { amount: string; currency: string } | null
  from: string
  vars: { service: string; price: string; code: string }
  renewalText: string
  renewalRules: readonly CompiledRule[]
  retryRules: readonly CompiledRule[]
  /** The constant part of the subscription's clock events. */
  subject: EventSubject
  /** The rules version the plan was made under. */
  rules: number
}

const CLOCK = 'clock'

export interface ClockView {
  now: string
  frozen: boolean
  offset_ms: number
  next_event_dt: string | null
}

export class Engine {
  readonly state: State
  private idx: WorldIndex
  private readonly ruleset: RuleSet
  private readonly persist: (changes: Change[]) => Promise<void>
  private readonly realNow: () => number
  private readonly random: () => number
  private readonly newId: () => string
  private readonly smsPerMsisdn: number
  private readonly chargesPerSubscription: number
  private readonly maxSms: number
  private readonly maxVerifications: number
  /** When each record next needs the clock; entries carry a subscription's renewal plan once found. */
  private readonly queue: EventQueue<RenewalPlan>
  private readonly smsListeners = new Set<(sms: SmsRecord) => void>()
  private readonly clockStart?: EngineOptions['clockStart']

  constructor(opts: EngineOptions) {
    this.state = opts.state ?? new State()
    this.persist = opts.persist ?? (async () => {})
    this.realNow = opts.realNow ?? Date.now
    this.random = opts.random ?? Math.random
    this.newId = opts.newId ?? randomUUID
    this.smsPerMsisdn = opts.smsPerMsisdn ?? 50
    this.chargesPerSubscription = Math.max(1, opts.chargesPerSubscription ?? 100)
    this.maxSms = Math.max(1, opts.maxSms ?? 50_000)
    this.maxVerifications = Math.max(1, opts.maxVerifications ?? 50_000)
    this.clockStart = opts.clockStart
    this.idx = new WorldIndex(opts.world)
    this.ruleset = new RuleSet(this.state, this.idx.world.rules)
    this.queue = new EventQueue(this.state)
    if (opts.clockStart && !this.state.meta.has(CLOCK)) {
      void this.settle(this.transact((tx) => this.writeClockStart(tx, opts.clockStart!))).catch(() => {})
    }
  }

  get world(): WorldIndex {
    return this.idx
  }

  // ---------------------------------------------------------------- clock

  private clock(): ClockRecord {
    return (this.state.meta.get(CLOCK) as ClockRecord | undefined) ?? { offset_ms: 0, frozen_at: null }
  }

  /** The sandbox time now, in epoch ms. */
  now(): number {
    const c = this.clock()
    return c.frozen_at ?? this.realNow() + c.offset_ms
  }

  clockView(): ClockView {
    const c = this.clock()
    const next = this.nextEventAt()
    return {
      now: formatTimestamp(this.now()),
      frozen: c.frozen_at !== null,
      offset_ms: c.offset_ms,
      next_event_dt: next === null ? null : formatTimestamp(next),
    }
  }

  private writeClockStart(tx: Tx, start: { at: number; frozen: boolean }): void {
    const rec: ClockRecord = start.frozen ? { offset_ms: 0, frozen_at: start.at } : { offset_ms: start.at - this.realNow(), frozen_at: null }
    tx.put('meta', CLOCK, rec)
  }

  /** Moves the clock from `from` (the sandbox time read at the start) to `to`, exactly. */
  private setClock(tx: Tx, from: number, to: number): void {
    const c = this.clock()
    const rec: ClockRecord = c.frozen_at !== null ? { ...c, frozen_at: to } : { ...c, offset_ms: c.offset_ms + (to - from) }
    tx.put('meta', CLOCK, rec)
  }

  /** Moves the clock forward by a duration and runs every event that falls due, in time order. */
  async advance(by: string): Promise<ClockMove<ClockView>> {
    const d = parseDuration(by)
    if (!d || isZeroDuration(d))
      throw new ControlError(400, 'BAD_DURATION', `"${by}" is not a duration: use ISO-8601 (P1M, PT6M, P1DT12H) or a short form (36h, 90m, 2d, 1w, 1mo)`)
    return this.moveClock((now) => addDuration(now, d))
  }

  /** Sets the clock to a time (forward only) and runs every event that falls due. */
  async setTime(to: string): Promise<ClockMove<ClockView>> {
    const t = parseTimestamp(to)
    if (Number.isNaN(t)) throw new ControlError(400, 'BAD_TIME', `"${to}" is not a time: use ISO-8601, e.g. 2026-01-31T00:00:00`)
    if (t < this.now())
      throw new ControlError(409, 'CLOCK_BACKWARDS', `the sandbox clock cannot move backwards (now ${formatTimestamp(this.now())}); use reset to start over`)
    return this.moveClock(() => t)
  }

  private async moveClock(target: (now: number) => number): Promise<ClockMove<ClockView>> {
    const log = await this.settle(
      this.transact((tx) => {
        const log = new EventLog()
        const from = this.now()
        const to = target(from)
        if (!(to <= LAST_TIME))
          throw new ControlError(400, 'CLOCK_LIMIT', `the sandbox clock cannot go past ${formatTimestamp(LAST_TIME)}: timestamps have four-digit years`)
        this.runDue(tx, to, log)
        this.setClock(tx, from, to)
        return log
      }),
    )
    return new ClockMove(this.clockView(), log)
  }

  /**
   * Runs the events due by now (called before every operation and by the server's timer); answers
   * how many ran (counted, not listed: nobody reads a catch-up's events).
   */
  async catchUp(): Promise<number> {
    const next = this.nextEventAt()
    if (next === null || next > this.now()) return 0
    const log = await this.settle(
      this.transact((tx) => {
        const log = new EventLog(0)
        this.runDue(tx, this.now(), log)
        return log
      }),
    )
    return log.omitted
  }

  /** When the next event falls due (sandbox time), or null. */
  nextEventAt(): number | null {
    return this.queue.nextAt()
  }

  // ---------------------------------------------------------------- transactions

  /**
   * Runs `fn` in one transaction, at once. `durable` resolves when its changes survive a crash; it
   * is null when nothing changed (a read answers without waiting). What was applied before an error
   * is persisted all the same: memory and disk never differ.
   */
  private transact<T>(fn: (tx: Tx) => T): { result: T; durable: Promise<void> | null } {
    const tx = new Tx(this.state)
    let result: T
    try {
      result = fn(tx)
    } catch (e) {
      if (tx.size) void this.persist(tx.changes).catch(() => {})
      throw e
    }
    return { result, durable: tx.size ? this.persist(tx.changes) : null }
  }

  /** A transaction that first runs the events due by now (every operation does). */
  private exec<T>(fn: (tx: Tx, now: number) => T): { result: T; durable: Promise<void> | null } {
    return this.transact((tx) => {
      const now = this.now()
      this.runDue(tx, now, null)
      return fn(tx, now)
    })
  }

  private async settle<T>(done: { result: T; durable: Promise<void> | null }): Promise<T> {
    if (done.durable) await done.durable
    return done.result
  }

  /** `exec`, then wait until it is durable. */
  private run<T>(fn: (tx: Tx, now: number) => T): Promise<T> {
    return this.settle(this.exec(fn))
  }

  /**
   * A merchant operation, run now. The HTTP layer answers as soon as `durable` resolves, or at once
   * when it is null (no write: a Status call never waits).
   */
  perform(
    merchant: Merchant,
    call: { op: 'init'; input: InitInput; baseUrl: string } | { op: 'verify'; input: VerifyInput } | { op: 'status'; input: StatusInput },
  ): { result: Outcome; durable: Promise<void> | null } {
    if (call.op === 'init') return this.exec((tx, now) => this.initTx(tx, now, merchant, call.input, { baseUrl: call.baseUrl }))
    if (call.op === 'verify') return this.exec((tx, now) => this.verifyTx(tx, now, merchant, call.input))
    return this.exec((tx) => this.statusTx(tx, merchant, call.input))
  }

  init(merchant: Merchant, input: InitInput, ctx: { baseUrl: string }): Promise<Outcome> {
    return this.run((tx, now) => this.initTx(tx, now, merchant, input, ctx))
  }

  verify(merchant: Merchant, input: VerifyInput): Promise<Outcome> {
    return this.run((tx, now) => this.verifyTx(tx, now, merchant, input))
  }

  status(merchant: Merchant, input: StatusInput): Promise<Outcome> {
    return this.run((tx) => this.statusTx(tx, merchant, input))
  }

  // ---------------------------------------------------------------- merchant API

  /** The merchant behind an API key, or why not (401 for a missing/unknown key and an inactive merchant). */
  authenticate(apiKey: string | undefined): Merchant | undefined {
    if (!apiKey) return undefined
    const m = this.idx.merchantByKey(apiKey)
    return m && m.active ? m : undefined
  }

  private initTx(tx: Tx, now: number, merchant: Merchant, input: InitInput, ctx: { baseUrl: string }): Outcome {
    const found = this.idx.integration(merchant.id, input.service_code, input.country_code)
    if (!found) return fail('MERCHANT_SERVICE_NOT_CONFIGURED')
    const { service, integration } = found
    const lookup = this.idx.lookup(input.country_code, input.msisdn)
    if (!lookup.ok) return fail(lookup.code)
    const carrier = lookup.carrier
    const base: Omit<RuleContext, 'step'> = { msisdn: input.msisdn, country: input.country_code, carrier: carrier.code, service: service.code }
    const delayMs = this.ruleset.delay(tx, base)
    if (!this.idx.carrierProvisioned(integration, carrier)) return fail('CARRIER_NOT_SUPPORTED', delayMs)
    const effect = this.ruleset.effect(tx, { ...base, step: 'init' })
    const failed = effectFailure(effect)
    if (failed) return fail(failed, delayMs)
    if (this.activeSubscription(input.msisdn, merchant.id, service.code)) return fail('ALREADY_SUBSCRIBED', delayMs)
    const language = this.idx.language(input.language ?? undefined, service)
    const payload = {
      verif_request_id: null as string | null,
      short_code: null as string | null,
      keyword: null as string | null,
      carrier_code: carrier.code,
      redirect_url: null as string | null,
    }
    if (carrier.flow === 'psms') {
      payload.short_code = carrier.short_code ?? null
      payload.keyword = service.keyword ?? null
      return ok(payload, delayMs)
    }
    const otpEffect = carrier.flow === 'otp' ? this.ruleset.effect(tx, { ...base, step: 'otp' }) : undefined
    const ttl = this.idx.period(carrier.flow === 'otp' ? carrier.otp.ttl : carrier.consent_ttl)
    const verif: VerificationRecord = {
      id: this.newId(),
      merchant: merchant.id,
      service: service.code,
      country: input.country_code,
      carrier: carrier.code,
      msisdn: input.msisdn,
      language,
      flow: carrier.flow,
      otp: carrier.flow === 'otp' ? (otpEffect?.otp ?? this.randomDigits(carrier.otp.length)) : null,
      created_at: now,
      expires_at: addDuration(now, ttl),
      attempts: 0,
      state: 'pending',
      subscription_id: null,
      result: null,
    }
    tx.put('verifs', verif.id, verif)
    this.queue.schedule('verif', verif.id, verif.expires_at)
    // Bounded memory: the oldest verification requests go first (Map order is creation order).
    while (this.state.verifs.size > this.maxVerifications) tx.del('verifs', this.state.oldest('verifs')!)
    if (carrier.flow === 'otp') {
      payload.verif_request_id = verif.id
      const minutes = Math.round(ttl.ms / 60_000) + ttl.months * 43_200
      this.sendSms(tx, now, {
        msisdn: input.msisdn,
        from: service.name,
        kind: 'otp',
        text: this.idx.text('otp', language, { service: service.name, otp: verif.otp!, ttl_minutes: minutes }),
        verif_request_id: verif.id,
        otp: verif.otp!,
      })
    } else {
      payload.redirect_url = `${ctx.baseUrl}/consent/${verif.id}`
    }
    return ok(payload, delayMs)
  }

  private verifyTx(tx: Tx, now: number, merchant: Merchant, input: VerifyInput): Outcome {
    const verif = this.state.verifs.get(input.verif_request_id)
    if (!verif || verif.merchant !== merchant.id || verif.flow !== 'otp') return fail('INVALID_PIN')
    const found = this.idx.integration(merchant.id, verif.service, verif.country)
    if (!found) return fail('MERCHANT_SERVICE_NOT_CONFIGURED')
    const base = { msisdn: verif.msisdn, country: verif.country, carrier: verif.carrier, service: verif.service }
    const delayMs = this.ruleset.delay(tx, base)
    const effect = this.ruleset.effect(tx, { ...base, step: 'verify' })
    const refused = effectFailure(effect)
    if (refused) return fail(refused, delayMs)
    const carrier = this.idx.carriers.get(verif.carrier)
    const maxAttempts = carrier?.otp.max_attempts ?? 3
    if (verif.state === 'used' || verif.state === 'denied') return fail('PIN_EXPIRED', delayMs)
    if (verif.attempts >= maxAttempts) {
      tx.put('verifs', verif.id, { ...verif, attempts: verif.attempts + 1 })
      return fail('MAX_PIN_RETRIES', delayMs)
    }
    if (verif.state === 'expired' || now >= verif.expires_at) return fail('PIN_EXPIRED', delayMs)
    if (input.otp !== verif.otp) {
      tx.put('verifs', verif.id, { ...verif, attempts: verif.attempts + 1 })
      return fail('INVALID_PIN', delayMs)
    }
    const result = this.activate(tx, now, verif, found, input.language ?? undefined)
    return typeof result === 'string' ? fail(result, delayMs) : ok({ subscription_id: result.id }, delayMs)
  }

  private statusTx(tx: Tx, merchant: Merchant, input: StatusInput): Outcome {
    const sub = this.state.subs.get(input.subscription_id)
    if (!sub || sub.merchant !== merchant.id) return fail('SUBSCRIPTION_NOT_FOUND')
    const found = this.idx.integration(merchant.id, sub.service, sub.country)
    if (!found) return fail('MERCHANT_SERVICE_NOT_CONFIGURED')
    const delayMs = this.ruleset.delay(tx, { msisdn: sub.msisdn, country: sub.country, carrier: sub.carrier, service: sub.service })
    const cached = this.cachedStatus(sub, found.service)
    return { code: 'SUCCESS', payload: cached.payload, payloadJson: cached.json, delayMs }
  }

  /** Status payloads (and their JSON) per record: records are immutable, so neither goes stale. */
  private readonly payloads = new WeakMap<SubscriptionRecord, { payload: Record<string, unknown>; json: string }>()

  /** The nine fields of the Status payload, in the spec's order. */
  private statusPayload(sub: SubscriptionRecord, service: Service | undefined): Record<string, unknown> {
    return this.cachedStatus(sub, service).payload
  }

  private cachedStatus(sub: SubscriptionRecord, service: Service | undefined): { payload: Record<string, unknown>; json: string } {
    let p = this.payloads.get(sub)
    if (!p) {
      const payload = this.buildStatusPayload(sub, service)
      this.payloads.set(sub, (p = { payload, json: JSON.stringify(payload) }))
    }
    return p
  }

  private buildStatusPayload(sub: SubscriptionRecord, service: Service | undefined): Record<string, unknown> {
    return {
      subscription_id: sub.id,
      status: sub.status,
      msisdn: sub.msisdn,
      service_code: sub.service,
      service_name: service?.name ?? sub.service,
      subscribed_dt: formatTimestamp(sub.subscribed_at),
      expiry_dt: formatTimestamp(sub.expiry_at),
      canceled_dt: sub.canceled_at === null ? null : formatTimestamp(sub.canceled_at),
      content_link: service?.content_link ?? null,
    }
  }

  // ---------------------------------------------------------------- carrier side

  private activeSubscription(msisdn: string, merchant: string, service: string): SubscriptionRecord | undefined {
    for (const id of this.state.subsByMsisdn.get(msisdn) ?? []) {
      const s = this.state.subs.get(id)
      if (s && s.status === 'ACTIVE' && s.merchant === merchant && s.service === service) return s
    }
    return undefined
  }

  /**
   * The first charge and the activation, shared by the three flows. Marks the verification (if any)
   * used either way. Answers the subscription, or the carrier code that refused it.
   */
  private activate(
    tx: Tx,
    now: number,
    verif: VerificationRecord | null,
    found: { service: Service; integration: Integration },
    requestedLanguage: string | undefined,
    direct?: { msisdn: string; country: string; carrier: Carrier; merchant: string; flow: 'psms' },
  ): SubscriptionRecord | CarrierCode {
    const { service, integration } = found
    const msisdn = verif?.msisdn ?? direct!.msisdn
    const country = verif?.country ?? direct!.country
    const carrierCode = verif?.carrier ?? direct!.carrier.code
    const merchant = verif?.merchant ?? direct!.merchant
    const settle = (result: string, subscriptionId: string | null) => {
      if (verif) tx.put('verifs', verif.id, { ...verif, attempts: verif.attempts + 1, state: 'used', result, subscription_id: subscriptionId })
    }
    if (this.activeSubscription(msisdn, merchant, service.code)) {
      settle('ALREADY_SUBSCRIBED', null)
      return 'ALREADY_SUBSCRIBED'
    }
    const effect = this.ruleset.effect(tx, { step: 'charge', msisdn, country, carrier: carrierCode, service: service.code })
    const price = integration.price ?? null
    const chargeFailure = effect?.error ?? (effect?.http ? 'ERROR' : undefined)
    if (chargeFailure) {
      settle(chargeFailure, null)
      return chargeFailure
    }
    const period = this.idx.period(service.period)
    const language = requestedLanguage ? this.idx.language(requestedLanguage, service) : (verif?.language ?? service.default_language)
    const sub = this.newSubscription(now, period, price, {
      merchant,
      service: service.code,
      country,
      carrier: carrierCode,
      msisdn,
      language,
      flow: verif?.flow ?? direct!.flow,
    })
    const activation = this.ruleset.effect(tx, { step: 'activate', msisdn, country, carrier: carrierCode, service: service.code })
    if (activation?.cancel_after) sub.carrier_cancel_at = addDuration(now, this.idx.period(activation.cancel_after))
    tx.put('subs', sub.id, sub)
    this.queue.scheduleSub(sub)
    settle('SUCCESS', sub.id)
    const carrier = this.idx.carriers.get(carrierCode)
    this.sendSms(tx, now, {
      msisdn,
      from: carrier?.short_code ?? service.name,
      kind: 'welcome',
      subscription_id: sub.id,
      text: this.idx.text('welcome', language, {
        service: service.name,
        price: price ? `${price.amount} ${price.currency}` : 'the agreed price',
        period: describePeriod(period),
        stop_hint: carrier?.flow === 'psms' && carrier.short_code ? this.idx.text('stop_hint', language, { short_code: carrier.short_code }) : '',
      }),
    })
    return sub
  }

  /** A new ACTIVE subscription, first charge made now, one period paid. */
  private newSubscription(
    now: number,
    period: Duration,
    price: { amount: string; currency: string } | null,
    who: Pick<SubscriptionRecord, 'merchant' | 'service' | 'country' | 'carrier' | 'msisdn' | 'language' | 'flow'>,
  ): SubscriptionRecord {
    return {
      id: this.newId(),
      ...who,
      status: 'ACTIVE',
      subscribed_at: now,
      anchor_at: now,
      periods: 1,
      expiry_at: addDuration(now, period),
      canceled_at: null,
      cancel_reason: null,
      retries: 0,
      next_retry_at: null,
      carrier_cancel_at: null,
      charges: [{ at: now, kind: 'first', outcome: 'SUCCESS', amount: price?.amount ?? null, currency: price?.currency ?? null }],
      charge_count: 1,
    }
  }

  // ---------------------------------------------------------------- rules

  /** The rules of the loaded world and the runtime rules, for `dcb scenarios`. */
  rules(): ReturnType<RuleSet['list']> {
    return this.ruleset.list()
  }

  async addRule(input: unknown): Promise<RuntimeRuleRecord> {
    const base = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {}
    const parsed = RuleSchema.safeParse({ id: `rt-${this.newId().slice(0, 8)}`, ...base })
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      throw new ControlError(400, 'BAD_RULE', `${issue.path.length ? issue.path.join('.') + ': ' : ''}${issue.message}`)
    }
    if (this.state.rules.has(parsed.data.id)) throw new ControlError(409, 'RULE_EXISTS', `a runtime rule "${parsed.data.id}" exists already`)
    return this.run((tx, now) => {
      const rec: RuntimeRuleRecord = { id: parsed.data.id, created_at: now, rule: parsed.data, used: 0 }
      tx.put('rules', rec.id, rec)
      this.ruleset.reload()
      return rec
    })
  }

  async deleteRule(id: string): Promise<void> {
    if (!this.state.rules.has(id)) throw new ControlError(404, 'RULE_NOT_FOUND', `no runtime rule "${id}"`)
    await this.run((tx) => {
      tx.del('rules', id)
      this.ruleset.reload()
    })
  }

  async deleteAllRules(): Promise<number> {
    const n = this.state.rules.size
    await this.run((tx) => {
      for (const id of [...this.state.rules.keys()]) tx.del('rules', id)
      this.ruleset.reload()
    })
    return n
  }

  // ---------------------------------------------------------------- SMS

  private sendSms(tx: Tx, now: number, m: Omit<SmsRecord, 'id' | 'n' | 'at' | 'direction' | 'to'> & { direction?: 'mt' | 'mo'; to?: string }): SmsRecord {
    // `m` is the caller's fresh object: complete it rather than copy it (a long advance sends one per renewal).
    const rec = m as SmsRecord
    rec.id = this.newId()
    rec.n = this.state.smsSeq + 1
    rec.direction ??= 'mt'
    rec.to ??= m.msisdn
    rec.at = now
    tx.put('sms', rec.id, rec)
    const list = this.state.smsByMsisdn.get(rec.msisdn)!
    while (list.length > this.smsPerMsisdn) tx.del('sms', list[0]!)
    while (this.state.sms.size > this.maxSms) tx.del('sms', this.state.oldest('sms')!)
    if (this.smsListeners.size)
      queueMicrotask(() => {
        for (const l of this.smsListeners) l(rec)
      })
    return rec
  }

  /**
   * The handset's messages, newest first (at most the per-handset cap): the messages sent to and
   * from it, and the carrier's notice of each renewal or retry charge of its subscriptions.
   */
  smsFor(msisdn: string): SmsRecord[] {
    const ids = this.state.smsByMsisdn.get(msisdn) ?? []
    const out: SmsRecord[] = []
    for (let i = ids.length - 1; i >= 0; i--) {
      const m = this.state.sms.get(ids[i]!)!
      // Data files of dcb 0.1.0 stored each charge notice; they are made from the charges now.
      if (m.kind === 'renewal' || m.kind === 'renewal_failed') continue
      out.push(m)
    }
    const notices = this.chargeNotices(msisdn)
    if (!notices.length) return out
    // A stable sort: at the same millisecond the notices come after (they are older: the events due
    // at a time run before any other operation at that time).
    return out
      .concat(notices)
      .sort((a, b) => b.at - a.at)
      .slice(0, this.smsPerMsisdn)
  }

  /**
   * Charge notices ("renewed", "renewal failed") are made from the charge history when a handset's
   * messages are read, not stored: a year over thousands of subscriptions stores no message per
   * renewal, and never pushes other handsets' OTPs out of the message cap.
   */
  private chargeNotices(msisdn: string): SmsRecord[] {
    const out: SmsRecord[] = []
    for (const id of this.state.subsByMsisdn.get(msisdn) ?? []) {
      const sub = this.state.subs.get(id)
      if (!sub) continue
      const first = sub.charge_count - sub.charges.length + 1
      const plan = this.plan(sub)
      sub.charges.forEach((charge, i) => {
        if (charge.kind !== 'first') out.push(this.chargeNotice(sub, plan, charge, first + i))
      })
    }
    return out
  }

  /** The SMS a carrier sends for charge number `no` of a subscription (a renewal or retry). */
  private chargeNotice(sub: SubscriptionRecord, plan: RenewalPlan, charge: Charge, no: number): SmsRecord {
    const ok = charge.outcome === 'SUCCESS'
    const price = charge.amount !== null ? `${charge.amount} ${charge.currency ?? ''}`.trim() : ''
    const text =
      ok && price === plan.vars.price
        ? plan.renewalText
        : this.idx.text(ok ? 'renewal' : 'renewal_failed', sub.language, { ...plan.vars, price, code: ok ? '' : charge.outcome })
    return {
      id: `${sub.id}.${no}`,
      n: 0,
      msisdn: sub.msisdn,
      direction: 'mt',
      from: plan.from,
      to: sub.msisdn,
      text,
      at: charge.at,
      kind: ok ? 'renewal' : 'renewal_failed',
      subscription_id: sub.id,
    }
  }

  /** Tells the SMS listeners about a charge notice (nothing is stored: see chargeNotices). */
  private notifyCharge(sub: SubscriptionRecord, plan: RenewalPlan): void {
    if (!this.smsListeners.size) return
    const rec = this.chargeNotice(sub, plan, sub.charges[sub.charges.length - 1]!, sub.charge_count)
    queueMicrotask(() => {
      for (const l of this.smsListeners) l(rec)
    })
  }

  /** The latest OTP SMS of an MSISDN, or undefined. */
  latestOtp(msisdn: string): SmsRecord | undefined {
    const ids = this.state.smsByMsisdn.get(msisdn) ?? []
    for (let i = ids.length - 1; i >= 0; i--) {
      const m = this.state.sms.get(ids[i]!)!
      if (m.kind === 'otp') return m
    }
    return undefined
  }

  /** Calls `listener` for every SMS sent from now on; returns the unsubscribe function. */
  onSms(listener: (sms: SmsRecord) => void): () => void {
    this.smsListeners.add(listener)
    return () => this.smsListeners.delete(listener)
  }

  // ---------------------------------------------------------------- MO (PSMS)

  /** A mobile-originated SMS from a handset to a short code: a PSMS keyword, STOP, or anything else. */
  mo(input: { msisdn: string; short_code: string; text: string }): Promise<Record<string, unknown>> {
    const { msisdn, short_code } = input
    const text = input.text.trim()
    const carrier = this.carrierOf(msisdn)
    if (!carrier) throw new ControlError(400, 'INVALID_MSISDN', `no sandbox carrier owns ${msisdn}`)
    return this.run((tx, now) => {
      this.sendSms(tx, now, { msisdn, from: msisdn, to: short_code, direction: 'mo', kind: 'mo', text: input.text })
      if (carrier.short_code !== short_code) {
        this.sendSms(tx, now, {
          msisdn,
          from: carrier.name ?? carrier.code,
          kind: 'help',
          text: `The number ${short_code} is not in service. Your message was not delivered.`,
        })
        return {
          action: 'ignored',
          reason: `${carrier.code} has no short code ${short_code}${carrier.short_code ? ` (its short code is ${carrier.short_code})` : ''}`,
          carrier_code: carrier.code,
        }
      }
      const words = text.toUpperCase().split(/\s+/)
      const services = this.psmsServices(carrier)
      if (words[0] === 'STOP') {
        const only = words[1] ? services.find((s) => s.service.keyword?.toUpperCase() === words[1]) : undefined
        const canceled: string[] = []
        for (const id of this.state.subsByMsisdn.get(msisdn) ?? []) {
          const s = this.state.subs.get(id)!
          if (s.carrier !== carrier.code || s.status === 'CANCELED' || s.flow !== 'psms') continue
          if (only && s.service !== only.service.code) continue
          this.cancelSub(tx, now, s, 'mo_stop')
          const service = this.idx.service(s.merchant, s.service)
          this.sendSms(tx, now, {
            msisdn,
            from: short_code,
            kind: 'stop',
            subscription_id: s.id,
            text: this.idx.text('stop', s.language, { service: service?.name ?? s.service }),
          })
          canceled.push(s.id)
        }
        if (!canceled.length) {
          this.sendSms(tx, now, { msisdn, from: short_code, kind: 'help', text: `You have no active subscription on ${short_code}.` })
          return { action: 'stop', canceled: [], message: `no PSMS subscription of ${msisdn} on ${short_code} to cancel` }
        }
        return { action: 'stop', canceled, subscription_id: canceled[0] }
      }
      const match = services.find((s) => s.service.keyword?.toUpperCase() === words[0])
      if (!match) {
        const first = services[0]?.service
        const service = first?.name ?? 'a service'
        this.sendSms(tx, now, {
          msisdn,
          from: short_code,
          kind: 'help',
          text: this.idx.text('psms_help', first?.default_language ?? 'en', { text, keyword: first?.keyword ?? '', short_code, service }),
        })
        return { action: 'unknown_keyword', keywords: services.map((s) => s.service.keyword), message: `"${text}" is not a keyword on ${short_code}` }
      }
      const country = carrier.country
      const mo = this.ruleset.effect(tx, { step: 'mo', msisdn, country, carrier: carrier.code, service: match.service.code })
      const moFailure = effectFailure(mo)
      if (moFailure && moFailure !== 'SERVER_ERROR') {
        this.failureSms(tx, now, msisdn, short_code, match.service, moFailure)
        return { action: 'rejected', code: moFailure }
      }
      const result = this.activate(tx, now, null, match, undefined, { msisdn, country, carrier, merchant: match.service.merchant, flow: 'psms' })
      if (typeof result === 'string') {
        this.failureSms(tx, now, msisdn, short_code, match.service, result)
        return { action: result === 'ALREADY_SUBSCRIBED' ? 'rejected' : 'charge_failed', code: result }
      }
      return { action: 'subscribed', subscription_id: result.id, service_code: match.service.code, merchant: match.service.merchant }
    })
  }

  private failureSms(tx: Tx, now: number, msisdn: string, from: string, service: Service, code: string): void {
    this.sendSms(tx, now, { msisdn, from, kind: 'failure', text: `${service.name}: your request could not be completed (${code}).` })
  }

  /** The carrier that owns an MSISDN in any country of the world. */
  carrierOf(msisdn: string): Carrier | undefined {
    return this.idx.carrierOf(msisdn)
  }

  /** Services that can be bought by PSMS on this carrier. */
  private psmsServices(carrier: Carrier): { service: Service; integration: Integration }[] {
    const out: { service: Service; integration: Integration }[] = []
    for (const service of this.idx.world.services) {
      const integration = service.integrations.find((i) => i.country === carrier.country)
      if (integration && service.keyword && this.idx.carrierProvisioned(integration, carrier)) out.push({ service, integration })
    }
    return out
  }

  // ---------------------------------------------------------------- consent (redirect)

  /** What the consent page shows, or why it cannot. */
  consentView(id: string): { verif: VerificationRecord; service: Service; integration: Integration; problem: string | null } | undefined {
    const verif = this.state.verifs.get(id)
    if (!verif || verif.flow !== 'redirect') return undefined
    const found = this.idx.integration(verif.merchant, verif.service, verif.country)
    if (!found) return undefined
    let problem: string | null = null
    if (verif.state === 'used' || verif.state === 'denied') problem = 'This link was already used.'
    else if (verif.state === 'expired' || this.now() >= verif.expires_at) problem = 'This link has expired.'
    return { verif, ...found, problem }
  }

  /** Approve or deny a consent link. Answers where to send the browser (the service's return URL + query). */
  consent(id: string, action: 'approve' | 'deny'): Promise<{ location: string | null; result: string; subscription_id: string | null }> {
    return this.run((tx, now) => {
      const view = this.consentView(id)
      if (!view) throw new ControlError(404, 'CONSENT_NOT_FOUND', `no consent request ${id}`)
      const { verif, service } = view
      const back = (query: Record<string, string>) => (service.return_url ? appendQuery(service.return_url, query) : null)
      if (view.problem)
        return { location: back({ status: 'FAIL', message: 'PIN_EXPIRED', verif_request_id: id }), result: 'PIN_EXPIRED', subscription_id: null }
      if (action === 'deny') {
        tx.put('verifs', verif.id, { ...verif, state: 'denied', result: 'FAILED_INIT_SUB' })
        return { location: back({ status: 'FAIL', message: 'FAILED_INIT_SUB', verif_request_id: id }), result: 'FAILED_INIT_SUB', subscription_id: null }
      }
      const result = this.activate(tx, now, verif, view, undefined)
      if (typeof result === 'string') return { location: back({ status: 'FAIL', message: result, verif_request_id: id }), result, subscription_id: null }
      return { location: back({ status: 'SUCCESS', subscription_id: result.id }), result: 'SUCCESS', subscription_id: result.id }
    })
  }

  // ---------------------------------------------------------------- subscriptions (control)

  subscriptionView(sub: SubscriptionRecord): Record<string, unknown> {
    const service = this.idx.service(sub.merchant, sub.service)
    return {
      ...this.statusPayload(sub, service),
      merchant: sub.merchant,
      country_code: sub.country,
      carrier_code: sub.carrier,
      flow: sub.flow,
      language: sub.language,
      cancel_reason: sub.cancel_reason,
      next_retry_dt: sub.next_retry_at === null ? null : formatTimestamp(sub.next_retry_at),
      carrier_cancel_dt: sub.carrier_cancel_at === null ? null : formatTimestamp(sub.carrier_cancel_at),
      charge_count: sub.charge_count,
      charges: sub.charges.map((c) => ({ ...c, at: formatTimestamp(c.at) })),
    }
  }

  listSubscriptions(filter: { msisdn?: string; merchant?: string; service?: string; status?: string; limit?: number }): Record<string, unknown>[] {
    const source = filter.msisdn ? [...(this.state.subsByMsisdn.get(filter.msisdn) ?? [])].map((id) => this.state.subs.get(id)!) : [...this.state.subs.values()]
    const out: SubscriptionRecord[] = []
    for (const s of source) {
      if (filter.merchant && s.merchant !== filter.merchant) continue
      if (filter.service && s.service !== filter.service) continue
      if (filter.status && s.status !== filter.status.toUpperCase()) continue
      out.push(s)
    }
    out.sort((a, b) => b.subscribed_at - a.subscribed_at)
    return out.slice(0, filter.limit ?? 1000).map((s) => this.subscriptionView(s))
  }

  subscription(id: string): Record<string, unknown> {
    const sub = this.state.subs.get(id)
    if (!sub) throw new ControlError(404, 'SUBSCRIPTION_NOT_FOUND', `no subscription ${id}`)
    return this.subscriptionView(sub)
  }

  /** Carrier-side cancellation. */
  cancel(id: string): Promise<Record<string, unknown>> {
    return this.run((tx, now) => {
      const sub = this.state.subs.get(id)
      if (!sub) throw new ControlError(404, 'SUBSCRIPTION_NOT_FOUND', `no subscription ${id}`)
      if (sub.status === 'CANCELED') throw new ControlError(409, 'ALREADY_CANCELED', `subscription ${id} was canceled at ${formatTimestamp(sub.canceled_at!)}`)
      const done = this.cancelSub(tx, now, sub, 'carrier')
      this.notifyCanceled(tx, now, done)
      return this.subscriptionView(done)
    })
  }

  private cancelSub(tx: Tx, now: number, sub: SubscriptionRecord, reason: string): SubscriptionRecord {
    const done = tx.put('subs', sub.id, { ...sub, status: 'CANCELED', canceled_at: now, cancel_reason: reason, next_retry_at: null, carrier_cancel_at: null })
    return done
  }

  private notifyCanceled(tx: Tx, now: number, sub: SubscriptionRecord): void {
    const service = this.idx.service(sub.merchant, sub.service)
    const carrier = this.idx.carriers.get(sub.carrier)
    this.sendSms(tx, now, {
      msisdn: sub.msisdn,
      from: carrier?.short_code ?? carrier?.name ?? sub.carrier,
      kind: 'canceled',
      subscription_id: sub.id,
      text: this.idx.text('canceled', sub.language, { service: service?.name ?? sub.service }),
    })
  }

  // ---------------------------------------------------------------- lifecycle events

  /** Sizes of what the engine keeps, for health and the benchmark. */
  sizes(): Record<string, number> {
    return {
      subscriptions: this.state.subs.size,
      verifications: this.state.verifs.size,
      sms: this.state.sms.size,
      rules: this.state.rules.size,
      queue: this.queue.size,
    }
  }

  /** Runs every event due at or before `to`, each at its own time, in time order. */
  private runDue(tx: Tx, to: number, log: EventLog | null): void {
    for (;;) {
      const top = this.queue.peek()
      if (!top || top.at > to) return
      if (!this.queue.live(top)) {
        this.queue.pop()
        continue
      }
      if (top.kind === 'verif') {
        this.queue.pop()
        const v = this.state.verifs.get(top.id)!
        tx.put('verifs', v.id, { ...v, state: 'expired' })
        log?.verif(top.at, v.flow === 'otp' ? 'otp_expired' : 'consent_expired', v)
        continue
      }
      const sub = this.state.subs.get(top.id)!
      // The plan rides on the entry (valid while the rules stay as they are).
      const plan = top.plan?.rules === this.ruleset.version ? top.plan : (top.plan = this.plan(sub))
      const next = subEventAt(this.subEvent(tx, sub, top.at, log, plan))
      if (this.queue.peek() !== top) {
        // Something was queued meanwhile (nothing does today): the entry stays behind, stale.
        this.queue.schedule('sub', sub.id, next)
      } else if (next === null) {
        this.queue.pop()
      } else {
        // The same entry, moved to the subscription's next event (no allocation, one sift per renewal).
        this.queue.moveTop(top, next)
      }
    }
  }

  /** Runs a subscription's due event (carrier cancellation, renewal or retry); answers the record after it. */
  private subEvent(tx: Tx, sub: SubscriptionRecord, at: number, log: EventLog | null, plan: RenewalPlan): SubscriptionRecord {
    if (sub.status === 'ACTIVE' && sub.carrier_cancel_at !== null && sub.carrier_cancel_at <= sub.expiry_at && at === sub.carrier_cancel_at) {
      const done = this.cancelSub(tx, at, sub, 'carrier')
      this.notifyCanceled(tx, at, done)
      log?.sub(at, 'carrier_canceled', done, plan.subject)
      return done
    }
    const { period, price } = plan
    const isRetry = sub.status === 'EXPIRED'
    const kind = isRetry ? 'retry' : 'renewal'
    const effect = this.ruleset.firstEffect(tx, kind, sub.id, isRetry ? plan.retryRules : plan.renewalRules)
    const code = effect?.error ?? (effect?.http ? 'ERROR' : undefined)
    const charge: Charge = { at, kind, outcome: code ?? 'SUCCESS', amount: price?.amount ?? null, currency: price?.currency ?? null }
    if (!code && !isRetry && tx.owns(sub)) {
      // A record this transaction made already (an earlier renewal of a long advance): renew it in
      // place instead of copying it once more per period.
      if (sub.charges.length >= this.chargesPerSubscription) sub.charges.shift()
      sub.charges.push(charge)
      sub.periods += 1
      sub.expiry_at = addDuration(sub.anchor_at, period, sub.periods)
      sub.charge_count += 1
      // No put: the transaction holds this very record already and commits it as it ends.
      this.notifyCharge(sub, plan)
      log?.sub(at, 'renewed', sub, plan.subject)
      return sub
    }
    const charges = [...sub.charges.slice(-(this.chargesPerSubscription - 1)), charge]
    if (!code) {
      const renewed: SubscriptionRecord = isRetry
        ? {
            ...sub,
            status: 'ACTIVE',
            anchor_at: at,
            periods: 1,
            expiry_at: addDuration(at, period),
            retries: 0,
            next_retry_at: null,
            charges,
            charge_count: sub.charge_count + 1,
          }
        : { ...sub, periods: sub.periods + 1, expiry_at: addDuration(sub.anchor_at, period, sub.periods + 1), charges, charge_count: sub.charge_count + 1 }
      tx.put('subs', sub.id, renewed)
      this.notifyCharge(renewed, plan)
      log?.sub(at, isRetry ? 'retry_succeeded' : 'renewed', renewed, plan.subject)
      return renewed
    }
    const retry = plan.carrier?.retry ?? { every: 'P1D', max: 0 }
    const retries = isRetry ? sub.retries + 1 : 0
    const nextRetry = retries < retry.max ? addDuration(at, this.idx.period(retry.every)) : null
    const failed: SubscriptionRecord = { ...sub, status: 'EXPIRED', retries, next_retry_at: nextRetry, charges, charge_count: sub.charge_count + 1 }
    tx.put('subs', sub.id, failed)
    this.notifyCharge(failed, plan)
    log?.sub(at, isRetry ? 'retry_failed' : 'renewal_failed', failed, plan.subject, code)
    return failed
  }

  /**
   * What renewing a subscription needs from the world and the rules: its period, price, SMS sender
   * and text, candidate rules. Made once per queue entry (it rides on it: a year of renewals asks
   * twelve times) and made anew when the rules change.
   */
  private plan(sub: SubscriptionRecord): RenewalPlan {
    const service = this.idx.service(sub.merchant, sub.service)
    const carrier = this.idx.carriers.get(sub.carrier)
    const price = service?.integrations.find((i) => i.country === sub.country)?.price ?? null
    const vars = { service: service?.name ?? sub.service, price: price ? `${price.amount} ${price.currency}` : '', code: '' }
    const ctx = { msisdn: sub.msisdn, country: sub.country, carrier: sub.carrier, service: sub.service }
    return {
      carrier,
      period: this.idx.period(service?.period ?? 'P1M'),
      price,
      from: carrier?.short_code ?? service?.name ?? sub.carrier,
      vars,
      renewalText: this.idx.text('renewal', sub.language, vars),
      renewalRules: this.ruleset.matching({ ...ctx, step: 'renewal' }),
      retryRules: this.ruleset.matching({ ...ctx, step: 'retry' }),
      subject: new EventSubject(sub),
      rules: this.ruleset.version,
    }
  }

  // ---------------------------------------------------------------- seeding (benchmarks, load tests)

  /**
   * Creates `count` ACTIVE subscriptions at once (no SMS, no flow). Answers the ids. For building
   * large stores fast (`dcb seed`). The MSISDNs count up from `firstMsisdn` through endings 000-099
   * only (the always-succeeds range), so no magic ending changes what a seeded subscription does;
   * `startIndex` continues a numbering.
   */
  seed(count: number, o: SeedOptions = {}): Promise<string[]> {
    const { merchant, found, carrier, period } = checkSeed(this.idx, o)
    const first = BigInt(o.firstMsisdn ?? '601200000000')
    const start = o.startIndex ?? 0
    return this.run((tx, now) => {
      const price = found.integration.price ?? null
      const ids: string[] = []
      // Spread: subscription k of `total` starts k/total of the way back from now to now - `over`.
      const spreadMs = o.spread ? now - addDuration(now, { months: -o.spread.over.months, ms: -o.spread.over.ms }) : 0
      const total = o.spread ? Math.max(o.spread.total, start + count) : 1
      for (let i = 0; i < count; i++) {
        const at = spreadMs ? now - Math.floor((spreadMs * (start + i)) / total) : now
        const sub = this.newSubscription(at, period, price, {
          merchant,
          service: found.service.code,
          country: found.integration.country,
          carrier: carrier.code,
          msisdn: (first + BigInt(Math.floor((start + i) / 100)) * 1000n + BigInt((start + i) % 100)).toString(),
          language: found.service.default_language,
          flow: carrier.flow,
        })
        tx.put('subs', sub.id, sub)
        this.queue.scheduleSub(sub)
        ids.push(sub.id)
      }
      return ids
    })
  }

  // ---------------------------------------------------------------- reset

  /** Back to the loaded fixtures: no subscriptions, messages, runtime rules; the clock as at start. */
  reset(): Promise<void> {
    return this.settle(
      this.transact((tx) => {
        tx.reset()
        if (this.clockStart) this.writeClockStart(tx, this.clockStart)
        this.queue.rebuild()
        this.ruleset.reload()
      }),
    )
  }

  private randomDigits(n: number): string {
    let s = ''
    for (let i = 0; i < n; i++) s += Math.floor(this.random() * 10).toString()
    return s
  }
}

export interface SeedOptions {
  merchant?: string
  service?: string
  country?: string
  firstMsisdn?: string
  startIndex?: number
  /** Start the subscriptions evenly over this long before now (of `total` in all batches). */
  spread?: { over: Duration; total: number }
}

/**
 * What `Engine.seed` needs, or a ControlError saying why it cannot seed: the integration, the carrier
 * of the first MSISDN, and a spread no longer than the period (longer would start subscriptions whose
 * renewals are already due, all of which a server would run at its start). `dcb seed` asks before it
 * touches the data file.
 */
export function checkSeed(
  idx: WorldIndex,
  o: SeedOptions,
): { merchant: string; found: { service: Service; integration: Integration }; carrier: Carrier; period: Duration } {
  const merchant = o.merchant ?? 'demo'
  const found = idx.integration(merchant, o.service ?? 'STREAMPLUS', o.country ?? 'my')
  if (!found)
    throw new ControlError(
      400,
      'MERCHANT_SERVICE_NOT_CONFIGURED',
      `no integration ${o.service ?? 'STREAMPLUS'}/${o.country ?? 'my'} for merchant ${merchant} in the sandbox world`,
    )
  const first = o.firstMsisdn ?? '601200000000'
  const carrier = idx.carrierOf(first)
  if (!carrier) throw new ControlError(400, 'INVALID_MSISDN', `no sandbox carrier owns ${first}`)
  const period = idx.period(found.service.period)
  // Compared from one fixed time: a month is 28 to 31 days, so the same one for both.
  const t = Date.UTC(2026, 0, 1)
  if (o.spread && t - addDuration(t, { months: -o.spread.over.months, ms: -o.spread.over.ms }) > addDuration(t, period) - t)
    throw new ControlError(
      400,
      'BAD_SPREAD',
      `the spread is longer than the ${found.service.code} period (${found.service.period}): some renewals would be due at once`,
    )
  return { merchant, found, carrier, period }
}

function effectFailure(effect: RuleEffect | undefined): OutcomeCode | undefined {
  if (!effect) return undefined
  if (effect.http === 500) return 'SERVER_ERROR'
  return effect.error
}

export function appendQuery(url: string, query: Record<string, string>): string {
  const q = new URLSearchParams(query).toString()
  const hash = url.indexOf('#')
  const [head, frag] = hash >= 0 ? [url.slice(0, hash), url.slice(hash)] : [url, '']
  return `${head}${head.includes('?') ? '&' : '?'}${q}${frag}`
}

export function describePeriod(d: Duration): string {
  if (d.months === 12 && !d.ms) return 'year'
  if (d.months === 1 && !d.ms) return 'month'
  if (d.months) return `${d.months} months`
  const units: [number, string][] = [
    [604_800_000, 'week'],
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
  ]
  for (const [ms, name] of units) if (d.ms % ms === 0) return d.ms === ms ? name : `${d.ms / ms} ${name}s`
  return `${d.ms / 1000} seconds`
}
