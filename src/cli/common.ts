/**
 * What the client commands share: where the server is, which key, how to print, how to ask.
 * Kept light: no server, zod, msw or prompt code is loaded here (prompts load only on a terminal).
 */
import chalk from 'chalk'
import { DcbClient, SandboxError, TransportError, type ApiResult, type Envelope } from '../client/index.js'
import { SESSION_CALLS, sessionRequest } from '../contract/calls.js'
import type { SessionsAnswer } from '../contract/index.js'
import { DEFAULT_BASE_URL, DEMO_API_KEY, dotNameRefusal, isDotName, SESSION_NAME, SESSION_NAME_RULE } from '../contract/defaults.js'
import { OUTCOMES, type OutcomeCode } from '../core/outcomes.js'
import { CliError, EXIT, invokedAs } from './errors.js'

export interface ClientCliOptions {
  baseUrl?: string
  apiKey?: string
  adminToken?: string
  json?: boolean
  timeout?: number
  session?: string
}

/** Options first, then DCB_BASE_URL / DCB_API_KEY, then the local sandbox and the demo key. */
export function clientFrom(opts: ClientCliOptions): DcbClient {
  const baseUrl = opts.baseUrl ?? process.env.DCB_BASE_URL ?? DEFAULT_BASE_URL
  const apiKey = opts.apiKey ?? process.env.DCB_API_KEY ?? DEMO_API_KEY
  if (!isHttpUrl(baseUrl)) throw new CliError(`${opts.baseUrl !== undefined ? '--base-url' : 'DCB_BASE_URL'} "${baseUrl}" is not an http(s) URL`, EXIT.USAGE)
  const adminToken = opts.adminToken ?? process.env.DCB_ADMIN_TOKEN
  const given = sessionGiven(opts)
  const session = given?.name
  // The server's rule for session names, checked here to fail before any call.
  if (given && !SESSION_NAME.test(given.name)) throw new CliError(`${given.from} "${given.name}" is not a session name: ${SESSION_NAME_RULE}`, EXIT.USAGE)
  let client: DcbClient
  try {
    client = new DcbClient({
      baseUrl,
      apiKey,
      session,
      adminToken,
      timeoutMs: opts.timeout ? opts.timeout * 1000 : undefined,
      command: invokedAs(),
      // A key or token no header can carry is a usage error naming where it came from, not the transport's.
      names: {
        apiKey: opts.apiKey !== undefined ? '--api-key' : 'DCB_API_KEY',
        adminToken: opts.adminToken !== undefined ? '--admin-token' : 'DCB_ADMIN_TOKEN',
      },
    })
  } catch (e) {
    if (e instanceof SandboxError) throw new CliError(e.message, EXIT.USAGE)
    throw e
  }
  waiting = { baseUrl, limitS: opts.timeout ?? 30 }
  return client
}

/** The session a command works in, and where its name came from (none: the default session). */
export function sessionGiven(opts: ClientCliOptions): { name: string; from: '--session' | 'DCB_SESSION' } | undefined {
  if (opts.session !== undefined) return { name: opts.session, from: '--session' }
  return process.env.DCB_SESSION ? { name: process.env.DCB_SESSION, from: 'DCB_SESSION' } : undefined
}

/**
 * The session --session or DCB_SESSION names when it is not there (the list makes none); undefined when
 * it is, or none is named (the default session). A `.` or `..` not there is refused as the server
 * refuses it (one kept from an older version is there, and is served).
 */
export async function namedSessionNotThere(c: DcbClient, o: ClientCliOptions): Promise<{ name: string; from: '--session' | 'DCB_SESSION' } | undefined> {
  const given = sessionGiven(o)
  if (given === undefined) return undefined
  const { sessions } = await listSessions(c)
  if (sessions.some((s) => s.name === given.name)) return undefined
  if (isDotName(given.name)) throw new CliError(`session "${given.name}" (${given.from}) does not exist, and ${dotNameRefusal(given.name)}`, EXIT.FAIL)
  return given
}

/** The server's sessions, by the declared call (`SESSION_CALLS`), which makes none. */
export function listSessions(c: DcbClient): Promise<SessionsAnswer> {
  const { method, path } = sessionRequest('listSessions', [])
  return guard(() => c.control<SessionsAnswer>(method, path))
}

