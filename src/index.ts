/**
 * dcb-sandbox, the public API: a sandbox in-process (`createSandbox`), a client of a running one
 * (`createClient`) with the same functions, `dcb serve` as a function (`startSandbox`), the one error
 * of refused calls, and the types of the merchant API and of the control API. Everything else is
 * internal and may change.
 */
import { startSandbox as startServer } from './server.js'
import type { ServeOptions } from './serve-options.js'
import { layerWorldObject, WORLD_AND_FIXTURES, type WorldInput } from './library/sandbox.js'
import { SandboxError } from './core/errors.js'
import type { WorldDocument } from './contract/control.js'
import { checkSharedOptions } from './library/options.js'

export { createSandbox } from './library/sandbox.js'
export type { Sandbox, SandboxSession, SandboxOptions, WorldInput as World, RuleInput as Rule } from './library/sandbox.js'
export { createClient } from './client/create.js'
export type { SandboxClient, ClientOptions } from './client/create.js'
export { SandboxError, CONTROL_ERRORS, type ControlErrorCode } from './core/errors.js'
export { FixtureError } from './world/load.js'
export { DEMO_API_KEY, DEFAULT_BASE_URL, DEFAULT_HOST, DEFAULT_PORT } from './contract/defaults.js'
export type { ControlOperations, RuleOperations, OtpOptions, MerchantOperations } from './contract/operations.js'
export type * from './contract/control.js'
export type {
  InitBody,
  VerifyBody,
  StatusBody,
  InitPayload,
  VerifyPayload,
  StatusPayload,
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
} from './contract/merchant.js'

/** The options of `startSandbox`: those of `dcb serve`; `world` as `createSandbox` takes it (checked as a fixture file). */
export type SandboxServerOptions = Omit<ServeOptions, 'realNow' | 'world'> & { world?: WorldInput | WorldDocument }

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

/**
 * `dcb serve` as a function.
 * @example const server = await startSandbox({ port: 0, inMemory: true }); const sandbox = createClient({ baseUrl: server.url })
 */
export async function startSandbox(opts: SandboxServerOptions = {}): Promise<SandboxServer> {
  checkSharedOptions(opts as Record<string, unknown>)
  if (opts.world && opts.fixtures?.length) throw new SandboxError('BAD_REQUEST', WORLD_AND_FIXTURES)
  // Layered on the default world here when it says so; the server checks a world object as a file.
  const world = opts.world?.extends === 'default' ? { ...layerWorldObject(opts.world).world, extends: 'none' as const } : opts.world
  // One path, as createSandbox takes it (the type says an array; a string was read letter by letter).
  const fixtures = typeof opts.fixtures === 'string' ? [opts.fixtures] : opts.fixtures
  const s = await startServer({ ...opts, world, fixtures } as ServeOptions)
  return { url: s.url, port: s.port, host: s.host, clockKept: s.clockKept, files: s.files, recoveryNotes: s.recoveryNotes, close: () => s.close() }
}
