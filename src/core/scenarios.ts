/**
 * The magic numbers and rules of the loaded world, described for people (`dcb scenarios`, the
 * control API, the table of docs/reference/magic-endings.md). Generated from the data, so documentation cannot drift.
 */
import { describeDelay } from './delays.js'
import type { Rule, World } from './world-schema.js'
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
  if (e.fault) parts.push(`fault ${e.fault}${e.hang_ms !== undefined ? ` ${e.hang_ms} ms` : ''}`)
  if (e.http)
    parts.push(
      `HTTP ${e.http} ${e.body === undefined ? (e.http === 500 ? 'ERROR' : 'gateway page') : typeof e.body === 'object' ? 'text body' : e.body === 'gateway' ? 'gateway page' : e.body === 'empty' ? 'empty body' : 'ERROR'}`,
    )
  if (e.retry_after !== undefined) parts.push(`Retry-After ${e.retry_after}`)
  if (e.when) parts.push(e.when === 'after' ? 'after the call was done' : 'before the call')
  if (e.delay_ms) parts.push(`delay ${describeDelay(e.delay_ms)}`)
  if (e.delay_per_unit) parts.push(`delay ${e.delay_per_unit.group.toUpperCase()} x ${e.delay_per_unit.ms} ms`)
  if (e.otp) parts.push(`OTP ${e.otp}`)
  if (e.deliver === false) parts.push('OTP SMS never delivered')
  if (e.deliver_after) parts.push(`OTP SMS delivered ${e.deliver_after} late`)
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

/**
 * The public shape of the loaded world (no API keys, no allowlists): what a client needs to build
 * valid MSISDNs and pick services, e.g. `dcb flow --country gb`.
 */
export interface WorldSummary {
  countries: { code: string; name: string | null; calling_code: string; lengths: number[]; landlines: string[] }[]
  carriers: { code: string; country: string; prefixes: string[]; lengths: number[]; flow: string; provisioned: boolean; short_code: string | null }[]
  services: { code: string; merchant: string; name: string; period: string; keyword: string | null; countries: string[] }[]
}

export function worldSummary(world: World): WorldSummary {
  const countries = new Map(world.countries.map((c) => [c.code, c]))
  return {
    countries: world.countries.map((c) => ({
      code: c.code,
      name: c.name ?? null,
      calling_code: c.calling_code,
      lengths: c.lengths,
      landlines: c.landlines.map((l) => l.prefix),
    })),
    carriers: world.carriers.map((c) => ({
      code: c.code,
      country: c.country,
      prefixes: c.prefixes,
      lengths: c.lengths ?? countries.get(c.country)?.lengths ?? [],
      flow: c.flow,
      provisioned: c.provisioned,
      short_code: c.short_code ?? null,
    })),
    services: world.services.map((s) => ({
      code: s.code,
      merchant: s.merchant,
      name: s.name,
      period: s.period,
      keyword: s.keyword ?? null,
      countries: s.integrations.map((i) => i.country),
    })),
  }
}

/** `GET /_sandbox/scenarios`: the rules in force, in the order consulted, described, and the world they apply to. */
export function scenarioList(engine: Engine): { scenarios: Scenario[]; world: WorldSummary } {
  return {
    scenarios: engine.rules().rules.map(({ source, used: _used, ...rule }) => describeRule(rule as Rule, source === 'runtime' ? 'runtime' : 'fixture')),
    world: worldSummary(engine.world.world),
  }
}

/** The scenarios as a Markdown table (docs/reference/magic-endings.md has this table, generated). */
export function scenarioTable(scenarios: Scenario[]): string {
  const rows = scenarios.map((s) => `| ${s.match} | ${s.step} | ${s.outcome} | ${s.description} |`)
  return ['| match | step | outcome | what it shows |', '|---|---|---|---|', ...rows].join('\n')
}
