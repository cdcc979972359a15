/**
 * `dcb flow`: one end-to-end subscription, step by step: Init, then the OTP from the inbox and
 * Verify, or the PSMS keyword by MO, or the consent page; then Status. On a terminal it asks for
 * what is missing; with flags it runs straight through. The countries, carriers and services come
 * from the server (`GET /_sandbox/scenarios`), so a world loaded with --fixtures is used as it is.
 */
import chalk from 'chalk'
import type { DcbClient } from '../client/index.js'
import type { WorldSummary } from '../contract/index.js'
import { canPrompt, clientFrom, guard, out, printFields, printJson, type ClientCliOptions } from './common.js'
import { CliError, EXIT, invokedAs } from './errors.js'
import { didYouMean } from '../core/nearest.js'
import { askFlow, numberFor, usableCarriers } from './flow-ask.js'

interface FlowOptions extends ClientCliOptions {
  msisdn?: string
  service?: string
  country?: string
  language?: string
  scenario?: string
  otp?: string
  deny?: boolean
}

type Carrier = WorldSummary['carriers'][number]
const FLOW_NAME: Record<string, string> = { otp: 'OTP', psms: 'PSMS', redirect: 'redirect' }

/** The carrier whose prefix the MSISDN starts with (the longest that matches). */
function carrierOf(world: WorldSummary, msisdn: string): Carrier | undefined {
  let best: { carrier: Carrier; length: number } | undefined
  for (const carrier of world.carriers)
    for (const p of carrier.prefixes) if (msisdn.startsWith(p) && p.length > (best?.length ?? 0)) best = { carrier, length: p.length }
  return best?.carrier
}

function countryOf(world: WorldSummary, msisdn: string): string | undefined {
  const carrier = world.carriers.find((c) => c.prefixes.some((p) => msisdn.startsWith(p)))
  if (carrier) return carrier.country
  return [...world.countries].sort((a, b) => b.calling_code.length - a.calling_code.length).find((c) => msisdn.startsWith(c.calling_code))?.code
}

export async function flow(o: FlowOptions): Promise<void> {
  const c = clientFrom(o)
  if (o.scenario !== undefined && !/^\d{3}$/.test(o.scenario))
    throw new CliError(`--scenario takes a magic ending of three digits, e.g. 201 (see ${invokedAs()} scenarios)`, EXIT.USAGE)
  if (o.msisdn !== undefined && !/^\d{6,15}$/.test(o.msisdn))
    throw new CliError(`--msisdn "${o.msisdn}" must be 6 to 15 digits, calling code first`, EXIT.USAGE)
  const described = await guard(() => c.scenarios())
  const world = described.world
  if (!world) throw new CliError(`${c.baseUrl} does not describe its world (GET /_sandbox/scenarios has no "world"): is it an older dcb?`, EXIT.UNREACHABLE)
  if (o.country !== undefined && !world.countries.some((k) => k.code === o.country))
    throw new CliError(
      `--country "${o.country}" is not in the sandbox world; valid: ${world.countries.map((k) => k.code).join(', ')}${didYouMean(
        o.country,
        world.countries.map((k) => k.code),
        true,
      )}`,
      EXIT.USAGE,
    )

  let { msisdn, service, country } = o
  if ((!msisdn || !service) && canPrompt() && !o.json) ({ msisdn, service, country } = await askFlow(c, described, o))
  if (!msisdn) {
    const wanted = country ?? (world.countries.some((k) => k.code === 'my') ? 'my' : world.countries[0]?.code)
    const carrier = usableCarriers(world, wanted)[0]
    if (!carrier) throw new CliError(`no provisioned carrier in ${wanted ?? 'the sandbox world'} to build an MSISDN from: give --msisdn`, EXIT.USAGE)
    msisdn = numberFor(carrier, o.scenario ?? '001')
    country ??= carrier.country
  } else if (o.scenario) msisdn = msisdn.slice(0, -3) + o.scenario
  country ??= countryOf(world, msisdn)
  if (!country) throw new CliError(`cannot tell the country of ${msisdn}: give --country`, EXIT.USAGE)
  if (!service) {
    const offered = world.services.filter((s) => s.countries.includes(country!))
    service = (offered.find((s) => s.code === 'STREAMPLUS') ?? offered[0])?.code
    if (!service) throw new CliError(`no service of the sandbox world is offered in ${country}: give --service`, EXIT.USAGE)
  }
  // --otp and --deny each steer one flow: for a number of another flow either would be dropped without a word.
  const carrier = carrierOf(world, msisdn)
  const wrongFlow = (flag: string, flow: string) =>
    new CliError(
      `${flag} is for the ${FLOW_NAME[flow]} flow: ${msisdn} is of ${carrier!.code}, whose flow is ${FLOW_NAME[carrier!.flow] ?? carrier!.flow} (drop ${flag}, or give a number of a carrier whose flow is ${FLOW_NAME[flow]})`,
      EXIT.USAGE,
    )
  if (carrier?.provisioned && o.otp !== undefined && carrier.flow !== 'otp') throw wrongFlow('--otp', 'otp')
  if (carrier?.provisioned && o.deny && carrier.flow !== 'redirect') throw wrongFlow('--deny', 'redirect')
  const report = await run(c, { msisdn, service, country, language: o.language, otp: o.otp, deny: o.deny }, !o.json)
  if (o.json) printJson(report)
  if (!report.ok) process.exitCode = EXIT.FAIL
}

