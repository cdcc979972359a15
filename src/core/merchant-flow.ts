/**
 * The merchant API's operations: Init (checks, then an OTP by SMS, a consent link or the PSMS
 * keyword to send), Verify (the OTP, then the activation) and Status (the cached payload).
 */
import type { EngineContext } from './context.js'
import type { Inbox } from './inbox.js'
import { psmsLanguageKey } from './mo-flow.js'
import { fail, ok, type Outcome } from './outcomes.js'
import { OtpSms } from './otp-sms.js'
import { decisionDelay, decisionFailure, type RuleContext } from './rules.js'
import type { RuleDecision } from './ruleset.js'
import { describeWire, wireOf, type Wire } from './wire.js'
import { ruleReason } from './why.js'
import type { VerificationRecord } from './state.js'
import type { Tx } from './tx.js'
import type { Subscriptions } from './subscriptions.js'
import { addDuration, formatTimestamp } from './time.js'
import { DelayDraws } from './delays.js'
import { MAX_DELAY_MS } from './limits.js'
import type { SubscriptionViews } from './views.js'
import { count, integrationReason, notSubscriptionReason, quote } from './why.js'
import { didYouMean } from './nearest.js'
import type { Merchant, WorldIndex } from './world.js'
import type { Carrier, Service } from './world-schema.js'

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

export class MerchantFlow {
  /** The OTP SMS: sent, withheld or late as the `otp` step's rule says. */
  readonly otpSms: OtpSms
  /** The session's seeded generator of `delay_ms` distributions. */
  private readonly draws: DelayDraws

  constructor(
    private readonly ctx: EngineContext,
    inbox: Inbox,
    private readonly subscriptions: Subscriptions,
    private readonly views: SubscriptionViews,
  ) {
    this.otpSms = new OtpSms(ctx, inbox)
    this.draws = new DelayDraws(ctx.state)
  }

  /** After a reset: the draws start over from `seed` (none: the default seed). */
  reseed(tx: Tx, seed: number | undefined): void {
    this.draws.reseed(tx, seed)
  }

  /** A decision's delay in ms, a distribution drawn now (the `api` step's first, then the call's own). */
  private delay(tx: Tx, d: RuleDecision | undefined): number | undefined {
    // No decision, or one with no delay (most calls): nothing to draw, no closure made.
    if (!d || (d.effect.delay_ms === undefined && !d.effect.delay_per_unit)) return undefined
    return decisionDelay(d, (spec) => this.draws.draw(tx, spec)) || undefined
  }

  init(tx: Tx, now: number, merchant: Merchant, input: InitInput, baseUrl: string): Outcome {
    const { world, ruleset } = this.ctx
    const found = world.integration(merchant.id, input.service_code, input.country_code)
    if (!found) return notConfigured(world, merchant, input.service_code, input.country_code)
    const { service, integration } = found
    const lookup = world.lookup(input.country_code, input.msisdn)
    if (!lookup.ok) return fail(lookup.code, undefined, lookup.reason)
    const carrier = lookup.carrier
    const base: Omit<RuleContext, 'step'> = { msisdn: input.msisdn, country: input.country_code, carrier: carrier.code, service: service.code }
    // The `api` step, then the call's own: their delays add up; `http` or `fault` replaces the answer.
    const api = ruleset.decide(tx, { ...base, step: 'api' })
    const apiDelay = this.delay(tx, api)
    const down = gate(api, 'answer', apiDelay)
    if (down.stop) return down.stop
    if (!world.carrierProvisioned(integration, carrier))
      return fail(
        'CARRIER_NOT_SUPPORTED',
        apiDelay,
        carrier.provisioned
          ? `service ${service.code} in ${input.country_code} is not billed through carrier ${carrier.code}`
          : `carrier ${carrier.code} is not provisioned`,
      )
    const own = ruleset.decide(tx, { ...base, step: 'init' })
    const delayMs = addDelays(apiDelay, this.delay(tx, own))
    const mine = gate(own, 'Init', delayMs)
    if (mine.stop) return mine.stop
    const result = this.initCall(tx, now, merchant, input, baseUrl, service, carrier, base, delayMs)
    return mine.after ? withWire(result, mine.after) : result
  }

