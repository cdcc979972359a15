/**
 * The carrier, service and country names of a world, and the check of the names a rule's `match`
 * uses. Apart from the rule schema (`rule-check.ts`, zod): the engine needs the names at start,
 * the schema only when a rule comes in.
 */
import { didYouMean } from './nearest.js'
import { regexCanMatchDigits } from './rules.js'
import { regexCostProblem } from './regex-cost.js'
import type { Rule, Step, World } from './world-schema.js'

/** The carrier, service and country names of a world. */
export interface WorldNames {
  carriers: Set<string>
  services: Set<string>
  countries: Set<string>
  /**
   * Each carrier's country, number prefixes and flow (a match's numbers must be some carrier's, and
   * a step only one flow has needs a carrier of that flow; unchecked without).
   */
  numbering?: Map<string, { country: string; prefixes: string[]; flow?: string; provisioned?: boolean }>
  /** Each service's carriers: the ones its integrations name, or every carrier of their countries (unchecked without). */
  serviceCarriers?: Map<string, Set<string>>
  /** Each service's countries, those of its integrations (unchecked without). */
  serviceCountries?: Map<string, Set<string>>
  /** Each service of an inactive merchant, with the merchant (unchecked without). */
  inactiveServices?: Map<string, string>
}

export interface RuleProblem {
  /** JSON path inside the rule. */
  path: PropertyKey[]
  message: string
}

const list = (names: Set<string>): string => [...names].sort().join(', ') || 'none'

/** Names in `match` that the world does not have. */
export function checkRuleNames(rule: Rule, names: WorldNames): RuleProblem[] {
  const out: RuleProblem[] = []
  const m = rule.match
  if (m.carrier !== undefined && !names.carriers.has(m.carrier))
    out.push({
      path: ['match', 'carrier'],
      message: `unknown carrier "${m.carrier}" (carriers: ${list(names.carriers)})${didYouMean(m.carrier, names.carriers)}`,
    })
  if (m.service !== undefined && !names.services.has(m.service))
    out.push({
      path: ['match', 'service'],
      message: `unknown service "${m.service}" (services: ${list(names.services)})${didYouMean(m.service, names.services)}`,
    })
  if (m.country !== undefined && !names.countries.has(m.country))
    out.push({
      path: ['match', 'country'],
      message: `unknown country "${m.country}" (countries: ${list(names.countries)})${didYouMean(m.country, names.countries, true)}`,
    })
  if (!out.length) out.push(...checkRuleNumbers(rule, names))
  if (!out.length) out.push(...checkRuleRegex(rule))
  if (!out.length) out.push(...checkRuleSold(rule, names))
  if (!out.length) out.push(...checkRuleSteps(rule, names))
  return out
}

/** A regex no string of digits has a match of: MSISDNs are digits only (`^\+60` is a usual slip). */
function checkRuleRegex(rule: Rule): RuleProblem[] {
  const regex = rule.match.regex
  // A regex too costly to compile is refused by the schema, by name: not compiled here either.
  if (regex === undefined || regexCostProblem(regex) || regexCanMatchDigits(regex)) return []
  return [
    {
      path: ['match', 'regex'],
      message: `${JSON.stringify(regex)} matches no string of digits, and MSISDNs are digits only (calling code first, no + or 00): the rule would match no MSISDN`,
    },
  ]
}

/**
 * The steps a subscription takes on the clock, whatever the integrations say now: a data file keeps
 * subscriptions made under another world (`dcb seed` makes them under the default one), and they renew.
 */
const CLOCK_STEPS: ReadonlySet<Step> = new Set<Step>(['renewal', 'retry'])

/**
 * A service, or a country, that nothing is sold in: every merchant call for it answers
 * MERCHANT_SERVICE_NOT_CONFIGURED before any step and no MO finds its keyword, so only the clock
 * steps of a subscription a data file kept could ever happen to it. A service of an inactive merchant
 * has none at all: its calls answer 401 before any step, an MO for it is refused before its `mo`
 * step, and the subscriptions a data file kept are not billed (no `renewal` or `retry`).
 */
