/**
 * The carrier, service and country names of a world, and the check of the names a rule's `match`
 * uses. Apart from the rule schema (`rule-check.ts`, zod): the engine needs the names at start,
 * the schema only when a rule comes in.
 */
import { nearestName } from './nearest.js'
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
  numbering?: Map<string, { country: string; prefixes: string[]; flow?: string }>
  /** Each service's carriers: the ones its integrations name, or every carrier of their countries (unchecked without). */
  serviceCarriers?: Map<string, Set<string>>
}

export interface RuleProblem {
  /** JSON path inside the rule. */
  path: PropertyKey[]
  message: string
}

const list = (names: Set<string>): string => [...names].sort().join(', ') || 'none'
/** `; did you mean X?` when a name is a likely typo of one the world has. */
const meant = (name: string, names: Set<string>): string => {
  const near = nearestName(name, names)
  return near === undefined ? '' : `; did you mean ${near}?`
}

/** Names in `match` that the world does not have. */
export function checkRuleNames(rule: Rule, names: WorldNames): RuleProblem[] {
  const out: RuleProblem[] = []
  const m = rule.match
  if (m.carrier !== undefined && !names.carriers.has(m.carrier))
    out.push({ path: ['match', 'carrier'], message: `unknown carrier "${m.carrier}" (carriers: ${list(names.carriers)})${meant(m.carrier, names.carriers)}` })
  if (m.service !== undefined && !names.services.has(m.service))
    out.push({ path: ['match', 'service'], message: `unknown service "${m.service}" (services: ${list(names.services)})${meant(m.service, names.services)}` })
  if (m.country !== undefined && !names.countries.has(m.country))
    out.push({
      path: ['match', 'country'],
      message: `unknown country "${m.country}" (countries: ${list(names.countries)})${meant(m.country, names.countries)}`,
    })
  if (!out.length) out.push(...checkRuleNumbers(rule, names))
  if (!out.length) out.push(...checkRuleSteps(rule, names))
  return out
}

/** The steps only carriers of one flow have: an OTP is sent, an MO taken, a consent page approved. */
const FLOW_STEPS: Partial<Record<Step, string>> = { otp: 'otp', mo: 'psms', consent: 'redirect' }

/**
 * A step of the rule that no carrier its `match` leaves (by `carrier`, `country`, the numbers of
 * `msisdn` or `prefix`, and the carriers of `service`) ever has: a rule for OTPs on a PSMS carrier
 * would load and never decide anything.
 */
function checkRuleSteps(rule: Rule, names: WorldNames): RuleProblem[] {
  if (!names.numbering) return []
  const m = rule.match
  const numbers = (prefixes: string[]) =>
    (m.msisdn === undefined || prefixes.some((p) => m.msisdn!.startsWith(p))) &&
    (m.prefix === undefined || prefixes.some((p) => p.startsWith(m.prefix!) || m.prefix!.startsWith(p)))
  const carriers = [...names.numbering].filter(
    ([code, c]) =>
      (m.carrier === undefined || code === m.carrier) &&
      (m.country === undefined || c.country === m.country) &&
      numbers(c.prefixes) &&
      (m.service === undefined || (names.serviceCarriers?.get(m.service)?.has(code) ?? true)),
  )
  const steps = Array.isArray(rule.step) ? rule.step : [rule.step]
  for (const [i, step] of steps.entries()) {
    const flow = FLOW_STEPS[step]
    if (!flow || carriers.some(([, c]) => c.flow === undefined || c.flow === flow)) continue
    const which =
      m.carrier !== undefined
        ? `carrier ${m.carrier} is ${aFlow(carriers[0]?.[1].flow)} carrier`
        : `no carrier${m.country !== undefined ? ` in "${m.country}"` : ''}${
            m.msisdn !== undefined ? ` with number ${m.msisdn}` : m.prefix !== undefined ? ` with numbers starting with ${m.prefix}` : ''
          }${m.service !== undefined ? ` of service ${m.service}` : ''} is ${aFlow(flow)} carrier`
    // With other steps beside it the rule does decide those: only this step is dead weight.
    const outcome = steps.length > 1 ? `the rule would never decide it (leave it out of "step")` : 'the rule would decide nothing'
    return [
      {
        path: Array.isArray(rule.step) ? ['step', i] : ['step'],
        message: `step "${step}" happens only on ${flow} carriers and ${which}: ${outcome}`,
      },
    ]
  }
  return []
}

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
  return {
    carriers: new Set(world.carriers.map((c) => c.code)),
    services: new Set(world.services.map((s) => s.code)),
    countries: new Set(world.countries.map((c) => c.code)),
    numbering: new Map(world.carriers.map((c) => [c.code, { country: c.country, prefixes: c.prefixes, flow: c.flow }])),
    serviceCarriers: new Map(
      world.services.map((s) => [
        s.code,
        new Set(s.integrations.flatMap((i) => i.carriers ?? world.carriers.filter((c) => c.country === i.country).map((c) => c.code))),
      ]),
    ),
  }
}
