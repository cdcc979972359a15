/**
 * Making and ending subscriptions: the first charge and activation shared by the three flows (OTP,
 * consent, PSMS) with the welcome SMS, and cancellation (by the carrier, by a STOP message) with its
 * notice.
 */
import { SandboxError } from './errors.js'
import type { EngineContext } from './context.js'
import type { Inbox } from './inbox.js'
import { subscriptionCapReason } from './limits.js'
import type { CarrierCode } from './outcomes.js'
import { chargeDecision } from './rules.js'
import type { SubscriptionRecord, Transition, TransitionCause, VerificationRecord } from './state.js'
import type { Tx } from './tx.js'
import { derivedHistory } from './timeline.js'
import { addDuration, describePeriod, formatTimestamp, type Duration } from './time.js'
import type { Carrier, Integration, Service } from './world.js'

/** A first charge that did not happen: the carrier code and why (the rule, or the active subscription). */
export interface Refused {
  refused: CarrierCode
  reason: string
  /** A charge rule's `http: 500`: Verify answers HTTP 500 ERROR; the MO and consent fail the charge with ERROR. */
  http500?: true
  /** The session holds its limit of subscriptions: the sandbox refused, no carrier (nothing charged, the verification left as it was). Coverage counts the ERROR each flow answers: verify.ERROR_500, mo.charge_failed, consent.charge_failed. */
  atCap?: true
}

export type Price = { amount: string; currency: string } | null

/** Who a subscription is for, when no verification request says it (a PSMS keyword). */
export interface DirectActivation {
  msisdn: string
  country: string
  carrier: Carrier
  merchant: string
  flow: 'psms'
}

