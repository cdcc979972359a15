/**
 * The consent (redirect) flow: the page a handset's owner opens from the Init answer, and their
 * approval (the activation) or denial, answered as where to send the browser back to.
 */
import { SandboxError } from './errors.js'
import type { EngineContext } from './context.js'
import type { CarrierCode } from './outcomes.js'
import { decisionFailure } from './rules.js'
import type { VerificationRecord } from './state.js'
import type { Tx } from './tx.js'
import type { Subscriptions } from './subscriptions.js'
import type { Integration, Service } from './world.js'

/** What the consent page shows: the request, the service, and why it cannot be approved (or null). */
export interface ConsentView {
  verif: VerificationRecord
  service: Service
  integration: Integration
  problem: string | null
}

/** How a consent ended: where to send the browser (the service's return URL with the result, if it has one). */
export interface ConsentResult {
  location: string | null
  result: 'SUCCESS' | 'PIN_EXPIRED' | 'FAILED_INIT_SUB' | CarrierCode
  subscription_id: string | null
  /** Why it failed (as a merchant API failure's X-DCB-Reason), on failures only. */
  reason?: string
}

export type ConsentAction = 'approve' | 'deny'

export class ConsentFlow {
  constructor(
    private readonly ctx: EngineContext,
    private readonly subscriptions: Subscriptions,
  ) {}

  /** What the consent page shows, or undefined when there is no such consent request. */
  view(id: string, now: number): ConsentView | undefined {
    const verif = this.ctx.state.verifs.get(id)
    if (!verif || verif.flow !== 'redirect') return undefined
    const found = this.ctx.world.integration(verif.merchant, verif.service, verif.country)
    if (!found) return undefined
    let problem: string | null = null
    if (verif.state === 'used' || verif.state === 'denied') problem = 'This link was already used.'
    else if (verif.state === 'expired' || now >= verif.expires_at) problem = 'This link has expired.'
    return { verif, ...found, problem }
  }

  decide(tx: Tx, now: number, id: string, action: ConsentAction): ConsentResult {
    const view = this.view(id, now)
    if (!view) throw new SandboxError('CONSENT_NOT_FOUND', `no consent request ${id}`)
    const { verif, service } = view
    const back = (query: Record<string, string>) => (service.return_url ? appendQuery(service.return_url, query) : null)
    if (view.problem)
      return {
        location: back({ status: 'FAIL', message: 'PIN_EXPIRED' }),
        result: 'PIN_EXPIRED',
        subscription_id: null,
        reason: view.problem.startsWith('This link was') ? `consent request ${id} was used already` : `consent request ${id} expired`,
      }
    const coverage = this.ctx.coverage
    if (action === 'deny') {
      tx.put('verifs', verif.id, { ...verif, state: 'denied', result: 'FAILED_INIT_SUB' })
      coverage.count(tx, verif.merchant, 'consent.denied', now)
      return {
        location: back({ status: 'FAIL', message: 'FAILED_INIT_SUB' }),
        result: 'FAILED_INIT_SUB',
        subscription_id: null,
        reason: `the subscriber denied consent`,
      }
    }
    const { msisdn, country, carrier } = verif
    const refused = decisionFailure(this.ctx.ruleset.decide(tx, { step: 'consent', msisdn, country, carrier, service: service.code }), 'consent approval')
    if (refused) {
      tx.put('verifs', verif.id, { ...verif, state: 'used', result: refused.code })
      coverage.count(tx, verif.merchant, 'consent.charge_failed', now, refused.code)
      return {
        location: back({ status: 'FAIL', message: refused.code }),
        result: refused.code as CarrierCode,
        subscription_id: null,
        reason: refused.reason,
      }
    }
    const result = this.subscriptions.activate(tx, now, verif, view, undefined)
    if ('refused' in result) {
      // At the session's limit of subscriptions no charge was tried (the page can be approved again once there is room);
      // the FAIL ERROR it goes back with counts as any other, as a Verify counts its 500, so the report shows the cap.
      coverage.count(tx, verif.merchant, 'consent.charge_failed', now, result.refused)
      return {
        location: back({ status: 'FAIL', message: result.refused }),
        result: result.refused,
        subscription_id: null,
        reason: result.reason,
      }
    }
    coverage.count(tx, verif.merchant, 'consent.approved', now)
    coverage.changed(tx, result, now)
    return { location: back({ status: 'SUCCESS', subscription_id: result.id }), result: 'SUCCESS', subscription_id: result.id }
  }
}

/** A URL with query parameters added (before its #fragment). */
export function appendQuery(url: string, query: Record<string, string>): string {
  const q = new URLSearchParams(query).toString()
  const hash = url.indexOf('#')
  const [head, frag] = hash >= 0 ? [url.slice(0, hash), url.slice(hash)] : [url, '']
  return `${head}${head.includes('?') ? '&' : '?'}${q}${frag}`
}