  /** Init past its rules: the OTP sent (or the PSMS keyword, the consent link). */
  private initCall(
    tx: Tx,
    now: number,
    merchant: Merchant,
    input: InitInput,
    baseUrl: string,
    service: Service,
    carrier: Carrier,
    base: Omit<RuleContext, 'step'>,
    delayMs: number | undefined,
  ): Outcome {
    const { world, ruleset, state } = this.ctx
    const active = this.subscriptions.active(input.msisdn, merchant.id, service.code)
    if (active) return fail('ALREADY_SUBSCRIBED', delayMs, `msisdn ${input.msisdn} has ACTIVE subscription ${active.id} to ${service.code}`)
    const language = world.language(input.language ?? undefined, service)
    const payload = {
      verif_request_id: null as string | null,
      short_code: null as string | null,
      keyword: null as string | null,
      carrier_code: carrier.code,
      redirect_url: null as string | null,
    }
    if (carrier.flow === 'psms') {
      // The welcome SMS of the MO that follows speaks the language this Init asked for.
      const key = psmsLanguageKey(merchant.id, service.code, input.msisdn)
      if (language !== service.default_language) tx.put('meta', key, language)
      else if (state.meta.has(key)) tx.del('meta', key)
      payload.short_code = carrier.short_code ?? null
      payload.keyword = service.keyword ?? null
      return ok(payload, delayMs)
    }
    const otpRule = carrier.flow === 'otp' ? ruleset.decide(tx, { ...base, step: 'otp' }) : undefined
    const ttl = world.period(carrier.flow === 'otp' ? carrier.otp.ttl : carrier.consent_ttl)
    const verif: VerificationRecord = {
      id: this.ctx.newId(),
      merchant: merchant.id,
      service: service.code,
      country: input.country_code,
      carrier: carrier.code,
      msisdn: input.msisdn,
      language,
      flow: carrier.flow,
      otp: carrier.flow === 'otp' ? (otpRule?.effect.otp ?? this.ctx.randomDigits(carrier.otp.length)) : null,
      created_at: now,
      expires_at: addDuration(now, ttl),
      attempts: 0,
      state: 'pending',
      subscription_id: null,
      result: null,
    }
    tx.put('verifs', verif.id, verif)
    this.ctx.queue.schedule('verif', verif.id, verif.expires_at)
    // Bounded memory: the oldest verification requests go first (Map order is creation order).
    while (state.verifs.size > this.ctx.limits.maxVerifications) tx.del('verifs', state.oldest('verifs')!)
    if (carrier.flow === 'otp') {
      payload.verif_request_id = verif.id
      this.otpSms.send(tx, now, verif, otpRule)
    } else {
      payload.redirect_url = `${baseUrl}/consent/${verif.id}`
    }
    return ok(payload, delayMs)
  }

  verify(tx: Tx, now: number, merchant: Merchant, input: VerifyInput): Outcome {
    const { world, ruleset } = this.ctx
    const verif = this.ctx.state.verifs.get(input.verif_request_id)
    // Another merchant's request reads as an unknown one (nothing leaks).
    if (!verif || verif.merchant !== merchant.id) return fail('INVALID_PIN', undefined, `verif_request_id ${quote(input.verif_request_id)} is unknown`)
    const msisdn = verif.msisdn
    if (verif.flow !== 'otp')
      return withMsisdn(
        fail('INVALID_PIN', undefined, `verif_request_id ${quote(verif.id)} is a redirect consent request: it is approved on its page, not by Verify`),
        msisdn,
      )
    const found = world.integration(merchant.id, verif.service, verif.country)
    if (!found) return withMsisdn(notConfigured(world, merchant, verif.service, verif.country), msisdn)
    const api = ruleset.decideFor(tx, 'api', verif)
    const apiDelay = this.delay(tx, api)
    const down = gate(api, 'answer', apiDelay)
    if (down.stop) return withMsisdn(down.stop, msisdn)
    const own = ruleset.decideFor(tx, 'verify', verif)
    const delayMs = addDelays(apiDelay, this.delay(tx, own))
    const mine = gate(own, 'Verify', delayMs)
    if (mine.stop) return withMsisdn(mine.stop, msisdn)
    const result = withMsisdn(this.verifyCall(tx, now, verif, found, input, delayMs), msisdn)
    return mine.after ? withWire(result, mine.after) : result
  }

  /** Verify past its rules: the attempt counted, then the charge and the activation. */
  private verifyCall(
    tx: Tx,
    now: number,
    verif: VerificationRecord,
    found: NonNullable<ReturnType<WorldIndex['integration']>>,
    input: VerifyInput,
    delayMs: number | undefined,
  ): Outcome {
    const { world } = this.ctx
    const msisdn = verif.msisdn
    const carrier = world.carriers.get(verif.carrier)
    const maxAttempts = carrier?.otp.max_attempts ?? 3
    if (verif.state === 'used' || verif.state === 'denied')
      return withMsisdn(fail('PIN_EXPIRED', delayMs, `verification request ${verif.id} was used already (${verif.result ?? verif.state})`), msisdn)
    if (verif.attempts >= maxAttempts) {
      tx.put('verifs', verif.id, { ...verif, attempts: verif.attempts + 1 })
      return withMsisdn(
        fail(
          'MAX_PIN_RETRIES',
          delayMs,
          `${count(maxAttempts, 'wrong OTP')} ${maxAttempts === 1 ? 'was' : 'were'} given already (at most ${count(maxAttempts, 'attempt')})`,
        ),
        msisdn,
      )
    }
    if (verif.state === 'expired' || now >= verif.expires_at)
      return withMsisdn(fail('PIN_EXPIRED', delayMs, `the OTP expired at ${formatTimestamp(verif.expires_at)} (sandbox time)`), msisdn)
    if (input.otp !== verif.otp) {
      tx.put('verifs', verif.id, { ...verif, attempts: verif.attempts + 1 })
      return withMsisdn(
        fail('INVALID_PIN', delayMs, `otp ${quote(input.otp)} is not the OTP sent to ${msisdn} (wrong attempt ${verif.attempts + 1} of ${maxAttempts})`),
        msisdn,
      )
    }
    const result = this.subscriptions.activate(tx, now, verif, found, input.language ?? undefined)
    // A charge rule's `http: 500` answers Verify with HTTP 500 ERROR.
    const out =
      'refused' in result ? fail(result.http500 ? 'SERVER_ERROR' : result.refused, delayMs, result.reason) : ok({ subscription_id: result.id }, delayMs)
    return withMsisdn(out, msisdn)
  }

