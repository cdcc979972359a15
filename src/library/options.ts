/**
 * The options of `createSandbox` (and those `startSandbox` shares with it) checked before anything is
 * built, each refused by name as `dcb serve` refuses its flags: a wrong value reached the engine as
 * it was (a request log of -1 requests, a failure form of 'none') or failed deep inside it
 * ('Invalid array length', 'text.trim is not a function').
 */
import { SandboxError } from '../core/errors.js'
import { checkOptionNames, RENAMED_OPTIONS, renamedProblem } from '../contract/option-names.js'
import { checkHeaderValues } from '../client/header-value.js'
import type { SandboxOptions } from './sandbox.js'

export { checkOptionNames }
import { readBaseUrl } from './route.js'

const FAILURE_FORMS = ['auto', 'null', 'absent']

function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `${typeof value} ${String(value)}`
}

function wholeNumber(name: string, value: unknown, min: number, max: number): void {
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new SandboxError('BAD_REQUEST', `${name} must be a whole number from ${min} to ${max.toLocaleString('en')} (got ${shown(value)})`)
}

/** Every option of `createSandbox`. */
const SANDBOX_OPTIONS: Record<keyof SandboxOptions, true> = {
  world: true,
  fixtures: true,
  clock: true,
  clientIp: true,
  failurePayload: true,
  requestLogSize: true,
  journalSize: true,
  maxSessions: true,
  maxSubscriptions: true,
  apiKey: true,
  baseUrl: true,
  onWarning: true,
}

/** The options `createSandbox` and `startSandbox` share. */
export function checkSharedOptions(opts: Record<string, unknown>): void {
  if (opts.clock !== undefined && typeof opts.clock !== 'string')
    throw new SandboxError('BAD_TIME', `clock must be a time as text, e.g. '2026-01-31T00:00:00' (got ${shown(opts.clock)})`)
  wholeNumber('requestLogSize', opts.requestLogSize, 1, 1_000_000)
  wholeNumber('journalSize', opts.journalSize, 1, 1_000_000)
  for (const [name, old] of RENAMED_OPTIONS) {
    const problem = renamedProblem(opts, name, old)
    if (problem) throw new SandboxError('BAD_REQUEST', problem)
  }
  wholeNumber('maxSessions', opts.maxSessions, 0, 1_000_000)
  wholeNumber('maxSubscriptions', opts.maxSubscriptions, 1, 100_000_000)
  if (opts.failurePayload !== undefined && !FAILURE_FORMS.includes(opts.failurePayload as string))
    throw new SandboxError('BAD_REQUEST', `failurePayload must be 'auto', 'null' or 'absent' (got ${shown(opts.failurePayload)})`)
  if (opts.onWarning !== undefined && typeof opts.onWarning !== 'function')
    throw new SandboxError('BAD_REQUEST', `onWarning must be a function taking the warning's text (got ${shown(opts.onWarning)})`)
  const fixtures = opts.fixtures
  if (fixtures !== undefined && typeof fixtures !== 'string' && !(Array.isArray(fixtures) && fixtures.every((f) => typeof f === 'string')))
    throw new SandboxError(
      'BAD_REQUEST',
      `fixtures must be a path or an array of paths (got ${Array.isArray(fixtures) ? 'an array with other values' : shown(fixtures)})`,
    )
}

/** The options of `createSandbox` alone. */
export function checkSandboxOptions(opts: Record<string, unknown>): void {
  checkOptionNames('createSandbox', opts, SANDBOX_OPTIONS)
  checkSharedOptions(opts)
  if (opts.clientIp !== undefined && typeof opts.clientIp !== 'string')
    throw new SandboxError('BAD_REQUEST', `clientIp must be an IPv4 or IPv6 address as text (got ${shown(opts.clientIp)})`)
  // As createClient refuses it: a test runs against either factory alike.
  checkHeaderValues([['apiKey', opts.apiKey]])
  if (opts.baseUrl !== undefined) {
    const base = readBaseUrl(opts.baseUrl)
    if (typeof base === 'string') throw new SandboxError('BAD_REQUEST', `createSandbox: ${base}`)
  }
}
