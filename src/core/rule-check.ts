/**
 * The one validation of a carrier rule, for every way a rule comes in (fixture files, the control
 * API, the library, the console): the schema with the step/effect table (`RuleSchema`), then the
 * names its `match` uses against the world it will run in.
 */
import { nearestName } from './nearest.js'
import { RuleSchema, type Rule } from './world-schema.js'

/** The carrier, service and country names of a world. */
export interface WorldNames {
  carriers: Set<string>
  services: Set<string>
  countries: Set<string>
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
  return out
}

/** Checks a rule as given (schema, step/effect table, names); answers it, or its problems. */
export function validateRule(input: unknown, names: WorldNames): { ok: true; rule: Rule } | { ok: false; problems: RuleProblem[] } {
  const parsed = RuleSchema.safeParse(input)
  if (!parsed.success) {
    // The names in `match` are checked too, so one answer names every problem of the rule.
    const match = (input as { match?: unknown } | null)?.match
    const given = match && typeof match === 'object' ? (match as Record<string, unknown>) : {}
    const text = (k: string) => (typeof given[k] === 'string' ? (given[k] as string) : undefined)
    const unknownNames = checkRuleNames({ match: { carrier: text('carrier'), service: text('service'), country: text('country') } } as Rule, names)
    const seen = new Set(parsed.error.issues.map((i) => i.path.join('.')))
    return {
      ok: false,
      problems: [...parsed.error.issues.map((i) => ({ path: i.path, message: i.message })), ...unknownNames.filter((p) => !seen.has(p.path.join('.')))],
    }
  }
  const problems = checkRuleNames(parsed.data, names)
  return problems.length ? { ok: false, problems } : { ok: true, rule: parsed.data }
}
