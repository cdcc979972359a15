/**
 * The lifecycle events the clock runs, in time order: renewals, the carrier's retries of a failed
 * renewal, carrier cancellations (a rule's `cancel_after`), and OTP / consent expiries. An inactive
 * merchant's subscriptions are not billed: they lapse (EXPIRED) at their expiry.
 */
import type { Budget, EngineContext } from './context.js'
import type { EventLog } from './events.js'
import type { Inbox } from './inbox.js'
import type { OtpSms } from './otp-sms.js'
import { subEventAt } from './queue.js'
import { renewalPlan, type RenewalPlan } from './renewal-plan.js'
import type { Charge, SubscriptionRecord } from './state.js'
import type { Tx } from './tx.js'
import { withTransition, type Subscriptions } from './subscriptions.js'
import { addDuration } from './time.js'
import { ruleReason } from './why.js'
import type { Rule } from './world-schema.js'

export class Renewals {
  constructor(
    private readonly ctx: EngineContext,
    private readonly subscriptions: Subscriptions,
    private readonly inbox: Inbox,
    /** Delivers the late OTP SMS that fall due. */
    private readonly otpSms?: OtpSms,
  ) {}

  /**
   * Runs every event due at or before `to`, each at its own time, in time order. With a `budget`
   * (a batch of a long move), stops once it is spent, between two event times (see `RunDue`), and
   * answers where; null when every event up to `to` ran.
   */
  runDue(tx: Tx, to: number, log: EventLog | null, budget?: Budget): number | null {
    const { queue, state, ruleset } = this.ctx
    let ran = 0
    let limit = budget ? budget.events : Infinity
    let last = budget?.floor ?? -Infinity
    const overTime = budget?.overTime
    let check = overTime ? 1024 : Infinity
    for (;;) {
      const top = queue.peek()
      if (!top || top.at > to) return null
      // A batch ends between two times, never inside one: every event at `last` has run.
      if (ran >= limit && top.at > last) return last
      if (!queue.live(top)) {
        queue.pop()
        continue
      }
      if (++ran >= check) {
        check += 1024
        if (overTime!()) limit = ran
      }
      if (top.at > last) last = top.at
      if (top.kind === 'sms') {
        queue.pop()
        this.otpSms?.deliver(tx, top.at, top.id, log)
        continue
      }
      if (top.kind === 'verif') {
        queue.pop()
        const v = state.verifs.get(top.id)!
        tx.put('verifs', v.id, { ...v, state: 'expired' })
        log?.verif(top.at, v.flow === 'otp' ? 'otp_expired' : 'consent_expired', v)
        continue
      }
      const sub = state.subs.get(top.id)!
      // The plan rides on the entry (valid while the rules stay as they are).
      const plan = top.plan?.rules === ruleset.version ? top.plan : (top.plan = renewalPlan(this.ctx.world, ruleset, sub))
      const next = subEventAt(this.subEvent(tx, sub, top.at, log, plan))
      if (queue.peek() !== top) {
        // Something was queued meanwhile (nothing does today): the entry stays behind, stale.
        queue.schedule('sub', sub.id, next)
      } else if (next === null) {
        queue.pop()
      } else {
        // The same entry, moved to the subscription's next event (no allocation, one sift per renewal).
        queue.moveTop(top, next)
      }
    }
  }

