/**
 * Seeding: many ACTIVE subscriptions at once, with no SMS and no flow, to build large stores fast
 * for benchmarks and load tests (`dcb seed`).
 */
import { SandboxError } from './errors.js'
import { didYouMean } from './nearest.js'
import type { EngineContext } from './context.js'
import { newSubscription, supersede } from './subscriptions.js'
import { addDuration, type Duration } from './time.js'
import type { State } from './state.js'
import type { Carrier, Integration, Service, WorldIndex } from './world.js'

export interface SeedOptions {
  merchant?: string
  service?: string
  country?: string
  firstMsisdn?: string
  startIndex?: number
  /** Start the subscriptions evenly over this long before now (of `total` in all batches). */
  spread?: { over: Duration; total: number }
}

/** What a seed uses: the merchant, its integration, the carrier of the first MSISDN, the period. */
export interface SeedPlan {
  merchant: string
  found: { service: Service; integration: Integration }
  carrier: Carrier
  period: Duration
  /** The first MSISDN: given, or the first number of the country's first carrier that bills the service. */
  first: string
}

/**
 * What `Engine.seed` needs, or a SandboxError saying why it cannot seed: the integration, the carrier
 * of the first MSISDN in the integration's country (and of each of the `count` numbers from it), and
 * a spread no longer than the period (longer would start subscriptions whose renewals are already
 * due, all of which a server would run at its start). `dcb seed` asks before it touches the data file.
 */
export function checkSeed(idx: WorldIndex, o: SeedOptions, count = 1): SeedPlan {
  const merchant = o.merchant ?? 'demo'
  const service = o.service ?? 'STREAMPLUS'
  const found = idx.integration(merchant, service, o.country ?? 'my')
  if (!found)
    throw new SandboxError(
      'MERCHANT_SERVICE_NOT_CONFIGURED',
      `no integration ${service}/${o.country ?? 'my'} for merchant ${merchant} in the sandbox world${seedTypo(idx, merchant, service, o.country ?? 'my')}`,
    )
  const country = found.integration.country
  const first = o.firstMsisdn ?? firstNumberOf(idx, found.integration)
  if (first === undefined) throw new SandboxError('INVALID_MSISDN', `no provisioned carrier in ${country} bills ${found.service.code}: give --first-msisdn`)
  const carrier = carrierIn(idx, country, first, `the first MSISDN ${first}`)
  // Seeded numbers keep to the endings where everything succeeds: a magic ending (301, 401, 5NN)
  // would make a seeded subscription's renewals fail, its carrier cancel it, or its answers wait.
  if (Number(first.slice(-3)) >= 100)
    throw new SandboxError(
      'INVALID_MSISDN',
      `the first MSISDN ${first} ends in ${first.slice(-3)}: seeded MSISDNs keep to the endings 000-099, so start at one of them`,
    )
  // Every number seeded is the first one's carrier's (counting up can run past its prefix, or its lengths).
  for (let i = o.startIndex ?? 0; i < (o.startIndex ?? 0) + count; i++) {
    const msisdn = seededMsisdn(first, i)
    const what = `MSISDN ${msisdn} (number ${i + 1} counting up from ${first})`
    const other = carrierIn(idx, country, msisdn, what)
    if (other !== carrier)
      throw new SandboxError('INVALID_MSISDN', `${what} is of carrier ${other.code}, not ${carrier.code}: seed fewer, or from another first MSISDN`)
  }
  const period = idx.period(found.service.period)
  // Compared from one fixed time: a month is 28 to 31 days, so the same one for both.
  const t = Date.UTC(2026, 0, 1)
  if (o.spread && t - addDuration(t, { months: -o.spread.over.months, ms: -o.spread.over.ms }) > addDuration(t, period) - t)
    throw new SandboxError(
      'BAD_SPREAD',
      `the spread is longer than the ${found.service.code} period (${found.service.period}): some renewals would be due at once`,
    )
  return { merchant, found, carrier, period, first }
}

/** The nearest name to the first of merchant, service and country the world does not have (a typo), as `; did you mean X?`. */
function seedTypo(idx: WorldIndex, merchant: string, service: string, country: string): string {
  if (!idx.merchants.has(merchant)) return didYouMean(merchant, idx.merchants.keys())
  const own = idx.world.services.filter((s) => s.merchant === merchant).map((s) => s.code)
  if (!own.includes(service)) return didYouMean(service, own)
  return idx.countries.has(country) ? '' : didYouMean(country, idx.countries.keys(), true)
}

/**
 * The first number of the first carrier of the integration's country that bills it (its first
 * prefix, zeros to its longest length: 601200000000 in my, 447700000000 in gb), so `--country gb`
 * alone seeds gb numbers.
 */
