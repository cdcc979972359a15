/**
 * `dcb flow` on a terminal: the questions. It offers what the API key can use (its merchant's
 * services, the carriers that bill them), checks a typed MSISDN as it is typed (the server's
 * numbering-plan check, with its reason), and proposes a number that is free for the service.
 */
import chalk from 'chalk'
import type { DcbClient } from '../client/index.js'
import type { ScenariosAnswer, SubscriptionView, WorldSummary } from '../contract/index.js'
import { SandboxError } from '../core/errors.js'
import { WorldIndex, type World } from '../core/world.js'
import { guard } from './common.js'
import { CliError, EXIT } from './errors.js'

type Carrier = WorldSummary['carriers'][number]
type Service = WorldSummary['services'][number]
const FLOW_NAME: Record<string, string> = { otp: 'OTP', psms: 'PSMS', redirect: 'redirect' }
const FLOW_ORDER = ['otp', 'psms', 'redirect']
/** How many numbers are tried for one that is free (each one call); past them the first is proposed. */
const FREE_TRIES = 200

/**
 * A valid MSISDN of a carrier: its prefix, filler digits, and the ending (the magic three digits)
 * at the carrier's shortest valid length (6012 + 3456 + 001 = 60123456001). `n` counts the filler
 * up from there (the n-th number of the carrier with that ending), for a number not yet used.
 */
export function numberFor(carrier: Carrier, ending: string, n = 0): string {
  const length = Math.min(...carrier.lengths)
  const prefix = carrier.prefixes[0]!
  const fill = Math.max(0, length - prefix.length - ending.length)
  const first = '3456789012345'.repeat(2).slice(0, fill)
  const filler = fill ? String((Number(first) + n) % 10 ** fill).padStart(fill, '0') : ''
  return prefix + filler + ending
}

/** The carriers a flow can use in a country: provisioned, OTP first, then PSMS, then redirect. */
export function usableCarriers(world: WorldSummary, country?: string): Carrier[] {
  return world.carriers
    .filter((c) => c.provisioned && (!country || c.country === country))
    .sort((a, b) => FLOW_ORDER.indexOf(a.flow) - FLOW_ORDER.indexOf(b.flow))
}

/** What the world says of the API key: its merchant's index, or undefined from a server that does not show its world. */
async function worldOf(c: DcbClient): Promise<WorldIndex | undefined> {
  try {
    return new WorldIndex((await c.world()) as unknown as World)
  } catch (e) {
    // An older server, or one that does not show its world to this caller: every service is offered, as before.
    if (e instanceof SandboxError) return undefined
    throw e
  }
}

/** Whether a subscription holds its number for the service: ACTIVE, or EXPIRED with a carrier retry to come. */
const holds = (s: SubscriptionView) => s.status === 'ACTIVE' || (s.status === 'EXPIRED' && s.next_retry_dt !== null)

export interface Asked {
  msisdn: string
  service: string
  country: string | undefined
}

/**
 * Asks for what the flags left out: the service, the flow (a carrier, or a magic ending), the MSISDN.
 * Ctrl-C ends the command with exit 130 (as a shell does for an interrupted command).
 */
