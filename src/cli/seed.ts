import { constants as osConstants } from 'node:os'
import { checkSeed, clashProblem, SandboxError, seedClash, type SeedOptions, type SeedPlan } from '../core/engine.js'
import { State } from '../core/state.js'
import { ambiguousDuration, parseDuration, isZeroDuration } from '../core/time.js'
import { WorldIndex } from '../core/world.js'
import { loadWorld } from '../world/load.js'
import { FileStore } from '../store/file.js'
import { unfoldedLog } from '../store/file-sessions.js'
import { engineOverStore } from '../runtime/engine-store.js'
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
  let seeded = 0
  let stopped: 'SIGINT' | 'SIGTERM' | undefined
  // Ctrl-C or a SIGTERM stops between batches: what was seeded is kept, and the data file is closed as
  // usual (a snapshot, the lock released) rather than left to the next start to recover. Listened
  // for from before the data file is opened, so no signal finds the file half open.
  const onSignal = (signal: 'SIGINT' | 'SIGTERM') => (stopped = signal)
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal)
  const store = new FileStore(o.data)
  const state = new State()
  try {
    try {
      await store.load(state)
    } catch (e) {
      if (e instanceof StoreError) throw new CliError(e.message, EXIT.FAIL)
      throw e
    }
    // Its default session's changes since its snapshot are in the sessions' log, which a seed does not read.
    const unfolded = store.found === 'own' ? undefined : unfoldedLog(store.path)
    if (unfolded !== undefined) {
      await store.abandon()
      throw new CliError(
        `${store.path} was last served without a clean stop: its write-ahead log ${unfolded} holds changes no snapshot has; start dcb serve on it and stop it (Ctrl-C), then seed`,
        EXIT.FAIL,
      )
    }
    // Checked over every number before anything is written (the data file is only read so far): a
    // clash found later would leave a seed half done, and a refusal leaves the files as they were.
    const clash = seedClash(state, plan, o.subscriptions)
    if (clash !== undefined) {
      await store.abandon()
      throw new CliError(clashProblem(clash, plan), EXIT.USAGE)
    }
    try {
      await store.activate()
    } catch (e) {
      await store.abandon()
      if (e instanceof StoreError) throw new CliError(e.message, EXIT.FAIL)
      throw new CliError(`cannot open ${store.path} for writing: ${(e as Error).message}`, EXIT.FAIL)
    }
    // A write that fails (a full disk) undoes its batch; the batches before it are durable and kept.
    let failed: StoreError | undefined
    try {
      const engine = engineOverStore({ world }, state, store)
      const batch = 10_000
      for (; seeded < o.subscriptions && !stopped; seeded += Math.min(batch, o.subscriptions - seeded))
        await engine.seed(Math.min(batch, o.subscriptions - seeded), { ...options, startIndex: seeded }, plan)
    } catch (e) {
      if (!(e instanceof StoreError)) throw e
      failed = e
    } finally {
      // A snapshot that cannot be written leaves the write-ahead logs, which the next start reads back.
      await store.close().catch((e: unknown) => {
        if (!(e instanceof StoreError)) throw e
        failed ??= e
      })
    }
    if (failed)
      throw new CliError(
        `cannot seed: ${failed.message}; the ${seeded} of ${o.subscriptions} subscriptions written before it are kept in ${store.path} (${state.subs.size} in all)`,
        EXIT.FAIL,
      )
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal)
  }
  if (stopped)
    throw new CliError(
      `stopped by ${stopped} after ${seeded} of ${o.subscriptions} subscriptions; those are kept in ${store.path} (${state.subs.size} in all)`,
      128 + osConstants.signals[stopped],
    )
  const ms = Math.round(performance.now() - started)
  process.stdout.write(
    o.json
      ? JSON.stringify({ seeded: o.subscriptions, data: store.path, total: state.subs.size, ms }) + '\n'
      : `seeded ${o.subscriptions} subscriptions into ${store.path} in ${ms} ms (${state.subs.size} in all)\n`,
  )
}
