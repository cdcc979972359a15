/**
 * Mobile-originated SMS (the PSMS flow): a handset texts a short code a service's keyword (and is
 * subscribed), STOP (and its PSMS subscriptions there end), or anything else (and gets help).
 */
import { SandboxError } from './errors.js'
import type { EngineContext } from './context.js'
import type { Inbox } from './inbox.js'
import type { CarrierCode } from './outcomes.js'
import { decisionFailure } from './rules.js'
import type { Tx } from './tx.js'
import { hasEnded, type Subscriptions } from './subscriptions.js'
import type { Carrier, Integration, Service } from './world.js'

export interface MoInput {
  msisdn: string
  short_code: string
  text: string
}

/** What an MO message did, by `action`. */
export type MoResult =
  /** Sent to a short code the handset's carrier does not have. */
  | { action: 'ignored'; reason: string; carrier_code: string }
  /** STOP: the PSMS subscriptions it ended (none: `message` says so). */
  | { action: 'stop'; canceled: string[]; subscription_id: string }
  | { action: 'stop'; canceled: []; message: string }
  | { action: 'unknown_keyword'; keywords: string[]; message: string }
  /** A rule refused the MO, the handset has the service already, or its merchant is inactive (UNAUTHORIZED). */
  | { action: 'rejected'; code: string; reason: string }
  | { action: 'charge_failed'; code: CarrierCode; reason: string }
  | { action: 'subscribed'; subscription_id: string; service_code: string; merchant: string }

type PsmsService = { service: Service & { keyword: string }; integration: Integration }

export class MoFlow {
  constructor(
    private readonly ctx: EngineContext,
    private readonly inbox: Inbox,
    private readonly subscriptions: Subscriptions,
  ) {}

  /** The carrier of the MSISDN; a SandboxError when the sandbox has none (checked before the transaction). */
  carrier(msisdn: string): Carrier {
    const carrier = this.ctx.world.carrierOf(msisdn)
    if (!carrier) throw new SandboxError('INVALID_MSISDN', `no sandbox carrier owns ${msisdn}`)
    return carrier
  }

