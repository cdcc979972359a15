/**
 * The handsets' inboxes: sending SMS (with the per-handset and total caps), reading a handset's
 * messages, the carrier's charge notices (made from the charge history when read, not stored), and
 * the listeners told about every message as it is sent.
 */
import type { EngineContext } from './context.js'
import { renewalPlan, type RenewalPlan } from './renewal-plan.js'
import { withDeferredText, type DeferredText } from './sms-text.js'
import { joined, type Charge, type SmsRecord, type SubscriptionRecord } from './state.js'
import type { Tx } from './tx.js'

/**
 * An SMS to send: the inbox adds its id, number and time (`direction` mt and `to` the handset unless
 * given). Its text rendered, or a template rendered when the message is read (sms-text.ts).
 */
export type OutgoingSms = Omit<SmsRecord, 'id' | 'n' | 'at' | 'direction' | 'to' | 'text'> & {
  direction?: 'mt' | 'mo'
  to?: string
  text: string | DeferredText
}

export class Inbox {
  private readonly listeners = new Set<(sms: SmsRecord) => void>()

  constructor(private readonly ctx: EngineContext) {}

  send(tx: Tx, now: number, m: OutgoingSms): SmsRecord {
    const { state, limits } = this.ctx
    // `m` is the caller's fresh object: complete it rather than copy it (a long advance sends one per
    // renewal); one whose text is a template is built anew, its text a getter in its place.
    let rec: SmsRecord
    if (typeof m.text === 'string') {
      rec = m as SmsRecord
      joined(rec.text)
    } else rec = withDeferredText(m) as SmsRecord
    rec.id = this.ctx.newId()
    rec.n = state.smsSeq + 1
    rec.direction ??= 'mt'
    rec.to ??= rec.msisdn
    rec.at = now
    tx.put('sms', rec.id, rec)
    while (state.smsCountOf(rec.msisdn) > limits.smsPerMsisdn) tx.del('sms', state.smsIdsOf(rec.msisdn)[0]!)
    while (state.sms.size > limits.maxSms) tx.del('sms', state.oldest('sms')!)
    this.tell(rec)
    return rec
  }

  /**
   * The handset's messages, newest first (at most the per-handset cap): the messages sent to and
   * from it, and the carrier's notice of each renewal or retry charge of its subscriptions.
   */
  messagesOf(msisdn: string): SmsRecord[] {
    const { state } = this.ctx
    const ids = state.smsIdsOf(msisdn)
    const out: SmsRecord[] = []
    for (let i = ids.length - 1; i >= 0; i--) {
      const m = state.sms.get(ids[i]!)!
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
      .slice(0, this.ctx.limits.smsPerMsisdn)
  }

  /**
   * The latest messages of every handset, newest first (at most `limit`): the stored ones and the
   * charge notices of the same span. For the console; reads the whole store (not a hot path).
   */
  recent(limit: number): SmsRecord[] {
    const { state, world, ruleset } = this.ctx
    const stored: SmsRecord[] = []
    for (const m of state.sms.values()) if (m.kind !== 'renewal' && m.kind !== 'renewal_failed') stored.push(m)
    stored.sort((a, b) => b.at - a.at || b.n - a.n)
    const kept = stored.slice(0, limit)
    // Charge notices older than the oldest message kept would fall past the limit anyway.
    const since = kept.length === limit ? kept[kept.length - 1]!.at : -Infinity
    const notices: SmsRecord[] = []
    for (const sub of state.subs.values()) {
      const first = sub.charge_count - sub.charges.length + 1
      let plan: RenewalPlan | undefined
      for (let i = sub.charges.length - 1; i >= 0 && sub.charges[i]!.at >= since; i--) {
        const charge = sub.charges[i]!
        if (charge.kind !== 'first') notices.push(this.chargeNotice(sub, (plan ??= renewalPlan(world, ruleset, sub)), charge, first + i))
      }
    }
    if (!notices.length) return kept
    return kept
      .concat(notices)
      .sort((a, b) => b.at - a.at)
      .slice(0, limit)
  }

  /** How many messages `recent` lists with no limit: the stored ones and a notice per renewal or retry charge kept. */
  count(): number {
    const { state } = this.ctx
    let n = 0
    for (const m of state.sms.values()) if (m.kind !== 'renewal' && m.kind !== 'renewal_failed') n++
    for (const sub of state.subs.values()) for (const c of sub.charges) if (c.kind !== 'first') n++
    return n
  }

  /** The latest OTP SMS of an MSISDN, or undefined. */
  latestOtp(msisdn: string): SmsRecord | undefined {
    const { state } = this.ctx
    const ids = state.smsIdsOf(msisdn)
    for (let i = ids.length - 1; i >= 0; i--) {
      const m = state.sms.get(ids[i]!)!
      if (m.kind === 'otp') return m
    }
    return undefined
  }

  /** Calls `listener` for every SMS sent from now on; returns the unsubscribe function. */
  listen(listener: (sms: SmsRecord) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** A message another process sent (a shared store): its listeners hear it as if sent here. */
  heard(rec: SmsRecord): void {
    this.tell(rec)
  }

  /** Tells the listeners about the notice of a subscription's latest charge (nothing is stored: see chargeNotices). */
  chargeMade(sub: SubscriptionRecord, plan: RenewalPlan): void {
    if (!this.listeners.size) return
    this.tell(this.chargeNotice(sub, plan, sub.charges[sub.charges.length - 1]!, sub.charge_count))
  }

  /** After the operation (listeners never run inside a transaction). */
  private tell(rec: SmsRecord): void {
    if (!this.listeners.size) return
    queueMicrotask(() => {
      for (const l of this.listeners) l(rec)
    })
  }

  /**
   * Charge notices ("renewed", "renewal failed") are made from the charge history when a handset's
   * messages are read, not stored: a year over thousands of subscriptions stores no message per
   * renewal, and never pushes other handsets' OTPs out of the message cap.
   */
  private chargeNotices(msisdn: string): SmsRecord[] {
    const { state, world, ruleset } = this.ctx
    const out: SmsRecord[] = []
    for (const id of state.subsByMsisdn.get(msisdn) ?? []) {
      const sub = state.subs.get(id)
      if (!sub) continue
      const first = sub.charge_count - sub.charges.length + 1
      const plan = renewalPlan(world, ruleset, sub)
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
        : this.ctx.world.text(ok ? 'renewal' : 'renewal_failed', sub.language, { ...plan.vars, price, code: ok ? '' : charge.outcome })
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
}
