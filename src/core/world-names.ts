/**
 * The carrier, service and country names of a world, and the check of the names a rule's `match`
 * uses. Apart from the rule schema (`rule-check.ts`, zod): the engine needs the names at start,
 * the schema only when a rule comes in.
 */
import { nearestName } from './nearest.js'
import type { Rule, World } from './world-schema.js'

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

/** The names a rule's `match` may use, from a world. */
export function worldNames(world: World): WorldNames {
  return {
    carriers: new Set(world.carriers.map((c) => c.code)),
    services: new Set(world.services.map((s) => s.code)),
    countries: new Set(world.countries.map((c) => c.code)),
  }
}