  receive(tx: Tx, now: number, carrier: Carrier, input: MoInput): MoResult {
    const { msisdn, short_code } = input
    const text = input.text.trim()
    this.inbox.send(tx, now, { msisdn, from: msisdn, to: short_code, direction: 'mo', kind: 'mo', text: input.text })
    if (carrier.short_code !== short_code) {
      this.inbox.send(tx, now, {
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
    if (words[0] === 'STOP')
      return this.stop(tx, now, carrier, input, words[1] ? services.find((s) => s.service.keyword.toUpperCase() === words[1]) : undefined)
    const match = services.find((s) => s.service.keyword.toUpperCase() === words[0])
    if (!match) {
      const first = services[0]?.service
      const service = first?.name ?? 'a service'
      this.inbox.send(tx, now, {
        msisdn,
        from: short_code,
        kind: 'help',
        text: this.ctx.world.text('psms_help', first?.default_language ?? 'en', { text, keyword: first?.keyword ?? '', short_code, service }),
      })
      return { action: 'unknown_keyword', keywords: services.map((s) => s.service.keyword), message: `"${text}" is not a keyword on ${short_code}` }
    }
    const country = carrier.country
    // An inactive merchant's API calls answer 401: nor is its service sold by MO (nothing charged).
    const owner = this.ctx.world.merchants.get(match.service.merchant)
    if (!owner?.active) {
      this.failureSms(tx, now, msisdn, short_code, match.service, 'UNAUTHORIZED')
      return {
        action: 'rejected',
        code: 'UNAUTHORIZED',
        reason: `service ${match.service.code} is of merchant ${match.service.merchant}, which is inactive (its API calls answer 401 UNAUTHORIZED): an MO for it subscribes no one`,
      }
    }
    const refused = decisionFailure(this.ctx.ruleset.decide(tx, { step: 'mo', msisdn, country, carrier: carrier.code, service: match.service.code }), 'MO')
    if (refused) {
      this.failureSms(tx, now, msisdn, short_code, match.service, refused.code)
      return { action: 'rejected', code: refused.code, reason: refused.reason }
    }
    const language = this.initLanguage(msisdn, match.service)
    const result = this.subscriptions.activate(tx, now, null, match, language, { msisdn, country, carrier, merchant: match.service.merchant, flow: 'psms' })
    const coverage = this.ctx.coverage
    const merchant = match.service.merchant
    if ('refused' in result) {
      // The session's subscriptions at their limit: the sandbox refused, not the carrier (no failure SMS). Coverage
      // counts the ERROR answered as an MO's ERROR counts (mo.charge_failed), as a Verify counts its 500, so the report shows the cap.
      if (result.atCap) {
        coverage.count(tx, merchant, 'mo.charge_failed', now, result.refused)
        return { action: 'rejected', code: result.refused, reason: result.reason }
      }
      this.failureSms(tx, now, msisdn, short_code, match.service, result.refused)
      const { refused: code, reason } = result
      if (code === 'ALREADY_SUBSCRIBED') return { action: 'rejected', code, reason }
      coverage.count(tx, merchant, 'mo.charge_failed', now, code)
      return { action: 'charge_failed', code, reason }
    }
    coverage.count(tx, merchant, 'mo.subscribed', now)
    coverage.changed(tx, result, now)
    return { action: 'subscribed', subscription_id: result.id, service_code: match.service.code, merchant }
  }

  /** STOP [keyword]: ends the handset's PSMS subscriptions on this carrier (only the keyword's, if one is given). */
  private stop(tx: Tx, now: number, carrier: Carrier, input: MoInput, only: PsmsService | undefined): MoResult {
    const { msisdn, short_code } = input
    const { state, world } = this.ctx
    const canceled: string[] = []
    for (const id of state.subsByMsisdn.get(msisdn) ?? []) {
      const s = state.subs.get(id)!
      if (s.carrier !== carrier.code || hasEnded(s) || s.flow !== 'psms') continue
      if (only && s.service !== only.service.code) continue
      const ended = this.subscriptions.end(tx, now, s, 'mo_stop', 'stop')
      this.ctx.coverage.count(tx, s.merchant, 'mo.stop', now)
      this.ctx.coverage.changed(tx, ended, now)
      const service = world.service(s.merchant, s.service)
      this.inbox.send(tx, now, {
        msisdn,
        from: short_code,
        kind: 'stop',
        subscription_id: s.id,
        text: world.text('stop', s.language, { service: service?.name ?? s.service }),
      })
      canceled.push(s.id)
    }
    if (!canceled.length) {
      this.inbox.send(tx, now, { msisdn, from: short_code, kind: 'help', text: `You have no active subscription on ${short_code}.` })
      return { action: 'stop', canceled: [], message: `no PSMS subscription of ${msisdn} on ${short_code} to cancel` }
    }
    return { action: 'stop', canceled, subscription_id: canceled[0]! }
  }

  /** The language of the latest PSMS Init for this MSISDN and service, if it asked for one (see `psmsLanguageKey`). */
  private initLanguage(msisdn: string, service: Service): string | undefined {
    return this.ctx.state.meta.get(psmsLanguageKey(service.merchant, service.code, msisdn)) as string | undefined
  }

  private failureSms(tx: Tx, now: number, msisdn: string, from: string, service: Service, code: string): void {
    this.inbox.send(tx, now, { msisdn, from, kind: 'failure', text: `${service.name}: your request could not be completed (${code}).` })
  }

  /** Services that can be bought by PSMS on this carrier. */
  private psmsServices(carrier: Carrier): PsmsService[] {
    const out: PsmsService[] = []
    for (const service of this.ctx.world.world.services) {
      const integration = service.integrations.find((i) => i.country === carrier.country)
      if (integration && service.keyword && this.ctx.world.carrierProvisioned(integration, carrier))
        out.push({ service: service as Service & { keyword: string }, integration })
    }
    return out
  }
}

/**
 * Where a PSMS Init keeps the language it asked for, so the welcome SMS of the MO that follows uses
 * it. Kept only while it differs from the service's default language (most keep nothing).
 */
export function psmsLanguageKey(merchant: string, service: string, msisdn: string): string {
  return `psms-language:${merchant}:${service}:${msisdn}`
}
