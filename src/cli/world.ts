/**
 * `dcb world`: what the running sandbox has in force, for people: carriers with their flow, prefixes
 * and OTP, consent and retry settings; services with their integrations; merchants with allowlists
 * and key counts; every rule in the order consulted (runtime rules first); each with its file.
 * A service shows its return_url, where a redirect consent page sends the browser back.
 */
import chalk from 'chalk'
import { describeEffect, describeMatch } from '../core/scenarios.js'
import { count } from '../core/why.js'
import type { Rule } from '../core/world-schema.js'
import { clientFrom, guard, out, printJson, warnOfNewSession, type ClientCliOptions } from './common.js'

type Opts = ClientCliOptions & { json?: boolean }

export async function world(o: Opts): Promise<void> {
  const c = clientFrom(o)
  await warnOfNewSession(c, o)
  const [{ world, sources }, { rules }] = await guard(() => Promise.all([c.worldSources(), c.rules.list()]))
  const w = world as Record<string, any>
  if (o.json) return printJson(w)
  const from = (coll: string, key: string): string => {
    const s = (sources as Record<string, Record<string, string[] | string>> | null)?.[coll]?.[key]
    return s ? chalk.dim(`  (${Array.isArray(s) ? s.join(' + ') : s})`) : ''
  }
  const flows: Record<string, string> = { otp: 'OTP', psms: 'PSMS', redirect: 'redirect' }
  // Where a consent page sends the browser back; with none it shows the result and stays.
  const back = (url: unknown) => (typeof url === 'string' ? `return_url ${url}` : chalk.dim('no return_url'))

  out(chalk.bold('Carriers'))
  for (const k of w.carriers) {
    const flow = k.flow === 'psms' ? `PSMS, short code ${k.short_code}` : flows[k.flow]
    const settings =
      k.flow === 'otp'
        ? `OTP ${count(k.otp.length, 'digit')}, valid ${k.otp.ttl}, ${count(k.otp.max_attempts, 'attempt')}`
        : k.flow === 'redirect'
          ? `consent valid ${k.consent_ttl}`
          : ''
    const state = k.provisioned ? '' : ', not provisioned'
    out(
      `  ${chalk.bold(k.code)} ${k.country}: ${flow}${state}; prefixes ${k.prefixes.join(', ')}${k.lengths ? ` (${k.lengths.join(' or ')} digits)` : ''}; ${settings ? settings + '; ' : ''}retry every ${k.retry.every}, at most ${k.retry.max}${from('carriers', k.code)}`,
    )
  }
  out(chalk.bold('Services'))
  for (const s of w.services) {
    const integrations = s.integrations.length
      ? s.integrations
          .map((i: any) => `${i.country}${i.price ? ` ${i.price.amount} ${i.price.currency}` : ''}${i.carriers ? ` (${i.carriers.join(', ')})` : ''}`)
          .join(', ')
      : chalk.yellow('no integration (every Init answers 403)')
    out(
      `  ${chalk.bold(s.code)} of ${s.merchant}: "${s.name}", every ${s.period}${s.keyword ? `, keyword ${s.keyword}` : ''}; ${integrations}; ${back(s.return_url)}${from('services', s.code)}`,
    )
  }
  out(chalk.bold('Merchants'))
  for (const m of w.merchants)
    out(
      `  ${chalk.bold(m.id)}${m.active ? '' : ' (inactive)'}: ${m.api_keys.length} API key${m.api_keys.length === 1 ? '' : 's'}; allowlist ${m.allowlist.join(', ')}${from('merchants', m.id)}`,
    )
  out(chalk.bold('Rules, in the order consulted (the first that fits a step decides it)'))
  rules.forEach((r: Record<string, any>, i) => {
    const step = Array.isArray(r.step) ? r.step.join(', ') : r.step
    out(
      `  ${String(i + 1).padStart(3)}. ${chalk.bold(r.id)}: ${describeMatch(r as unknown as Rule)} at ${step}: ${describeEffect(r as unknown as Rule)}; used ${r.used}${chalk.dim(`  (${r.source})`)}`,
    )
  })
}