/** What a line about a session that is not there says after its name, in every command's words. */
const MISTYPED = `(a mistyped name? the sessions are listed by ${SESSION_CALLS.listSessions.method} /_sandbox${SESSION_CALLS.listSessions.path})`

/**
 * For a command that reads a session: says on stderr when the session it names did not exist. A read
 * makes the session (the contract), so a mistyped --session or DCB_SESSION would read as an empty one
 * (no calls, subscriptions, messages). The list of sessions makes none, so it is asked first; the
 * default session is never warned about. Said before the read, which may wait (otp --wait, logs -f) or fail.
 */
export async function warnOfNewSession(c: DcbClient, o: ClientCliOptions): Promise<void> {
  const missing = await namedSessionNotThere(c, o)
  if (missing) process.stderr.write(`dcb: warning: session "${missing.name}" (${missing.from}) did not exist: this read makes it, empty ${MISTYPED}\n`)
}

/**
 * For a command that only removes or clears (rules remove, rules clear, cancel): whether the session it
 * names is not there, said on stderr. Such a call would make the session (any call does) only to find
 * nothing in it, and answer as of an empty session ("removed 0", not found), hiding a mistyped name:
 * the caller then sends nothing. `refused`: the command fails with this line (exit 1: nothing it was
 * asked to remove was there); else it is a warning (exit 0: the state asked for, nothing in force, holds).
 */
export async function sessionMissing(c: DcbClient, o: ClientCliOptions, nothing: string, refused: boolean): Promise<boolean> {
  const missing = await namedSessionNotThere(c, o)
  if (!missing) return false
  const line = `session "${missing.name}" (${missing.from}) does not exist: ${nothing} ${MISTYPED}`
  if (refused) throw new CliError(line, EXIT.FAIL)
  process.stderr.write(`dcb: warning: ${line}\n`)
  return true
}

/**
 * What `dcb mo` says when its STOP stopped nothing in a session that did not exist before it (asked
 * before the MO, which makes it as any write does: which texts are a STOP is the carrier's to say).
 */
export function stopInNewSession(missing: { name: string; from: string }): void {
  process.stderr.write(`dcb: warning: session "${missing.name}" (${missing.from}) did not exist: this STOP made it, and found nothing to stop ${MISTYPED}\n`)
}

/** An absolute http: or https: URL. */
export function isHttpUrl(text: string): boolean {
  try {
    const { protocol } = new URL(text)
    return protocol === 'http:' || protocol === 'https:'
  } catch {
    return false
  }
}

/** The server the last client talks to, and how long a call may wait (for the progress note). */
let waiting = { baseUrl: DEFAULT_BASE_URL, limitS: 30 }
/** After this long without an answer, say so (then every PROGRESS_EVERY_S) instead of waiting silently. */
const PROGRESS_AFTER_S = 2
const PROGRESS_EVERY_S = 5

/**
 * Runs a client action, turning transport and control errors into one line and an exit code. A
 * server that does not answer gets a progress note on stderr (`quiet`: a call that waits on purpose).
 */
export async function guard<T>(fn: () => Promise<T>, quiet = false): Promise<T> {
  const started = Date.now()
  const tty = !!process.stderr.isTTY
  let shown = false
  const note = () => {
    const s = Math.round((Date.now() - started) / 1000)
    const text = `dcb: no answer from ${waiting.baseUrl} yet (${s} s; giving up after ${waiting.limitS} s, see --timeout)`
    process.stderr.write(tty ? `\r${text}` : `${text}\n`)
    shown = true
  }
  let timer: NodeJS.Timeout | undefined
  if (!quiet)
    timer = setTimeout(() => {
      note()
      timer = setInterval(note, PROGRESS_EVERY_S * 1000)
    }, PROGRESS_AFTER_S * 1000)
  try {
    return await fn()
  } catch (e) {
    if (e instanceof TransportError) throw new CliError(e.message, EXIT.UNREACHABLE)
    if (e instanceof SandboxError) throw new CliError(`${e.code}: ${e.message}`, EXIT.FAIL)
    throw e
  } finally {
    clearTimeout(timer)
    clearInterval(timer)
    if (shown && tty) process.stderr.write('\n')
  }
}