function firstNumberOf(idx: WorldIndex, integration: Integration): string | undefined {
  const carrier = [...idx.carriers.values()].find((c) => c.country === integration.country && idx.carrierProvisioned(integration, c))
  const lengths = carrier && (carrier.lengths ?? idx.countries.get(integration.country)?.lengths)
  return carrier && lengths?.length ? carrier.prefixes[0]!.padEnd(Math.max(...lengths), '0') : undefined
}

/** The first of `count` seeded numbers (from `startIndex`) that holds an ACTIVE subscription to the plan's service already, if any. */
export function seedClash(state: State, plan: SeedPlan, count: number, startIndex = 0): string | undefined {
  for (let k = startIndex; k < startIndex + count; k++) {
    const msisdn = seededMsisdn(plan.first, k)
    for (const id of state.subsByMsisdn.get(msisdn) ?? []) {
      const s = state.subs.get(id)
      if (s && s.status === 'ACTIVE' && s.merchant === plan.merchant && s.service === plan.found.service.code) return msisdn
    }
  }
  return undefined
}

/** Why a seed of these numbers would give an MSISDN a second ACTIVE subscription to the service. */
export function clashProblem(msisdn: string, plan: SeedPlan): string {
  return `${msisdn} holds an ACTIVE ${plan.found.service.code} subscription already (a seed before this one?): a second would break ALREADY_SUBSCRIBED; give a --first-msisdn past the numbers seeded before`
}

/**
 * Creates `count` ACTIVE subscriptions at once; answers their ids. The MSISDNs count up from
 * `firstMsisdn` through endings 000-099 only (the always-succeeds range), so no magic ending changes
 * what a seeded subscription does; `startIndex` continues a numbering. `checked`: the plan of a
 * caller that checked every number of its whole run (carrier and clash) against a state only it
 * writes (`dcb seed`, in batches): the numbers are not checked again.
 */
export function seed(ctx: EngineContext, count: number, o: SeedOptions, checked?: SeedPlan): Promise<string[]> {
  const plan = checked ?? checkSeed(ctx.world, o, count)
  const { merchant, found, carrier, period, first } = plan
  const start = o.startIndex ?? 0
  return ctx.write((tx, now) => {
    const clash = checked ? undefined : seedClash(ctx.state, plan, count, start)
    if (clash !== undefined) throw new SandboxError('INVALID_MSISDN', clashProblem(clash, plan))
    const price = found.integration.price ?? null
    const ids: string[] = []
    // Spread: subscription k of `total` starts k/total of the way back from now to now - `over`.
    const spreadMs = o.spread ? now - addDuration(now, { months: -o.spread.over.months, ms: -o.spread.over.ms }) : 0
    const total = o.spread ? Math.max(o.spread.total, start + count) : 1
    for (let i = 0; i < count; i++) {
      const at = spreadMs ? now - Math.floor((spreadMs * (start + i)) / total) : now
      const sub = newSubscription(ctx.newId(), at, period, price, {
        merchant,
        service: found.service.code,
        country: found.integration.country,
        carrier: carrier.code,
        msisdn: seededMsisdn(first, start + i),
        language: found.service.default_language,
        flow: carrier.flow,
      })
      tx.put('subs', sub.id, sub)
      ctx.queue.scheduleSub(sub)
      supersede(ctx, tx, now, sub)
      ids.push(sub.id)
    }
    return ids
  })
}

/**
 * The `index`th seeded MSISDN counting up from `first` through the endings 000-099 only (`first`
 * ends in one of them, checked): index k is k / 100 blocks of a thousand on, ending k % 100.
 */
function seededMsisdn(first: string, index: number): string {
  const n = BigInt(first)
  const offset = Number(n % 1000n) + index
  return (n - (n % 1000n) + BigInt(Math.floor(offset / 100)) * 1000n + BigInt(offset % 100)).toString()
}

/**
 * The carrier of a seeded number (`what` names it) in the integration's country, or why there is
 * none. A carrier not provisioned, or not one the integration bills through, is taken on purpose:
 * seeded subscriptions stand for ones a carrier kept from before (Init refuses new ones there), which
 * `status`, `renewal` and `retry` rules reach.
 */
function carrierIn(idx: WorldIndex, country: string, msisdn: string, what: string): Carrier {
  const found = idx.lookup(country, msisdn)
  if (found.ok) return found.carrier
  const elsewhere = idx.carrierOf(msisdn)
  if (elsewhere)
    throw new SandboxError(
      'INVALID_MSISDN',
      `${what} is of carrier ${elsewhere.code}, in ${elsewhere.country}, not in ${country}: a subscription's carrier is in its country (seed ${elsewhere.country} numbers with country ${elsewhere.country})`,
    )
  if (!msisdn.startsWith(idx.countries.get(country)?.calling_code ?? '')) throw new SandboxError('INVALID_MSISDN', `no sandbox carrier owns ${msisdn}`)
  throw new SandboxError('INVALID_MSISDN', `${what} cannot be seeded: ${found.reason}`)
}