/** The X-DCB-Reason of an answer, for the --json report (absent when the server sent none). */
const why = (reason?: string) => (reason ? { reason } : {})

interface FlowStep {
  step: string
  [k: string]: unknown
}

async function run(
  c: DcbClient,
  f: { msisdn: string; service: string; country: string; language?: string; otp?: string; deny?: boolean },
  human: boolean,
): Promise<{ msisdn: string; service: string; country: string; ok: boolean; subscription_id: string | null; steps: FlowStep[] }> {
  const steps: FlowStep[] = []
  const report = { msisdn: f.msisdn, service: f.service, country: f.country, ok: false, subscription_id: null as string | null, steps }
  const say = (line: string) => human && out(line)
  const step = (what: string) => say(`\n${chalk.bold(`${steps.length + 1}.`)} ${what}`)
  const show = (e: { status: string; message: string; payload?: unknown }, http: number, reason?: string): boolean => {
    if (!human) return e.status === 'SUCCESS'
    if (e.status === 'SUCCESS') {
      out(`  ${chalk.green('✔ SUCCESS')}`)
      if (e.payload && typeof e.payload === 'object') printFields(e.payload as Record<string, unknown>)
      return true
    }
    out(`  ${chalk.red('✘ FAIL')} ${chalk.bold(e.message)} (HTTP ${http})${reason ? `: ${reason}` : ''}`)
    return false
  }
  /** The failure line of a flow that ended outside the merchant API (an MO, the consent page). */
  const failed = (code: string, where: string, reason?: string): typeof report => {
    say(`  ${chalk.red('✘ FAIL')} ${chalk.bold(code)} (${where})${reason ? `: ${reason}` : ''}`)
    return report
  }

  step(`Init ${f.msisdn} ${f.service} ${f.country}`)
  const init = await guard(() =>
    c.init({ msisdn: f.msisdn, service_code: f.service, country_code: f.country, ...(f.language ? { language: f.language } : {}) }),
  )
  steps.push({ step: 'init', http: init.httpStatus, envelope: init.envelope, ...why(init.reason) })
  if (!show(init.envelope, init.httpStatus, init.reason)) return report
  const p = init.envelope.payload!
  let subscriptionId: string | undefined
  if (p.verif_request_id) {
    step(f.otp ? 'the OTP given with --otp' : 'read the OTP from the handset inbox')
    const otp = f.otp ?? (await guard(() => c.otp(f.msisdn, { wait: 5 }), true)).otp
    steps.push({ step: 'otp', otp })
    say(`  ${chalk.dim('otp'.padEnd(17))} ${otp}`)
    step('Verify')
    const v = await guard(() => c.verify({ verif_request_id: p.verif_request_id!, otp }))
    steps.push({ step: 'verify', http: v.httpStatus, envelope: v.envelope, ...why(v.reason) })
    if (!show(v.envelope, v.httpStatus, v.reason)) return report
    subscriptionId = v.envelope.payload!.subscription_id
  } else if (p.short_code) {
    step(`the subscriber texts ${p.keyword} to ${p.short_code} (MO)`)
    const m = await guard(() => c.mo({ msisdn: f.msisdn, short_code: p.short_code!, text: p.keyword ?? '' }))
    steps.push({ step: 'mo', ...m })
    if (human) printFields(m)
    if (m.action !== 'subscribed') return failed(m.code ?? m.action, 'MO', m.reason)
    subscriptionId = m.subscription_id
  } else if (p.redirect_url) {
    step(`the subscriber ${f.deny ? 'denies' : 'approves'} on the consent page`)
    const r = await guard(() => c.consent(p.redirect_url!, f.deny ? 'deny' : 'approve'))
    steps.push({ step: 'consent', action: f.deny ? 'deny' : 'approve', ...r })
    say(`  ${chalk.dim('redirect'.padEnd(17))} ${r.location}`)
    if (r.query.status === 'FAIL' || !r.query.subscription_id) return failed(r.query.message ?? 'no subscription_id', `redirect, HTTP ${r.status}`, r.reason)
    subscriptionId = r.query.subscription_id
  } else {
    say(chalk.red('  Init answered no verif_request_id, short_code or redirect_url'))
    return report
  }
  report.subscription_id = subscriptionId ?? null
  step('Status')
  const s = await guard(() => c.status({ subscription_id: subscriptionId! }))
  steps.push({ step: 'status', http: s.httpStatus, envelope: s.envelope, ...why(s.reason) })
  report.ok = show(s.envelope, s.httpStatus, s.reason)
  return report
}
