import { checkSeed, clashProblem, Engine, SandboxError, seedClash, type SeedOptions, type SeedPlan } from '../core/engine.js'
import { State } from '../core/state.js'
import { ambiguousDuration, parseDuration, isZeroDuration } from '../core/time.js'
import { WorldIndex } from '../core/world.js'
import { loadWorld } from '../world/load.js'
import { FileStore } from '../store/file.js'
import { StoreError } from '../store/types.js'
import { CliError, EXIT } from './errors.js'

export async function seed(o: {
  subscriptions: number
  data: string
  service: string
  country: string
  merchant: string
  firstMsisdn?: string
  spread?: string
  json?: boolean
}): Promise<void> {
  if (o.firstMsisdn !== undefined && !/^\d{6,15}$/.test(o.firstMsisdn)) throw new CliError('--first-msisdn must be digits', EXIT.USAGE)
  const ambiguous = o.spread === undefined ? undefined : ambiguousDuration(o.spread)
  if (ambiguous) throw new CliError(`--spread ${ambiguous}`, EXIT.USAGE)
  const spread = o.spread === undefined ? undefined : parseDuration(o.spread)
  if (spread === null || (spread && isZeroDuration(spread)))
    throw new CliError(`--spread "${o.spread}" is not a duration: use ISO-8601 (P1M, P7D) or a short form (30d)`, EXIT.USAGE)
  const world = loadWorld().world
  const options: SeedOptions = {
    merchant: o.merchant,
    service: o.service,
    country: o.country,
    firstMsisdn: o.firstMsisdn,
    spread: spread ? { over: spread, total: o.subscriptions } : undefined,
  }
  // Refuse what cannot be seeded before the data file is touched.
  let plan: SeedPlan
  try {
    plan = checkSeed(new WorldIndex(world), options, o.subscriptions)
  } catch (e) {
    if (e instanceof SandboxError) throw new CliError(e.message, EXIT.USAGE)
    throw e
  }
  const started = performance.now()
  const store = new FileStore(o.data)
  const state = new State()
  try {
    await store.open(state)
  } catch (e) {
    if (e instanceof StoreError) throw new CliError(e.message, EXIT.FAIL)
    throw e
  }
  try {
    // Checked over every number before the first batch is written: a clash found later would leave a seed half done.
    const clash = seedClash(state, plan, o.subscriptions)
    if (clash !== undefined) throw new CliError(clashProblem(clash, plan), EXIT.USAGE)
    const engine = new Engine({ world, state, persist: (ch) => store.append(ch) })
    const batch = 10_000
    for (let done = 0; done < o.subscriptions; done += batch) {
      const n = Math.min(batch, o.subscriptions - done)
      await engine.seed(n, { ...options, startIndex: done })
    }
  } finally {
    await store.close()
  }
  const ms = Math.round(performance.now() - started)
  process.stdout.write(
    o.json
      ? JSON.stringify({ seeded: o.subscriptions, data: store.path, total: state.subs.size, ms }) + '\n'
      : `seeded ${o.subscriptions} subscriptions into ${store.path} in ${ms} ms (${state.subs.size} in all)\n`,
  )
}