function checkRuleSold(rule: Rule, names: WorldNames): RuleProblem[] {
  const sold = names.serviceCountries
  // Without a step (a rule the schema refused, checked for its names alone) there is nothing to tell.
  if (!sold || rule.step === undefined) return []
  const m = rule.match
  let field: 'service' | 'country' = 'country'
  let why: string
  const inactive = m.service === undefined ? undefined : names.inactiveServices?.get(m.service)
  let never = 'Init answers MERCHANT_SERVICE_NOT_CONFIGURED'
  if (inactive !== undefined) {
    field = 'service'
    why = `service ${m.service} is of merchant ${inactive}, which is inactive`
    never = `its API calls answer 401 UNAUTHORIZED, an MO for ${m.service} is refused and its subscriptions are not renewed`
  } else if (m.service !== undefined) {
    const countries = sold.get(m.service)
    if (!countries) return []
    if (!countries.size) {
      field = 'service'
      why = `service ${m.service} has no integration (it is sold in no country)`
    } else if (m.country !== undefined && !countries.has(m.country)) why = `service ${m.service} is not sold in "${m.country}" (only in ${list(countries)})`
    else return []
  } else if (m.country !== undefined && ![...sold.values()].some((countries) => countries.has(m.country!))) why = `no service is sold in "${m.country}"`
  else return []
  const steps = Array.isArray(rule.step) ? rule.step : [rule.step]
  const dead = inactive !== undefined ? steps : steps.filter((s) => !CLOCK_STEPS.has(s))
  if (!dead.length) return []
  if (dead.length === steps.length) return [{ path: ['match', field], message: `${why}: ${never}, so the rule would decide nothing` }]
  const i = steps.indexOf(dead[0]!)
  return [{ path: ['step', i], message: `${why}: ${never}, so step "${dead[0]}" never happens: the rule would never decide it (leave it out of "step")` }]
}

/**
 * The steps only carriers of one flow have: an OTP is sent (and verified: Verify answers INVALID_PIN
 * for a redirect request before it decides anything, and a PSMS Init makes no request), an MO taken,
 * a consent page approved.
 */
const FLOW_STEPS: Partial<Record<Step, string>> = { otp: 'otp', verify: 'otp', mo: 'psms', consent: 'redirect' }

/**
 * The steps that happen only once Init (or an MO) found the carrier billing the service: on a carrier
 * not provisioned, or not one the service's integration names, Init answers CARRIER_NOT_SUPPORTED
 * before them and an MO finds no keyword. Not `api` (decided before that check), nor `status`,
 * `renewal` and `retry`: `dcb seed` puts subscriptions on any carrier of their country, provisioned or not.
 */
const SALE_STEPS: ReadonlySet<Step> = new Set<Step>(['init', 'otp', 'verify', 'consent', 'mo', 'charge', 'activate'])

/**
 * A step of the rule that no carrier its `match` leaves (by `carrier`, `country`, the numbers of
 * `msisdn` or `prefix`, and the carriers of `service`) ever has: a rule for OTPs on a PSMS carrier
 * would load and never decide anything, and so would one for an Init on a carrier not provisioned.
 */
function checkRuleSteps(rule: Rule, names: WorldNames): RuleProblem[] {
  if (!names.numbering || rule.step === undefined) return []
  const m = rule.match
  const numbers = (prefixes: string[]) =>
    (m.msisdn === undefined || prefixes.some((p) => m.msisdn!.startsWith(p))) &&
    (m.prefix === undefined || prefixes.some((p) => p.startsWith(m.prefix!) || m.prefix!.startsWith(p)))
  const matched = [...names.numbering].filter(
    ([code, c]) => (m.carrier === undefined || code === m.carrier) && (m.country === undefined || c.country === m.country) && numbers(c.prefixes),
  )
  const serviceHas = (code: string) => m.service === undefined || (names.serviceCarriers?.get(m.service)?.has(code) ?? true)
  const carriers = matched.filter(([code]) => serviceHas(code))
  // The carriers that bill a service (the rule's, else any): provisioned, and named (or left) by its integration.
  const billing = (code: string, c: { provisioned?: boolean }) =>
    c.provisioned !== false &&
    (m.service !== undefined ? serviceHas(code) : !names.serviceCarriers || [...names.serviceCarriers.values()].some((codes) => codes.has(code)))
  const steps = Array.isArray(rule.step) ? rule.step : [rule.step]
  // With other steps beside it the rule does decide those: only this step is dead weight.
  const outcome = steps.length > 1 ? `the rule would never decide it (leave it out of "step")` : 'the rule would decide nothing'
  const at = (i: number) => (Array.isArray(rule.step) ? ['step', i] : ['step'])
  for (const [i, step] of steps.entries()) {
    const flow = FLOW_STEPS[step]
    const ofFlow = (c: { flow?: string }) => !flow || c.flow === undefined || c.flow === flow
    // A carrier of the flow that does not bill the service is told below, by what it does not bill.
    const named = m.carrier === undefined ? undefined : names.numbering.get(m.carrier)
    if (flow && !carriers.some(([, c]) => ofFlow(c)) && !(named && ofFlow(named))) {
      const which =
        m.carrier !== undefined
          ? `carrier ${m.carrier} is ${aFlow(named?.flow)} carrier`
          : `no carrier${where(m)}${m.service !== undefined ? ` of service ${m.service}` : ''} is ${aFlow(flow)} carrier`
      return [{ path: at(i), message: `step "${step}" happens only on ${flow} carriers and ${which}: ${outcome}` }]
    }
    if (!SALE_STEPS.has(step)) continue
    if (matched.some(([code, c]) => ofFlow(c) && billing(code, c))) continue
    // Told by the service's carriers where it has some here (they are not provisioned), else by those of the match.
    const own = carriers.filter(([, c]) => ofFlow(c))
    const pool = own.length ? own : matched.filter(([, c]) => ofFlow(c))
    const why = ([code, c]: [string, { provisioned?: boolean }]) =>
      c.provisioned === false
        ? `carrier ${code} is not provisioned`
        : m.service !== undefined
          ? `service ${m.service} is not billed through carrier ${code}`
          : `no service is billed through carrier ${code}`
    const which = !pool.length
      ? `the sandbox has no carrier${where(m)}`
      : m.carrier !== undefined
        ? why(pool[0]!)
        : `no carrier${where(m)}${own.length && m.service !== undefined ? ` of service ${m.service}` : ''} does (${pool.map(why).join('; ')})`
    const others = step === 'mo' ? 'an MO to the others finds no keyword' : 'Init answers CARRIER_NOT_SUPPORTED on the others'
    return [{ path: at(i), message: `step "${step}" happens only on carriers that bill the service (${others}) and ${which}: ${outcome}` }]
  }
  return []
}