  /** Runs a subscription's due event (carrier cancellation, renewal or retry); answers the record after it. */
  private subEvent(tx: Tx, sub: SubscriptionRecord, at: number, log: EventLog | null, plan: RenewalPlan): SubscriptionRecord {
    if (sub.status === 'ACTIVE' && sub.carrier_cancel_at !== null && sub.carrier_cancel_at <= sub.expiry_at && at === sub.carrier_cancel_at) {
      const done = this.subscriptions.cancelByCarrier(tx, at, sub, 'carrier_cancel')
      this.ctx.coverage.count(tx, sub.merchant, 'carrier.canceled', at)
      this.ctx.coverage.changed(tx, done, at)
      log?.sub(at, 'carrier_canceled', done, plan.subject)
      return done
    }
    const isRetry = sub.status === 'EXPIRED'
    if (!plan.billed) {
      // An inactive merchant's subscription: nothing is charged, so it lapses at its expiry (a pending retry is dropped).
      const lapsed: SubscriptionRecord = { ...sub, status: 'EXPIRED', next_retry_at: null }
      if (!isRetry) lapsed.history = withTransition(sub, { at, from: 'ACTIVE', to: 'EXPIRED', cause: 'lapsed' }, this.ctx.limits.chargesPerSubscription)
      tx.put('subs', sub.id, lapsed)
      log?.sub(at, isRetry ? 'retry_skipped' : 'renewal_skipped', lapsed, plan.subject, 'UNAUTHORIZED')
      return lapsed
    }
    const { period, price } = plan
    const keep = this.ctx.limits.chargesPerSubscription
    const kind = isRetry ? 'retry' : 'renewal'
    const decision = this.ctx.ruleset.first(tx, kind, sub.id, isRetry ? plan.retryRules : plan.renewalRules)
    const code = decision?.effect.error
    const charge: Charge = { at, kind, outcome: code ?? 'SUCCESS', amount: price?.amount ?? null, currency: price?.currency ?? null }
    // Which rule failed it: what a support engineer asks of a failed renewal (one string per rule and outcome, shared).
    if (code) charge.reason = this.reasonOf(decision!.rule, `${kind} ${code}`)
    if (!code && !isRetry) {
      const expiry = addDuration(sub.anchor_at, period, sub.periods + 1)
      // A record this transaction made already (an earlier renewal of a long advance) renews in place.
      const renewed = tx.renewOwned(sub, charge, expiry, keep) ? sub : tx.put('subs', sub.id, renewedCopy(sub, charge, expiry, keep))
      this.inbox.chargeMade(renewed, plan)
      this.ctx.coverage.count(tx, sub.merchant, 'renewal.succeeded', at)
      log?.sub(at, 'renewed', renewed, plan.subject)
      return renewed
    }
    const charges = [...sub.charges.slice(-(keep - 1)), charge]
    if (!code) {
      const renewed: SubscriptionRecord = {
        ...sub,
        status: 'ACTIVE',
        anchor_at: at,
        periods: 1,
        expiry_at: addDuration(at, period),
        retries: 0,
        next_retry_at: null,
        charges,
        charge_count: sub.charge_count + 1,
        history: withTransition(sub, { at, from: 'EXPIRED', to: 'ACTIVE', cause: 'retry' }, keep),
      }
      tx.put('subs', sub.id, renewed)
      this.inbox.chargeMade(renewed, plan)
      this.ctx.coverage.count(tx, sub.merchant, 'retry.succeeded', at)
      log?.sub(at, 'retry_succeeded', renewed, plan.subject)
      return renewed
    }
    const retry = plan.carrier?.retry ?? { every: 'P1D', max: 0 }
    const retries = isRetry ? sub.retries + 1 : 0
    const nextRetry = retries < retry.max ? addDuration(at, this.ctx.world.period(retry.every)) : null
    const failed: SubscriptionRecord = { ...sub, status: 'EXPIRED', retries, next_retry_at: nextRetry, charges, charge_count: sub.charge_count + 1 }
    if (!isRetry) failed.history = withTransition(sub, { at, from: 'ACTIVE', to: 'EXPIRED', cause: 'renewal' }, keep)
    tx.put('subs', sub.id, failed)
    this.inbox.chargeMade(failed, plan)
    // A failed retry counts as retry.failed; the subscription was EXPIRED already, so it is no change to reconcile.
    if (isRetry) this.ctx.coverage.count(tx, sub.merchant, 'retry.failed', at, code)
    else {
      this.ctx.coverage.count(tx, sub.merchant, 'renewal.failed', at, code)
      this.ctx.coverage.changed(tx, failed, at)
    }
    log?.sub(at, isRetry ? 'retry_failed' : 'renewal_failed', failed, plan.subject, code, charge.reason)
    return failed
  }

  private readonly reasons = new WeakMap<Rule, Map<string, string>>()
  /** `ruleReason`, kept per rule: a long move fails thousands of charges by a few rules. */
  private reasonOf(rule: Rule, what: string): string {
    let texts = this.reasons.get(rule)
    if (!texts) this.reasons.set(rule, (texts = new Map()))
    let text = texts.get(what)
    if (text === undefined) texts.set(what, (text = ruleReason(rule, what)))
    return text
  }
}

/** A subscription renewed for one more period (a new record: the old one may have been seen). */
function renewedCopy(sub: SubscriptionRecord, charge: Charge, expiry: number, keep: number): SubscriptionRecord {
  const charges = [...sub.charges.slice(-(keep - 1)), charge]
  return { ...sub, periods: sub.periods + 1, expiry_at: expiry, charges, charge_count: sub.charge_count + 1 }
}
