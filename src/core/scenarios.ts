/**
 * The magic numbers and rules of the loaded world, described for people (`dcb scenarios`, the
 * control API, the README table). Generated from the data, so documentation cannot drift.
 */
import type { Rule } from './world-schema.js'
import type { Engine } from './engine.js'

export interface Scenario {
  id: string
  source: 'fixture' | 'runtime'
  match: string
  step: string
  outcome: string
  description: string
}

export function describeMatch(rule: Rule): string {
  const m = rule.match
  const parts: string[] = []
  if (m.msisdn) parts.push(`MSISDN ${m.msisdn}`)
  if (m.prefix) parts.push(`prefix ${m.prefix}`)
  if (m.ending) parts.push(`ending ${m.ending}`)
  if (m.ending_range) parts.push(`ending ${m.ending_range[0]}-${m.ending_range[1]}`)
  if (m.regex) {
    const nn = /^(\d*)\(\?<(\w+)>\\d\{(\d)\}\)\$$/.exec(m.regex)
    parts.push(nn ? `ending ${nn[1]}${nn[2]!.toUpperCase()}` : `regex /${m.regex}/`)
  }
  if (m.country) parts.push(`country ${m.country}`)
  if (m.carrier) parts.push(`carrier ${m.carrier}`)
  if (m.service) parts.push(`service ${m.service}`)
  return parts.join(', ') || 'any MSISDN'
}

export function describeEffect(rule: Rule): string {
  const e = rule.effect
  const parts: string[] = []
  if (e.error) parts.push(e.error)
  if (e.http) parts.push(`HTTP ${e.http} ERROR`)
  if (e.delay_ms) parts.push(`delay ${e.delay_ms} ms`)
  if (e.delay_per_unit) parts.push(`delay ${e.delay_per_unit.group.toUpperCase()} x ${e.delay_per_unit.ms} ms`)
  if (e.otp) parts.push(`OTP ${e.otp}`)
  if (e.cancel_after) parts.push(`carrier cancels after ${e.cancel_after}`)
  let out = parts.join(', ') || 'success'
  if (rule.nth !== undefined) out += ` (occurrence ${rule.nth} only)`
  if (rule.times !== undefined) out += ` (${rule.times} time${rule.times > 1 ? 's' : ''})`
  return out
}

export function describeRule(rule: Rule, source: Scenario['source']): Scenario {
  return {
    id: rule.id,
    source,
    match: describeMatch(rule),
    step: Array.isArray(rule.step) ? rule.step.join(', ') : rule.step,
    outcome: describeEffect(rule),
    description: rule.description ?? '',
  }
}

/** The rules in force, in the order consulted, described. */
export function scenarioList(engine: Engine): { scenarios: Scenario[] } {
  return {
    scenarios: engine.rules().rules.map(({ source, used: _used, ...rule }) => describeRule(rule as Rule, source === 'runtime' ? 'runtime' : 'fixture')),
  }
}

/** The scenarios as a Markdown table (the README's table is this, generated). */
export function scenarioTable(scenarios: Scenario[]): string {
  const rows = scenarios.map((s) => `| ${s.match} | ${s.step} | ${s.outcome} | ${s.description} |`)
  return ['| match | step | outcome | what it shows |', '|---|---|---|---|', ...rows].join('\n')
}