export async function askFlow(
  c: DcbClient,
  described: ScenariosAnswer,
  o: { msisdn?: string; service?: string; country?: string; scenario?: string },
): Promise<Asked> {
  const world = described.world
  const index = await guard(() => worldOf(c))
  const merchant = index?.merchantByKey(c.opts.apiKey)
  const { input, select } = await import('@inquirer/prompts')
  let { msisdn, service, country } = o
  // The carriers that bill a service: provisioned, in a country it is offered in (the integration's carriers, when it names them).
  const carriersOf = (code: string): Carrier[] => {
    const offered = world.services.find((s) => s.code === code)?.countries
    return usableCarriers(world, country).filter((k) => {
      if (offered && !offered.includes(k.country)) return false
      const integration = merchant && index?.integration(merchant.id, code, k.country)?.integration
      return !integration?.carriers || integration.carriers.includes(k.code)
    })
  }
  try {
    if (!service) {
      let services: Service[] = world.services.filter((s) => !country || s.countries.includes(country))
      if (index) {
        if (!merchant)
          throw new CliError(
            'the API key is no key of a merchant in this sandbox: every service would answer 401 UNAUTHORIZED (give --api-key or DCB_API_KEY)',
            EXIT.USAGE,
          )
        if (!merchant.active) throw new CliError(`the API key's merchant (${merchant.id}) is inactive: every service would answer 401 UNAUTHORIZED`, EXIT.USAGE)
        services = services.filter((s) => s.merchant === merchant.id && carriersOf(s.code).length)
      }
      if (!services.length)
        throw new CliError(
          `no service of ${merchant ? `merchant ${merchant.id}` : 'the sandbox world'} is offered${country ? ` in ${country}` : ''}: give --service`,
          EXIT.USAGE,
        )
      service = await select({ message: 'service', choices: services.map((s) => ({ value: s.code, name: `${s.code}  ${chalk.dim(s.name)}` })) })
    }
    const carriers = carriersOf(service)
    if (!msisdn) {
      if (!carriers.length) throw new CliError(`no provisioned carrier bills ${service}${country ? ` in ${country}` : ''}: give --msisdn`, EXIT.USAGE)
      const kind = await select({
        message: 'which flow',
        choices: [
          ...carriers.map((k) => ({ value: k.code, name: `${FLOW_NAME[k.flow]} (${k.country}, ${k.code})` })),
          ...(o.scenario ? [] : [{ value: '', name: 'a magic scenario (choose the ending)' }]),
        ],
      })
      const ending = kind
        ? (o.scenario ?? '001')
        : await select({
            message: 'scenario',
            choices: described.scenarios
              .filter((s) => /^ending \d{3}$/.test(s.match))
              .map((s) => ({ value: s.match.slice(7), name: `${s.match.slice(7)}  ${s.outcome}  ${s.description}` })),
          })
      const carrier = carriers.find((k) => k.code === kind) ?? carriers[0]!
      country ??= carrier.country
      msisdn = await guard(() => freeNumber(c, index, carrier, ending, service!, merchant?.id))
    }
    const check = numberCheck(world, index, country)
    msisdn = (await input({ message: 'MSISDN', default: msisdn, validate: (typed) => check(typed.trim()) })).trim()
  } catch (e) {
    // Ctrl-C (or the terminal closed) while a question was asked.
    if (e instanceof Error && e.name === 'ExitPromptError') throw new CliError('canceled', EXIT.CANCELED)
    throw e
  }
  return { msisdn, service, country }
}

/**
 * The first number of `carrier` with `ending` that no subscription to the service holds (a flow
 * with it would end ALREADY_SUBSCRIBED); the first one when the tries run out.
 */
async function freeNumber(c: DcbClient, index: WorldIndex | undefined, carrier: Carrier, ending: string, service: string, merchant?: string): Promise<string> {
  const first = numberFor(carrier, ending)
  for (let n = 0; n < FREE_TRIES; n++) {
    const candidate = numberFor(carrier, ending, n)
    if (n && candidate === first) break
    // A longer prefix of another carrier may own a number the filler reaches.
    const owner = index?.lookup(carrier.country, candidate)
    if (owner && (!owner.ok || owner.carrier.code !== carrier.code)) continue
    const { subscriptions } = await c.subscriptions({ msisdn: candidate, service, ...(merchant ? { merchant } : {}) })
    if (!subscriptions.some(holds)) return candidate
  }
  return first
}

/** The check of a typed MSISDN: true, or why it is not one of `country` (the server's numbering-plan reason). */
function numberCheck(world: WorldSummary, index: WorldIndex | undefined, country: string | undefined): (typed: string) => true | string {
  return (typed) => {
    if (!/^\d+$/.test(typed)) return 'digits only, calling code first (no + or 00)'
    if (!/^\d{6,15}$/.test(typed)) return `${typed.length} digits: an MSISDN has 6 to 15, calling code first`
    const where =
      country ?? [...world.countries].sort((a, b) => b.calling_code.length - a.calling_code.length).find((k) => typed.startsWith(k.calling_code))?.code
    if (!where)
      return `no country of the sandbox has a calling code that ${typed} starts with (${world.countries.map((k) => `${k.calling_code} ${k.code}`).join(', ')})`
    if (!index) return true
    const found = index.lookup(where, typed)
    return found.ok ? true : `${found.reason} (Init would answer ${found.code})`
  }
}
