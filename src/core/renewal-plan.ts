/**
 * What renewing a subscription needs from the world and the rules: its period, price, SMS sender
 * and text, candidate rules, the constant part of its clock events. Made once per queue entry (it
 * rides on it: a year of renewals asks twelve times, not once per renewal) and anew when the rules
 * change.
 */
import { EventSubject } from './events.js'
import type { Candidates, RuleSet } from './ruleset.js'
import type { SubscriptionRecord } from './state.js'
import type { Duration } from './time.js'
import type { Carrier, WorldIndex } from './world.js'

export interface RenewalPlan {
  /**
   * Whether the carrier bills the subscription's renewals and retries: not for an inactive merchant
   * (a data file kept its subscriptions), whose API calls answer 401 and whose keyword sells nothing.
   */
  billed: boolean
  carrier: Carrier | undefined
  period: Duration
  price: { amount: string; currency: string } | null
  from: string
  vars: { service: string; price: string; code: string }
  renewalText: string
  renewalRules: Candidates
  retryRules: Candidates
  /** The constant part of the subscription's clock events. */
  subject: EventSubject
  /** The rules version the plan was made under. */
  rules: number
}

export function renewalPlan(world: WorldIndex, ruleset: RuleSet, sub: SubscriptionRecord): RenewalPlan {
  const service = world.service(sub.merchant, sub.service)
  const carrier = world.carriers.get(sub.carrier)
  const price = service?.integrations.find((i) => i.country === sub.country)?.price ?? null
  const vars = { service: service?.name ?? sub.service, price: price ? `${price.amount} ${price.currency}` : '', code: '' }
  const ctx = { msisdn: sub.msisdn, country: sub.country, carrier: sub.carrier, service: sub.service }
  return {
    billed: world.merchants.get(sub.merchant)?.active !== false,
    carrier,
    period: world.period(service?.period ?? 'P1M'),
    price,
    from: carrier?.short_code ?? service?.name ?? sub.carrier,
    vars,
    renewalText: world.text('renewal', sub.language, vars),
    renewalRules: ruleset.matching({ ...ctx, step: 'renewal' }),
    retryRules: ruleset.matching({ ...ctx, step: 'retry' }),
    subject: new EventSubject(sub),
    rules: ruleset.version,
  }
}
