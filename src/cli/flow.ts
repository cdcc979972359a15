/**
 * `dcb flow`: one end-to-end subscription, step by step: Init, then the OTP from the inbox and
 * Verify, or the PSMS keyword by MO, or the consent page; then Status. On a terminal it asks for
 * what is missing; with flags it runs straight through.
 */
import chalk from 'chalk'
import type { DcbClient } from '../client/index.js'
import { canPrompt, clientFrom, guard, out, printFields, type ClientCliOptions } from './common.js'
import { CliError, EXIT } from './errors.js'

interface FlowOptions extends ClientCliOptions {
  msisdn?: string
  service?: string
  country?: string
  language?: string
  scenario?: string
  otp?: string
  deny?: boolean
}

const COUNTRY_OF_PREFIX: [string, string][] = [
  ['359', 'bg'],
  ['44', 'gb'],
  ['60', 'my'],
]

const step = (n: number, what: string) => out(`\n${chalk.bold(`${n}.`)} ${what}`)

export async function flow(o: FlowOptions): Promise<void> {
  const c = clientFrom(o)
  let { msisdn, service, country } = o
  if (o.scenario) {
    if (!/^\d{3}$/.test(o.scenario)) throw new CliError('--scenario takes a magic ending of three digits, e.g. 201 (see dcb scenarios)', EXIT.USAGE)
    msisdn = (msisdn ?? '60123456001').slice(0, -3) + o.scenario
  }
  if ((!msisdn || !service) && canPrompt()) {
    const { input, select } = await import('@inquirer/prompts')
    try {
      service ??= await select({
        message: 'service',
        choices: ['STREAMPLUS', 'GAMECLUB', 'QUICKTEST'].map((s) => ({ value: s, name: s })),
      })
      if (!msisdn) {
        const kind = await select({
          message: 'which flow',
          choices: [
            { value: '60123456001', name: 'OTP (my, sbx-my-otp)' },
            { value: '60133456001', name: 'PSMS (my, sbx-my-psms)' },
            { value: '359881234001', name: 'redirect (bg, sbx-bg-redirect)' },
            { value: 'scenario', name: 'a magic scenario (choose the ending)' },
          ],
        })
        if (kind === 'scenario') {
          const list = await guard(() => c.scenarios())
          const ending = await select({
            message: 'scenario',
            choices: list.scenarios
              .filter((s) => /^ending \d{3}$/.test(s.match))
              .map((s) => ({ value: s.match.slice(7), name: `${s.match.slice(7)}  ${s.outcome}  ${s.description}` })),
          })
          msisdn = '60123456' + ending
        } else msisdn = kind
      }
    } catch {
      throw new CliError('canceled', EXIT.USAGE)
    }
    msisdn = (await input({ message: 'MSISDN', default: msisdn })).trim()
  }
  if (!msisdn) msisdn = '60123456001'
  service ??= 'STREAMPLUS'
  country ??= COUNTRY_OF_PREFIX.find(([p]) => msisdn!.startsWith(p))?.[1]
  if (!country) throw new CliError(`cannot tell the country of ${msisdn}: give --country`, EXIT.USAGE)
  const ok = await run(c, { msisdn, service, country, language: o.language, otp: o.otp, deny: o.deny })
  if (!ok) process.exitCode = EXIT.FAIL
}

async function run(c: DcbClient, f: { msisdn: string; service: string; country: string; language?: string; otp?: string; deny?: boolean }): Promise<boolean> {
  step(1, `Init ${f.msisdn} ${f.service} ${f.country}`)
  const init = await guard(() =>
    c.init({ msisdn: f.msisdn, service_code: f.service, country_code: f.country, ...(f.language ? { language: f.language } : {}) }),
  )
  if (!show(init.envelope, init.http, init.reason)) return false
  const p = init.envelope.payload!
  let subscriptionId: string | undefined
  if (p.verif_request_id) {
    step(2, 'read the OTP from the handset inbox')
    const otp = f.otp ?? (await guard(() => c.otp(f.msisdn, { wait: 5 }))).otp
    out(`  ${chalk.dim('otp'.padEnd(17))} ${otp}`)
    step(3, 'Verify')
    const v = await guard(() => c.verify({ verif_request_id: p.verif_request_id!, otp }))
    if (!show(v.envelope, v.http, v.reason)) return false
    subscriptionId = v.envelope.payload!.subscription_id
  } else if (p.short_code) {
    step(2, `the subscriber texts ${p.keyword} to ${p.short_code} (MO)`)
    const m = await guard(() => c.mo({ msisdn: f.msisdn, short_code: p.short_code!, text: p.keyword ?? '' }))
    printFields(m)
    if (m.action !== 'subscribed') return failed(m.code ?? m.action, 'MO', m.reason)
    subscriptionId = m.subscription_id
  } else if (p.redirect_url) {
    step(2, `the subscriber ${f.deny ? 'denies' : 'approves'} on the consent page`)
    const r = await guard(() => c.consent(p.redirect_url!, f.deny ? 'deny' : 'approve'))
    out(`  ${chalk.dim('redirect'.padEnd(17))} ${r.location}`)
    if (r.query.status === 'FAIL' || !r.query.subscription_id) return failed(r.query.message ?? 'no subscription_id', `redirect, HTTP ${r.status}`, r.reason)
    subscriptionId = r.query.subscription_id
  } else {
    out(chalk.red('  Init answered no verif_request_id, short_code or redirect_url'))
    return false
  }
  step(4, 'Status')
  const s = await guard(() => c.status({ subscription_id: subscriptionId! }))
  return show(s.envelope, s.http, s.reason)
}

function show(e: { status: string; message: string; payload?: unknown }, http: number, reason?: string): boolean {
  if (e.status === 'SUCCESS') {
    out(`  ${chalk.green('✔ SUCCESS')}`)
    if (e.payload && typeof e.payload === 'object') printFields(e.payload as Record<string, unknown>)
    return true
  }
  out(`  ${chalk.red('✘ FAIL')} ${chalk.bold(e.message)} (HTTP ${http})${reason ? `: ${reason}` : ''}`)
  return false
}

/** The failure line of a flow that ended outside the merchant API (an MO, the consent page). */
function failed(code: string, where: string, reason?: string): false {
  out(`  ${chalk.red('✘ FAIL')} ${chalk.bold(code)} (${where})${reason ? `: ${reason}` : ''}`)
  return false
}