/** Where a match's carriers are, as a message reads it: ` in "my" with numbers starting with 6019`. */
const where = (m: Rule['match']) =>
  `${m.country !== undefined ? ` in "${m.country}"` : ''}${
    m.msisdn !== undefined ? ` with number ${m.msisdn}` : m.prefix !== undefined ? ` with numbers starting with ${m.prefix}` : ''
  }`

/** A flow with its article, as a message reads it: "an otp", "a psms". */
const aFlow = (flow: string | undefined) => `${/^[aeiou]/.test(flow ?? '') ? 'an' : 'a'} ${flow}`

/**
 * Parts of a `match` that no MSISDN can satisfy together, so the rule would load and never decide
 * anything: a carrier of another country, a number or prefix no carrier (of that carrier or country)
 * has, a number that does not have the prefix or ending given with it.
 */
function checkRuleNumbers(rule: Rule, names: WorldNames): RuleProblem[] {
  const m = rule.match
  const numbering = names.numbering
  if (!numbering) return []
  const carrier = m.carrier === undefined ? undefined : numbering.get(m.carrier)
  if (carrier && m.country !== undefined && carrier.country !== m.country)
    return [{ path: ['match', 'carrier'], message: `carrier "${m.carrier}" is in "${carrier.country}", not "${m.country}": the rule would match no MSISDN` }]
  const none = m.carrier !== undefined ? `carrier ${m.carrier} has no` : `no carrier${m.country !== undefined ? ` in "${m.country}"` : ''} has`
  const owned = (digits: string, whole: boolean) =>
    [...numbering].some(
      ([code, c]) =>
        (m.carrier === undefined || code === m.carrier) &&
        (m.country === undefined || c.country === m.country) &&
        c.prefixes.some((p) => digits.startsWith(p) || (!whole && p.startsWith(digits))),
    )
  if (m.msisdn !== undefined) {
    if (!owned(m.msisdn, true)) return [{ path: ['match', 'msisdn'], message: `${none} number ${m.msisdn}: the rule would match no MSISDN` }]
    if (m.prefix !== undefined && !m.msisdn.startsWith(m.prefix))
      return [{ path: ['match', 'prefix'], message: `${m.msisdn} does not start with ${m.prefix}: the rule would match no MSISDN` }]
    if (m.ending !== undefined && !m.msisdn.endsWith(m.ending))
      return [{ path: ['match', 'ending'], message: `${m.msisdn} does not end in ${m.ending}: the rule would match no MSISDN` }]
  } else if (m.prefix !== undefined && !owned(m.prefix, false))
    return [{ path: ['match', 'prefix'], message: `${none} numbers starting with ${m.prefix}: the rule would match no MSISDN` }]
  return []
}

/** The names a rule's `match` may use, from a world. */
export function worldNames(world: World): WorldNames {
  const inactive = new Set(world.merchants.filter((m) => !m.active).map((m) => m.id))
  return {
    carriers: new Set(world.carriers.map((c) => c.code)),
    services: new Set(world.services.map((s) => s.code)),
    countries: new Set(world.countries.map((c) => c.code)),
    numbering: new Map(world.carriers.map((c) => [c.code, { country: c.country, prefixes: c.prefixes, flow: c.flow, provisioned: c.provisioned }])),
    serviceCarriers: new Map(
      world.services.map((s) => [
        s.code,
        new Set(s.integrations.flatMap((i) => i.carriers ?? world.carriers.filter((c) => c.country === i.country).map((c) => c.code))),
      ]),
    ),
    serviceCountries: new Map(world.services.map((s) => [s.code, new Set(s.integrations.map((i) => i.country))])),
    inactiveServices: new Map(world.services.filter((s) => inactive.has(s.merchant)).map((s) => [s.code, s.merchant])),
  }
}