/** A new ACTIVE subscription, first charge made at `now`, one period paid. */
export function newSubscription(
  id: string,
  now: number,
  period: Duration,
  price: Price,
  who: Pick<SubscriptionRecord, 'merchant' | 'service' | 'country' | 'carrier' | 'msisdn' | 'language' | 'flow'>,
): SubscriptionRecord {
  return {
    id,
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

export class Subscriptions {
  constructor(
    private readonly ctx: EngineContext,
    private readonly inbox: Inbox,
  ) {}

  /** The ACTIVE subscription of an MSISDN to a merchant's service, if any. */
  active(msisdn: string, merchant: string, service: string): SubscriptionRecord | undefined {
    const { state } = this.ctx
    for (const id of state.subsByMsisdn.get(msisdn) ?? []) {
      const s = state.subs.get(id)
      if (s && s.status === 'ACTIVE' && s.merchant === merchant && s.service === service) return s
    }
    return undefined
  }

  /**
   * The first charge and the activation, shared by the three flows. Marks the verification (if any)
   * used either way. Answers the subscription, or the carrier code that refused it.
   */
  activate(
    tx: Tx,
    now: number,
    verif: VerificationRecord | null,
    found: { service: Service; integration: Integration },
    requestedLanguage: string | undefined,
    direct?: DirectActivation,
  ): SubscriptionRecord | Refused {
    const { world, ruleset } = this.ctx
    const { service, integration } = found
    const msisdn = verif?.msisdn ?? direct!.msisdn
    const country = verif?.country ?? direct!.country
    const carrierCode = verif?.carrier ?? direct!.carrier.code
    const merchant = verif?.merchant ?? direct!.merchant
    const settle = (result: string, subscriptionId: string | null) => {
      if (verif) tx.put('verifs', verif.id, { ...verif, attempts: verif.attempts + 1, state: 'used', result, subscription_id: subscriptionId })
    }
    const active = this.active(msisdn, merchant, service.code)
    if (active) {
      settle('ALREADY_SUBSCRIBED', null)
      return { refused: 'ALREADY_SUBSCRIBED', reason: `msisdn ${msisdn} has ACTIVE subscription ${active.id} to ${service.code}` }
    }
    // Before anything is charged or counted: the call may be made again once there is room.
    const max = this.ctx.limits.maxSubscriptions
    if (this.ctx.state.subs.size >= max) return { refused: 'ERROR', reason: subscriptionCapReason(max), http500: true, atCap: true }
    const decision = ruleset.decide(tx, { step: 'charge', msisdn, country, carrier: carrierCode, service: service.code })
    const failed = chargeDecision(decision, 'first charge')
    if (failed) {
      settle(failed.code, null)
      return decision!.effect.http ? { refused: failed.code, reason: failed.reason, http500: true } : { refused: failed.code, reason: failed.reason }
    }
    const price = integration.price ?? null
    const period = world.period(service.period)
    const language = requestedLanguage ? world.language(requestedLanguage, service) : (verif?.language ?? service.default_language)
    const sub = newSubscription(this.ctx.newId(), now, period, price, {
      merchant,
      service: service.code,
      country,
      carrier: carrierCode,
      msisdn,
      language,
      flow: verif?.flow ?? direct!.flow,
    })
    const activation = ruleset.effect(tx, { step: 'activate', msisdn, country, carrier: carrierCode, service: service.code })
    if (activation?.cancel_after) sub.carrier_cancel_at = addDuration(now, world.period(activation.cancel_after))
    tx.put('subs', sub.id, sub)
    this.ctx.queue.scheduleSub(sub)
    supersede(this.ctx, tx, now, sub)
    settle('SUCCESS', sub.id)
    const carrier = world.carriers.get(carrierCode)
    this.inbox.send(tx, now, {
      msisdn,
      from: carrier?.short_code ?? service.name,
      kind: 'welcome',
      subscription_id: sub.id,
      text: world.text('welcome', language, {
        service: service.name,
        price: price ? `${price.amount} ${price.currency}` : 'the agreed price',
        period: describePeriod(period, language),
        stop_hint: carrier?.flow === 'psms' && carrier.short_code ? world.text('stop_hint', language, { short_code: carrier.short_code }) : '',
      }),
    })
    return sub
  }

  /** Ends a subscription (no message: see `notifyCanceled`); answers the record after. `cause`: what ended it, for its history. */
  end(tx: Tx, now: number, sub: SubscriptionRecord, reason: string, cause: TransitionCause): SubscriptionRecord {
    const history = withTransition(sub, { at: now, from: sub.status, to: 'CANCELED', cause }, this.ctx.limits.chargesPerSubscription)
    return tx.put('subs', sub.id, {
      ...sub,
      status: 'CANCELED',
      canceled_at: now,
      cancel_reason: reason,
      next_retry_at: null,
      carrier_cancel_at: null,
      history,
    })
  }

  /**
   * The carrier cancels a subscription and tells the handset: asked through the control API
   * (`cancel`), or a rule's `cancel_after` falling due (`carrier_cancel`).
   */
  cancelByCarrier(tx: Tx, now: number, sub: SubscriptionRecord, cause: 'cancel' | 'carrier_cancel'): SubscriptionRecord {
    const done = this.end(tx, now, sub, 'carrier', cause)
    const service = this.ctx.world.service(done.merchant, done.service)
    const carrier = this.ctx.world.carriers.get(done.carrier)
    this.inbox.send(tx, now, {
      msisdn: done.msisdn,
      from: carrier?.short_code ?? carrier?.name ?? done.carrier,
      kind: 'canceled',
      subscription_id: done.id,
      text: this.ctx.world.text('canceled', done.language, { service: service?.name ?? done.service }),
    })
    return done
  }

  /**
   * A SandboxError when the subscription cannot be canceled: unknown, or ended (canceled already, or
   * EXPIRED with no carrier retry left). An EXPIRED one the carrier still retries can be: the retry
   * would charge it and make it ACTIVE again, and a cancel is how the user stops that.
   */
  cancelable(id: string): SubscriptionRecord {
    const sub = this.ctx.state.subs.get(id)
    if (!sub) throw new SandboxError('SUBSCRIPTION_NOT_FOUND', `no subscription ${id}`)
    if (sub.status === 'CANCELED') throw new SandboxError('ALREADY_CANCELED', `subscription ${id} was canceled at ${formatTimestamp(sub.canceled_at!)}`)
    if (hasEnded(sub)) {
      const by = sub.history?.filter((t) => t.cause === 'superseded').pop()?.superseded_by
      const left = by ? `its carrier retries were dropped when subscription ${by} superseded it` : 'the carrier has no retry left'
      throw new SandboxError('ALREADY_EXPIRED', `subscription ${id} expired at ${formatTimestamp(sub.expiry_at)} and ${left}: there is nothing to cancel`)
    }
    return sub
  }
}

/**
 * Drops the carrier retries of the EXPIRED subscriptions of a new one's MSISDN and service (any
 * flow, or a seed): a retry that succeeded would make a second ACTIVE one, charged for the same
 * time. Their history names the new subscription. (Their queue entries go stale: nothing is due.)
 */
export function supersede(ctx: EngineContext, tx: Tx, now: number, sub: SubscriptionRecord): void {
  const { state, limits } = ctx
  const ids = state.subsByMsisdn.get(sub.msisdn)
  if (!ids || ids.size < 2) return
  for (const id of ids) {
    const s = state.subs.get(id)
    if (!s || s.id === sub.id || s.status !== 'EXPIRED' || s.next_retry_at === null || s.merchant !== sub.merchant || s.service !== sub.service) continue
    const t: Transition = { at: now, from: 'EXPIRED', to: 'EXPIRED', cause: 'superseded', superseded_by: sub.id }
    tx.put('subs', s.id, { ...s, next_retry_at: null, history: withTransition(s, t, limits.chargesPerSubscription) })
  }
}

/**
 * A subscription's history with one more state change, cut to its latest `keep` (a new list: the
 * record's may have been seen). A record written before the history was kept starts with what its
 * charges tell.
 */
export function withTransition(sub: SubscriptionRecord, t: Transition, keep: number): Transition[] {
  const history = sub.history ?? derivedHistory(sub)
  return [...history.slice(Math.max(0, history.length - keep + 1)), t]
}

/**
 * Whether a subscription is over for good: CANCELED, or EXPIRED with no carrier retry pending (one
 * with a retry pending may be charged and made ACTIVE again). Nothing cancels an ended one.
 */
export function hasEnded(sub: SubscriptionRecord): boolean {
  return sub.status === 'CANCELED' || (sub.status === 'EXPIRED' && sub.next_retry_at === null)
}