export function out(line = ''): void {
  process.stdout.write(line + '\n')
}

export function printJson(v: unknown): void {
  out(JSON.stringify(v, null, 2))
}

const label = (k: string) => chalk.dim(k.padEnd(17))
const value = (v: unknown) => (v === null || v === undefined ? chalk.dim('null') : typeof v === 'object' ? JSON.stringify(v) : String(v))

export function printFields(obj: Record<string, unknown>, indent = '  '): void {
  for (const [k, v] of Object.entries(obj)) out(`${indent}${label(k)} ${value(v)}`)
}

/** Prints an envelope (raw with --json) and sets the exit code: 0 SUCCESS, 1 FAIL. */
export function reportEnvelope(op: string, r: ApiResult<unknown>, json: boolean | undefined): void {
  const e = r.envelope as Envelope
  if (json) out(JSON.stringify(e))
  else if (e.status === 'SUCCESS') {
    out(`${chalk.green('✔ SUCCESS')} ${op}`)
    if (e.payload && typeof e.payload === 'object') printFields(e.payload as Record<string, unknown>)
  } else {
    const spec =
      (OUTCOMES as Record<string, { describe: string }>)[e.message] ?? Object.values(OUTCOMES).find((o) => o.message === e.message && o.http === r.httpStatus)
    out(
      `${chalk.red('✘ FAIL')} ${op}: ${chalk.bold(e.message || '(no message)')} (HTTP ${r.httpStatus})${r.reason ? `: ${r.reason}` : spec ? chalk.dim(` ${describeFor(e.message as OutcomeCode, r.httpStatus, spec.describe)}`) : ''}`,
    )
  }
  if (e.status !== 'SUCCESS') process.exitCode = EXIT.FAIL
}

function describeFor(message: string, http: number, fallback: string): string {
  if (message === 'UNAUTHORIZED' && http === 403) return OUTCOMES.IP_NOT_ALLOWED.describe
  if (message === 'BAD_REQUEST' && http === 413) return OUTCOMES.PAYLOAD_TOO_LARGE.describe
  if (message === 'ERROR' && http === 500) return OUTCOMES.SERVER_ERROR.describe
  return fallback
}

export function canPrompt(): boolean {
  return !!process.stdin.isTTY && !!process.stdout.isTTY && !process.env.CI
}

/**
 * Fills in missing required values: on a terminal by asking, otherwise it stops at once (exit 2)
 * naming every missing option.
 */
export async function requireValues<T extends Record<string, string | undefined>>(
  values: T,
  questions: { [K in keyof T]?: { flag: string; message: string; default?: string } },
): Promise<{ [K in keyof T]: string }> {
  const keys = Object.keys(questions) as (keyof T)[]
  // Given, but empty: in a script, usually a $(…) that printed nothing (its error is on stderr above).
  const empty = keys.filter((k) => values[k] === '').map((k) => questions[k]!.flag)
  if (empty.length) throw new CliError(`${empty.join(', ')} ${empty.length === 1 ? 'is' : 'are'} empty: give a value (an empty "$(…)" gives none)`, EXIT.USAGE)
  const missing = keys.filter((k) => !values[k])
  if (!missing.length) return values as { [K in keyof T]: string }
  if (!canPrompt()) {
    throw new CliError(`missing ${missing.map((k) => questions[k]!.flag).join(', ')} (no terminal to ask on)`, EXIT.USAGE)
  }
  const { input } = await import('@inquirer/prompts')
  const outv = { ...values } as Record<string, string | undefined>
  for (const k of missing) {
    const q = questions[k]!
    try {
      outv[k as string] = (await input({ message: q.message, default: q.default, required: true })).trim()
    } catch (e) {
      // Ctrl-C at the question: exit 130, as a shell does for an interrupted command (not a usage error).
      if (e instanceof Error && e.name === 'ExitPromptError') throw new CliError('canceled', EXIT.CANCELED)
      throw new CliError('canceled', EXIT.USAGE)
    }
  }
  return outv as { [K in keyof T]: string }
}
