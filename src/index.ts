/**
 * dcb-sandbox, the public API: a sandbox in-process (`createSandbox`), a client of a running one
 * (`createClient`) with the same functions, `dcb serve` as a function (`startSandbox`), the one error
 * of refused calls, and the types of the merchant API and of the control API. Everything else is
 * internal and may change.
 */
import { startSandbox as startServer, type ServeHooks } from './server.js'
import type { ServeOptions } from './serve-options.js'
import { worldOf, type World } from './library/sandbox.js'
import type { WorldDocument } from './contract/control.js'
import { checkOptionNames, checkSharedOptions } from './library/options.js'
import { SandboxError } from './core/errors.js'
import { checkPolicy, coverageJUnit as junit, coverageVerdict as verdict, mergeCoverage as merge, parsePolicy } from './core/coverage-gate.js'
import { countableIds } from './core/coverage-outcomes.js'
import type { CoverageAnswer } from './contract/control.js'

export { createSandbox } from './library/sandbox.js'
export type { Sandbox, SandboxSession, SandboxOptions, World, Rule } from './library/sandbox.js'
export { createClient } from './client/create.js'
export type { SandboxClient, ClientOptions } from './client/create.js'
export { SandboxError, CONTROL_ERRORS, type ControlErrorCode } from './core/errors.js'
export { FixtureError } from './world/load.js'
export { DEMO_API_KEY, DEFAULT_BASE_URL, DEFAULT_HOST, DEFAULT_PORT } from './contract/defaults.js'
export type { ControlOperations, RuleOperations, OtpOptions, OtpTarget, MerchantOperations } from './contract/operations.js'
export type * from './contract/control.js'
export type {
  InitBody,
  VerifyBody,
  StatusBody,
  InitPayload,
  VerifyPayload,
  StatusPayload,
  SubscriptionStatus,
  Envelope,
  MerchantAnswer,
  InitAnswer,
  VerifyAnswer,
  StatusAnswer,
  ConsentAnswer,
  InitMessage,
  VerifyMessage,
  StatusMessage,
  PlatformMessage,
  CarrierMessage,
  SandboxMessage,
} from './contract/merchant.js'

/** What a suite must show (a `dcb coverage --policy` file's content): outcome ids or globs, finding codes allowed, a minimum percentage. */
export interface CoveragePolicy {
  require?: string[]
  allow?: string[]
  min?: number
}

/** Coverage answers of several sessions (or sandboxes) as one: counts and findings summed per merchant, `since` the earliest. */
export function mergeCoverage(...reports: CoverageAnswer[]): CoverageAnswer {
  return merge(...reports) as CoverageAnswer
}

/**
 * The JUnit XML `dcb coverage --junit` writes for this answer: without a policy, a failing case per
 * outcome never seen and per finding; with one (as `--policy FILE`), failing only an outcome required
 * and never seen and a finding not allowed; its `min` is a case per merchant, failing below it. The
 * same function writes `--junit`. A policy naming an unknown outcome or finding throws.
 */
export function coverageJUnit(report: CoverageAnswer, policy?: CoveragePolicy): string {
  return policy === undefined ? junit(report) : junit(report, checkedPolicy(report, policy))
}

/**
 * Why `report` fails `policy`, one line per reason, as `dcb coverage --policy` prints them before
 * it exits 1 (none: the policy holds). A policy naming an unknown outcome or finding throws.
 */
export function coverageVerdict(report: CoverageAnswer, policy: CoveragePolicy): string[] {
  return verdict(report, checkedPolicy(report, policy))
}

/** A policy as the CLI reads its file: unknown keys, outcomes and findings refused by name. */
function checkedPolicy(report: CoverageAnswer, policy: CoveragePolicy) {
  try {
    const checked = parsePolicy(JSON.stringify(policy))
    checkPolicy(checked, [...countableIds(), ...report.coverage.flatMap((m) => m.outcomes.map((o) => o.id))])
    return checked
  } catch (e) {
    throw new SandboxError('BAD_REQUEST', (e as Error).message.replace(/^the policy/, 'policy'))
  }
}

/** The options of `startSandbox`: those of `dcb serve`; `world` as `createSandbox` takes it (checked as a fixture file). */
export type SandboxServerOptions = Omit<ServeOptions, 'realNow'> & { world?: World | WorldDocument }

/** A running `dcb serve` started from code. */
export interface SandboxServer {
  /** Where it listens, e.g. `http://127.0.0.1:40123` (give it to `createClient`). */
  url: string
  port: number
  host: string
  /** `clock` was given but the data file keeps its own clock (it was not applied). */
  clockKept: boolean
  /** The fixture files loaded, the default world first (none for a world object). */
  files: string[]
  /** What recovery did to the data files (a torn last line dropped). */
  recoveryNotes: string[]
  /** Stops listening, ends the live streams, closes the store. */
  close(): Promise<void>
}

/** Every option of `startSandbox`, so an unknown one is refused by name. */
const SERVER_OPTIONS: Record<keyof SandboxServerOptions, true> = {
  port: true,
  host: true,
  data: true,
  inMemory: true,
  store: true,
  replaceWorld: true,
  fixtures: true,
  world: true,
  allowIps: true,
  trustProxy: true,
  adminToken: true,
  allowHosts: true,
  failurePayload: true,
  clock: true,
  clockRunning: true,
  requestLogSize: true,
  requestLogBytes: true,
  journalSize: true,
  journalBytes: true,
  maxConnections: true,
  idleTimeoutMs: true,
  headersTimeoutMs: true,
  requestTimeoutMs: true,
  maxSessions: true,
  reasons: true,
  smsPerMsisdn: true,
  chargesPerSubscription: true,
  maxSms: true,
  maxVerifications: true,
  maxSubscriptions: true,
  tickMs: true,
  compactBytes: true,
  onError: true,
  onWarning: true,
}

/**
 * `dcb serve` as a function.
 * @example const server = await startSandbox({ port: 0, inMemory: true }); const sandbox = createClient({ baseUrl: server.url })
 */
export async function startSandbox(opts: SandboxServerOptions = {}): Promise<SandboxServer> {
  checkOptionNames('startSandbox', opts, SERVER_OPTIONS)
  checkSharedOptions(opts as Record<string, unknown>)
  // The server would keep the state in memory and leave the data file alone without a word.
  if (opts.inMemory && opts.data !== undefined)
    throw new SandboxError(
      'BAD_REQUEST',
      `startSandbox: inMemory keeps nothing on disk: it goes with no data file (got data ${JSON.stringify(opts.data)}); drop one of them`,
    )
  // The world as createSandbox loads it (a world object layered once, the default world's rules named
  // by its file), handed to the server as it is.
  const { world, fixtures, ...rest } = opts
  const s = await startServer({ ...rest, loaded: worldOf({ world, fixtures }) } as ServeHooks)
  return { url: s.url, port: s.port, host: s.host, clockKept: s.clockKept, files: s.files, recoveryNotes: s.recoveryNotes, close: () => s.close() }
}
