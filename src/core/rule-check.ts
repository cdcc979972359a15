/**
 * The one validation of a carrier rule, for every way a rule comes in (fixture files, the control
 * API, the library, the console): the schema with the step/effect table (`RuleSchema`), then the
 * names its `match` uses against the world it will run in.
 */
import { HINT_KEYS } from './nearest.js'
import { RuleSchema, type Rule } from './world-schema.js'
import { checkRuleNames, type RuleProblem, type WorldNames } from './world-names.js'

export { checkRuleNames, type RuleProblem, type WorldNames }

/** Checks a rule as given (schema, step/effect table, names); answers it, or its problems. */
export function validateRule(input: unknown, names: WorldNames): { ok: true; rule: Rule } | { ok: false; problems: RuleProblem[] } {
  const parsed = RuleSchema.safeParse(input, HINT_KEYS)
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
