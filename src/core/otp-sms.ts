/**
 * The OTP SMS of a verification request: sent at Init, unless the rule of the `otp` step withholds it
 * (`deliver: false`: never delivered; `deliver_after`: delivered once the sandbox clock passes its
 * send time plus the duration, by the event queue). The code exists either way: the right one verifies.
 * A withheld SMS is kept on its verification request (`withheld`, `deliver_at`), so it is stored
 * and survives a restart like the rest of the state, and it is gone when the cap drops the request.
 */
import type { EngineContext } from './context.js'
import type { EventLog } from './events.js'
import type { Inbox } from './inbox.js'
import type { RuleDecision } from './ruleset.js'
import { OtpTexts } from './sms-text.js'
import type { SmsRecord, VerificationRecord } from './state.js'
import { addDuration, formatTimestamp } from './time.js'
import type { Tx } from './tx.js'
import { quote, ruleReason } from './why.js'

/** Where an OTP is (`otp-sms.ts`, `lookup`): its SMS, why there is none, or no such verification request. */
export type OtpLookup = { sms: SmsRecord } | { missing: string; wait: boolean; due?: number } | { unknown: string }

/** The meta record naming an MSISDN's latest OTP verification whose SMS is withheld (none: its latest OTP was delivered). */
export function withheldKey(msisdn: string): string {
  return `otp-withheld:${msisdn}`
}

export class OtpSms {
  /** The OTP messages' templates (their texts are rendered when read). */
  private readonly texts: OtpTexts

  constructor(
    private readonly ctx: EngineContext,
    private readonly inbox: Inbox,
  ) {
    this.texts = new OtpTexts(ctx.world)
  }

  /**
   * The OTP SMS of a verification request just made (`verif` as stored by this transaction), as the
   * `otp` step's rule says: sent now, never, or later. Counts `otp.undelivered` or `otp.late`.
   */
  send(tx: Tx, now: number, verif: VerificationRecord, decision: RuleDecision | undefined): void {
    const { state, coverage } = this.ctx
    const key = withheldKey(verif.msisdn)
    const effect = decision?.effect
    if (effect?.deliver !== false && effect?.deliver_after === undefined) {
      // Its latest OTP is in the inbox again: an older withheld one no longer answers for the MSISDN.
      if (state.meta.has(key)) tx.del('meta', key)
      this.inbox.send(tx, now, this.message(verif))
      return
    }
    tx.put('meta', key, verif.id)
    if (effect.deliver === false) {
      tx.put('verifs', verif.id, { ...verif, withheld: ruleReason(decision!.rule, 'OTP SMS not delivered (effect deliver false)') })
      coverage.count(tx, verif.merchant, 'otp.undelivered', now)
      return
    }
    const at = addDuration(now, this.ctx.world.period(effect.deliver_after!))
    const why = ruleReason(decision!.rule, `OTP SMS delivered ${effect.deliver_after} late, at ${formatTimestamp(at)} (sandbox time)`)
    tx.put('verifs', verif.id, { ...verif, withheld: why, deliver_at: at })
    this.ctx.queue.schedule('sms', verif.id, at)
    coverage.count(tx, verif.merchant, 'otp.late', now)
  }

  /** A late SMS falls due (the event queue): it reaches the inbox at `at`, its send time kept. */
  deliver(tx: Tx, at: number, id: string, log: EventLog | null): void {
    const v = this.ctx.state.verifs.get(id)
    if (!v || v.deliver_at !== at) return
    const { withheld: _w, deliver_at: _d, ...delivered } = v
    tx.put('verifs', v.id, delivered)
    const key = withheldKey(v.msisdn)
    if (this.ctx.state.meta.get(key) === v.id) tx.del('meta', key)
    this.inbox.send(tx, at, { ...this.message(v), sent_at: v.created_at })
    log?.verif(at, 'otp_delivered', v)
  }

  /**
   * An OTP SMS in the inbox: a verification request's, or (by MSISDN) that of the MSISDN's latest
   * Init, whatever older ones it holds. Else why there is none (`missing`), whether a wait may see
   * one come (`wait`), and when a late one is due.
   */
  lookup(q: { msisdn?: string; verif_request_id?: string }): OtpLookup {
    const { state } = this.ctx
    if (q.verif_request_id !== undefined) {
      const v = state.verifs.get(q.verif_request_id)
      if (!v) return { unknown: `no verification request ${quote(q.verif_request_id)} in this session (it never was, or the oldest were dropped past the cap)` }
      if (v.flow !== 'otp') return { missing: `verification request ${v.id} is a redirect consent request: no OTP is sent for it`, wait: false }
      const sms = this.of(v)
      if (sms) return { sms }
      if (v.withheld === undefined)
        return {
          missing: `the OTP SMS of verification request ${v.id} is no longer in the inbox of ${v.msisdn} (a handset keeps its latest ${this.ctx.limits.smsPerMsisdn} messages)`,
          wait: false,
        }
      return this.withheld(v, `the OTP SMS of verification request ${v.id}`)
    }
    const msisdn = q.msisdn ?? ''
    const v = this.withheldFor(msisdn)
    if (v) return this.withheld(v, `the latest OTP sent to ${msisdn} (verification request ${v.id})`)
    const sms = this.inbox.latestOtp(msisdn)
    return sms ? { sms } : { missing: `no OTP has been sent to ${msisdn}`, wait: true }
  }

  private withheld(v: VerificationRecord, what: string): OtpLookup {
    if (v.deliver_at === undefined) return { missing: `${what} was never delivered: ${v.withheld}`, wait: false }
    return { missing: `${what} has not reached the inbox yet: ${v.withheld}`, wait: true, due: v.deliver_at }
  }

  /** A verification request's OTP SMS as it is in its handset's inbox, or undefined (not delivered, or pushed out by the cap). */
  of(v: VerificationRecord): SmsRecord | undefined {
    const { state } = this.ctx
    const ids = state.smsIdsOf(v.msisdn)
    for (let i = ids.length - 1; i >= 0; i--) {
      const m = state.sms.get(ids[i]!)!
      if (m.kind === 'otp' && m.verif_request_id === v.id) return m
    }
    return undefined
  }

  /** The MSISDN's latest OTP verification request when its SMS is withheld (never delivered, or not yet). */
  withheldFor(msisdn: string): VerificationRecord | undefined {
    const id = this.ctx.state.meta.get(withheldKey(msisdn))
    const v = typeof id === 'string' ? this.ctx.state.verifs.get(id) : undefined
    return v?.withheld !== undefined ? v : undefined
  }

  /** The OTP SMS of a verification request (its service, language and the carrier's TTL from the world). */
  private message(v: VerificationRecord): Parameters<Inbox['send']>[2] {
    const { world } = this.ctx
    const name = world.service(v.merchant, v.service)?.name ?? v.service
    const ttl = world.period(world.carriers.get(v.carrier)?.otp.ttl ?? 'PT5M')
    const minutes = Math.round(ttl.ms / 60_000) + ttl.months * 43_200
    return { msisdn: v.msisdn, from: name, kind: 'otp', text: this.texts.of(v.language, name, minutes), verif_request_id: v.id, otp: v.otp! }
  }
}