  /** SUBSCRIPTION_NOT_FOUND; the reason says when the id is one of the merchant's verification or consent requests (another's reads as unknown). */
  private notFound(merchant: Merchant, id: string): Outcome {
    const verif = this.ctx.state.verifs.get(id)
    if (!verif || verif.merchant !== merchant.id) return fail('SUBSCRIPTION_NOT_FOUND', undefined, `subscription_id ${quote(id)} is unknown`)
    return withMsisdn(fail('SUBSCRIPTION_NOT_FOUND', undefined, notSubscriptionReason(id, verif)), verif.msisdn)
  }

  status(tx: Tx, merchant: Merchant, input: StatusInput): Outcome {
    const { world, ruleset } = this.ctx
    const sub = this.ctx.state.subs.get(input.subscription_id)
    // Another merchant's subscription reads as an unknown one.
    if (!sub || sub.merchant !== merchant.id) return this.notFound(merchant, input.subscription_id)
    const found = world.integration(merchant.id, sub.service, sub.country)
    if (!found) return withMsisdn(notConfigured(world, merchant, sub.service, sub.country), sub.msisdn)
    // The `api` step, then the call's own (the candidates ride beside the subscription: no key to build).
    const api = ruleset.decideFor(tx, 'api', sub)
    const apiDelay = this.delay(tx, api)
    const down = gate(api, 'answer', apiDelay)
    if (down.stop) return withMsisdn(down.stop, sub.msisdn)
    const own = ruleset.decideFor(tx, 'status', sub)
    const delayMs = addDelays(apiDelay, this.delay(tx, own))
    const refused = gate(own, 'Status', delayMs)
    if (refused.stop) return withMsisdn(refused.stop, sub.msisdn)
    const cached = this.views.status(sub, found.service)
    return { code: 'SUCCESS', payload: cached.payload, payloadJson: cached.json, delayMs, msisdn: sub.msisdn }
  }
}

function notConfigured(world: WorldIndex, merchant: Merchant, service: string, country: string): Outcome {
  const hasService = !!world.service(merchant.id, service)
  // A typo is told by the nearest name: the merchant's own services, or the world's countries when it has none of that code.
  const meant = !hasService
    ? didYouMean(
        service,
        world.world.services.filter((s) => s.merchant === merchant.id).map((s) => s.code),
      )
    : world.countries.has(country)
      ? ''
      : didYouMean(country, world.countries.keys(), true)
  return fail('MERCHANT_SERVICE_NOT_CONFIGURED', undefined, integrationReason(hasService, merchant.id, service, country, meant))
}

/**
 * What the decision of the `api` step or of a call's own step does to the call, the one place it is
 * decided: `stop`, the answer that ends it now (its `error`, `http`, or a `before` fault: the call did
 * nothing); `after`, how the answer of a call that was done leaves instead (`when: after`).
 */
function gate(d: RuleDecision | undefined, what: string, delayMs: number | undefined): { stop?: Outcome; after?: Wire } {
  if (!d) return {}
  const wire = wireOf(d.effect)
  if (wire) wire.reason = ruleReason(d.rule, `${what} ${describeWire(wire)}`)
  if (wire?.when === 'after') return { after: wire }
  if (wire) return { stop: withWire(fail('SERVER_ERROR', delayMs, wire.reason), wire) }
  const failed = decisionFailure(d, what)
  return failed ? { stop: fail(failed.code, delayMs, failed.reason) } : {}
}

function withWire(o: Outcome, wire: Wire): Outcome {
  o.wire = wire
  return o
}

function withMsisdn(o: Outcome, msisdn: string): Outcome {
  o.msisdn = msisdn
  return o
}

/** An answer's delay: the `api` step's and the call's own step's, added; one answer is held at most MAX_DELAY_MS. */
function addDelays(api: number | undefined, own: number | undefined): number | undefined {
  return Math.min((api ?? 0) + (own ?? 0), MAX_DELAY_MS) || undefined
}
