/**
 * `dcb replay FILE`: a recorded session (`dcb logs --json --all`) played again against a sandbox, for
 * the key's merchant, in the order its calls were answered. It resets the session with the clock
 * frozen at the first request's sandbox time (saying so; `--no-reset` replays into it as it is), then
 * sends each merchant API request, MO and consent decision with the clock set to its sandbox time,
 * mapping the recording's ids to the replay's own. The
 * runtime rules added and removed and the carrier cancels of the recording are made again at their
 * time, so a session in which support added a rule replays with it.
 * Outcomes, not bytes: a Verify that the OTP passed (a success, a refused charge) uses the OTP the
 * handset got this time, one answered INVALID_PIN a wrong one. Each answer is printed beside the
 * recorded one; any difference in status, message or HTTP status exits 1.
 */
import { readUserText, UserFileError } from '../user-text.js'
import { describeJsonProblem, parseJsonText } from '../json-text.js'
import chalk from 'chalk'
import type { DcbClient } from '../client/index.js'
import type { Rule } from '../contract/operations.js'
import { CONTROL_CALLS, type OperationName } from '../contract/calls.js'
import { isMerchantPath, MERCHANT_CALLS } from '../contract/merchant-calls.js'
import { SandboxError } from '../core/errors.js'
import { clientFrom, guard, out, printJson, sessionGiven, type ClientCliOptions } from './common.js'
import { CliError, EXIT, invokedAs } from './errors.js'

interface Entry {
  id: number
  /** When it was answered (wall clock, ISO 8601). */
  time?: string
  sandbox_time: string
  method: string
  path: string
  merchant: string | null
  msisdn: string | null
  http_status: number
  message: string
  request: any
  response: any
}

interface Answer {
  http: number
  status: string
  message: string
  /** A Status answer's subscription status (ACTIVE, EXPIRED, CANCELED): a renewal that went otherwise shows only there. */
  subscription?: string
  reason?: string
}

/** The subscription status a Status envelope carries, when it is one. */
const subscriptionStatus = (path: string, envelope: any): { subscription?: string } =>
  path === MERCHANT_CALLS.status.path && typeof envelope?.payload?.status === 'string' ? { subscription: envelope.payload.status } : {}

/**
 * How deep a recording may nest arrays and objects: the request log keeps bodies nested at most 64
 * deep as JSON (deeper ones as their text), inside an entry inside a `GET /_sandbox/requests` answer.
 */
export const RECORDING_MAX_DEPTH = 128

/** A control call's path under /_sandbox, as its declaration says it (`contract/calls.ts`). */
const sandboxPath = (name: OperationName) => `/_sandbox${CONTROL_CALLS[name].path}`
/** A control call's path as a pattern: each `:name` one step, captured. */
const pathPattern = (name: OperationName) => new RegExp(`^${sandboxPath(name).replace(/:\w+/g, '([^/]+)')}$`)
/** An MO (POST). */
const MO_PATH = sandboxPath('mo')
/** A runtime rule added (POST) or cleared (DELETE), one path; or removed (DELETE with its id, captured). */
const RULES = [pathPattern('rules.add'), pathPattern('rules.remove')]
const ruleChange = (path: string): RegExpExecArray | null => RULES[0]!.exec(path) ?? RULES[1]!.exec(path)
/** What an MO did that is neither a failure (its code) nor a subscription or a STOP: the replay compares it too. */
const MO_NOTHING = new Set(['ignored', 'unknown_keyword'])
/** What an MO the carrier refused did: a failure, with its code. */
const MO_FAILED = new Set(['rejected', 'charge_failed'])
/** A carrier cancel of a subscription (its id captured). */
const CANCEL = pathPattern('cancel')

/**
 * The entries of a recording: JSON lines, a JSON array, or a `GET /_sandbox/requests` answer; in the
 * order they were answered (`time`, then `id`). A shared store's request log numbers its entries as the
 * replicas write them, after their answers, so a call one replica answered may have a higher id than
 * one another replica answered after it; on one server the two orders are the same.
 */
export function readRecording(file: string): Entry[] {
  let text: string
  try {
    text = readUserText(file, 'recording')
  } catch (e) {
    if (e instanceof UserFileError) throw new CliError(`${file}: ${e.message}`, EXIT.USAGE)
    throw e
  }
  // Whatever the file holds, its text stays out of the error: it says where, not what.
  const notRecording = (why: string) => new CliError(`${file}: not a recording (${invokedAs()} logs --json --all): ${why}`, EXIT.USAGE)
  const json = (t: string, line?: number): unknown => {
    const parsed = parseJsonText(t, RECORDING_MAX_DEPTH)
    if (!('problem' in parsed)) return parsed.value
    if (line === undefined) throw notRecording(describeJsonProblem(parsed.problem))
    throw new CliError(`${file}: line ${line} is not JSON (column ${parsed.problem.column}: ${parsed.problem.why})`, EXIT.USAGE)
  }
  let entries: unknown[]
  const t = text.trim()
  if (t.startsWith('[')) {
    const all = json(t)
    entries = Array.isArray(all) ? all : []
  } else if (t.startsWith('{') && !t.includes('\n')) {
    const one = json(t) as { requests?: unknown }
    entries = Array.isArray(one.requests) ? one.requests : [one]
  } else
    entries = text
      .split('\n')
      .map((l, i) => ({ l, line: i + 1 }))
      .filter(({ l }) => l.trim())
      .map(({ l, line }) => json(l, line))
  const bad = entries.findIndex((e) => !e || typeof e !== 'object' || typeof (e as Entry).path !== 'string' || typeof (e as Entry).sandbox_time !== 'string')
  if (bad >= 0) throw new CliError(`${file}: entry ${bad + 1} is not a request log entry (path and sandbox_time needed)`, EXIT.USAGE)
  const untimed = (entries as Entry[]).findIndex((e) => !/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(e.sandbox_time))
  if (untimed >= 0)
    throw new CliError(
      `${file}: entry ${untimed + 1}: sandbox_time ${JSON.stringify((entries as Entry[])[untimed]!.sandbox_time)} is not a sandbox time such as 2026-01-31T09:00:00.000000`,
      EXIT.USAGE,
    )
  const byId = (a: Entry, b: Entry) => (a.id ?? 0) - (b.id ?? 0)
  const answered = (entries as Entry[]).map((e) => Date.parse(e.time ?? ''))
  // A recording without answer times (made by hand) keeps the request log's order.
  if (answered.some((t) => Number.isNaN(t))) return (entries as Entry[]).slice().sort(byId)
  return (entries as Entry[])
    .map((e, i) => ({ e, at: answered[i]! }))
    .sort((x, y) => x.at - y.at || byId(x.e, y.e))
    .map((x) => x.e)
}

/** The same number of digits, every one different (a wrong OTP whatever the right one). */
const wrongOtp = (otp: string) => otp.replace(/\d/g, (d) => String((Number(d) + 1) % 10)) || '0000'

export async function replay(file: string, o: ClientCliOptions & { merchant?: string; reset?: boolean }): Promise<void> {
  const all = readRecording(file)
  const merchant = o.merchant ?? all.find((e) => isMerchantPath(e.path) && e.merchant)?.merchant
  if (!merchant) throw new CliError(`${file}: no merchant API request to replay`, EXIT.USAGE)
  if (!all.some((e) => e.merchant === merchant && isMerchantPath(e.path))) {
    const present = [...new Set(all.filter((e) => isMerchantPath(e.path) && e.merchant).map((e) => e.merchant))]
    throw new CliError(
      `${file}: no merchant API request of merchant ${JSON.stringify(merchant)} to replay (the recording has: ${present.join(', ') || 'none'})`,
      EXIT.USAGE,
    )
  }
  const ids = new Map<string, string>()
  // A cancel is replayed when its subscription is one of the replay's (the merchant's, made before it).
  const cancels = (e: Entry) => {
    const id = CANCEL.exec(e.path)?.[1]
    return e.method === 'POST' && id !== undefined && made.has(decodeURIComponent(id))
  }
  const made = new Set(
    all.flatMap((e) => (e.merchant === merchant || e.path === MO_PATH ? [e.response?.subscription_id, e.response?.payload?.subscription_id] : [])),
  )
  const entries = all.filter((e) =>
    e.path === MO_PATH
      ? e.method === 'POST'
      : ruleChange(e.path)
        ? e.method === 'POST' || e.method === 'DELETE'
        : CANCEL.test(e.path)
          ? cancels(e)
          : e.merchant === merchant && (isMerchantPath(e.path) || e.path.startsWith('/consent/')),
  )
  const c = clientFrom(o)
  const map = (id: unknown) => (typeof id === 'string' ? (ids.get(id) ?? id) : id)
  const learn = (recorded: unknown, replayed: unknown) => {
    if (typeof recorded === 'string' && typeof replayed === 'string') ids.set(recorded, replayed)
  }
  let now = entries[0]!.sandbox_time
  // --json: one report at the end (for scripts and CI), nothing else on stdout.
  const say = (line: string) => !o.json && out(line)
  const reset = o.reset !== false
  const report = { file, merchant, from: now, reset, passed: false, count: entries.length, differ: 0, answers: [] as ReplayedAnswer[] }
  const given = sessionGiven(o)
  const session = given ? `session "${given.name}"` : 'the default session'
  // A reset wipes what the session held (its ids change, its coverage starts over): said before it is done.
  if (reset) {
    say(chalk.dim(`resetting ${session} before replaying (its subscriptions, request log and coverage start over; --no-reset keeps them)`))
    await guard(() => c.reset({ clock: now, frozen: true }))
  } else {
    // As it is: its clock only moves forward, so a session already past the recording's start answers at its own time.
    const clock = await guard(() => c.now())
    say(
      chalk.dim(
        `replaying into ${session} as it is (no reset), its clock at ${clock.now}${clock.now > now ? `, after the recording's first request (${now})` : ''}`,
      ),
    )
    now = clock.now
  }
  say(chalk.dim(`replaying ${entries.length} request(s) of merchant ${merchant} from ${report.from} (sandbox time)`))
  let differ = 0
  for (const e of entries) {
    if (e.sandbox_time > now) {
      await guard(() => c.setTime(e.sandbox_time))
      now = e.sandbox_time
    }
    const got = await guard(() => send(c, e, map, learn))
    // A control change's answer is no envelope (a canceled subscription's `status` is CANCELED).
    const envelope = isMerchantPath(e.path) || e.path.startsWith('/consent/')
    // An MO fails when the carrier refused it; one that did nothing is no failure, whatever the request log's message.
    const moAction = e.path === MO_PATH && typeof e.response?.action === 'string' ? (e.response.action as string) : undefined
    const want: Answer = {
      http: e.http_status,
      status: (envelope ? e.response?.status : undefined) ?? (moAction ? (MO_FAILED.has(moAction) ? 'FAIL' : 'SUCCESS') : e.message ? 'FAIL' : 'SUCCESS'),
      // An MO that did nothing: its action (a recording made before the request log said it has message "").
      message: e.message || (moAction && MO_NOTHING.has(moAction) ? moAction : ''),
      ...subscriptionStatus(e.path, e.response),
    }
    const same = got.http === want.http && got.status === want.status && got.message === want.message && got.subscription === want.subscription
    if (!same) differ++
    report.answers.push({ id: e.id, sandbox_time: e.sandbox_time, method: e.method, path: e.path, same, recorded: want, replay: got })
    // The subscription status is shown where it differs (the envelopes may be alike).
    const show = (a: Answer) => `${a.http} ${a.message || a.status}${got.subscription !== want.subscription ? ` ${a.subscription ?? '-'}` : ''}`
    say(
      `${same ? chalk.green('✔') : chalk.red('✘')} ${chalk.dim(e.sandbox_time)} ${e.method} ${e.path.startsWith('/consent/') ? '/consent/…' : e.path}  recorded ${show(want)}  replay ${(same ? (s: string) => s : chalk.red)(show(got))}${!same && got.reason ? chalk.dim(`  (${got.reason})`) : ''}`,
    )
  }
  if (differ) process.exitCode = EXIT.FAIL
  if (o.json) return printJson({ ...report, passed: differ === 0, differ })
  if (differ) out(chalk.red(`✘ ${differ} of ${entries.length} answers differ from the recording`))
  else out(chalk.green(`✔ ${entries.length} ${entries.length === 1 ? 'answer matches' : 'answers match'} the recording`))
}

/** One line of the --json report: the recorded answer beside the replay's. */
interface ReplayedAnswer {
  id: number
  sandbox_time: string
  method: string
  path: string
  same: boolean
  recorded: Answer
  replay: Answer
}

async function send(c: DcbClient, e: Entry, map: (id: unknown) => unknown, learn: (a: unknown, b: unknown) => void): Promise<Answer> {
  const rule = ruleChange(e.path)
  const cancel = CANCEL.exec(e.path)
  if (rule || cancel) return change(c, e, rule, cancel, map, learn)
  if (e.path === MO_PATH) {
    const r = await c.mo({ msisdn: e.request?.msisdn, short_code: e.request?.short_code, text: e.request?.text })
    learn(e.response?.subscription_id, r.subscription_id)
    const failed = MO_FAILED.has(r.action)
    // The recording's message is the failure code of an MO that did not subscribe ('' otherwise).
    const message = failed ? String(r.code) : MO_NOTHING.has(r.action) ? r.action : ''
    return { http: 200, status: failed ? 'FAIL' : 'SUCCESS', message, reason: r.reason ?? r.message }
  }
  if (e.path.startsWith('/consent/')) {
    const id = map(decodeURIComponent(e.path.slice('/consent/'.length))) as string
    const r = await c.consent(id, e.request?.action === 'deny' ? 'deny' : 'approve')
    learn(e.response?.subscription_id, r.query.subscription_id)
    const failed = r.query.status === 'FAIL'
    return { http: r.status, status: failed ? 'FAIL' : 'SUCCESS', message: failed ? (r.query.message ?? '') : '', reason: r.reason }
  }
  let body = e.request
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    body = { ...body }
    if ('verif_request_id' in body) body.verif_request_id = map(body.verif_request_id)
    if ('subscription_id' in body) body.subscription_id = map(body.subscription_id)
    if (e.path === MERCHANT_CALLS.verify.path && e.msisdn) body.otp = await otpFor(c, e, body.otp)
  }
  const r = await c.send<Record<string, any>>(e.path, body === null || body === undefined ? undefined : JSON.stringify(body), e.method)
  const p = r.envelope.payload
  const rp = e.response?.payload
  if (p && rp) {
    learn(rp.verif_request_id, p.verif_request_id)
    learn(rp.subscription_id, p.subscription_id)
    if (typeof rp.redirect_url === 'string' && typeof p.redirect_url === 'string') learn(lastSegment(rp.redirect_url), lastSegment(p.redirect_url))
  }
  return { http: r.httpStatus, status: r.envelope.status, message: r.envelope.message, ...subscriptionStatus(e.path, r.envelope), reason: r.reason }
}

/** A runtime rule change or a carrier cancel, made again; a refusal is an answer to compare, not the end of the replay. */
async function change(
  c: DcbClient,
  e: Entry,
  rule: RegExpExecArray | null,
  cancel: RegExpExecArray | null,
  map: (id: unknown) => unknown,
  learn: (a: unknown, b: unknown) => void,
): Promise<Answer> {
  try {
    if (cancel) await c.cancel(map(decodeURIComponent(cancel[1]!)) as string)
    else if (e.method === 'POST') learn(e.response?.id, (await c.rules.add(e.request as Rule)).id)
    else if (rule![1] === undefined) await c.rules.clear()
    else await c.rules.remove(map(decodeURIComponent(rule![1])) as string)
    return { http: 200, status: 'SUCCESS', message: '' }
  } catch (err) {
    if (!(err instanceof SandboxError)) throw err
    return { http: err.status, status: 'FAIL', message: err.code, reason: err.message }
  }
}

/**
 * The OTP to send: a wrong one for a recorded INVALID_PIN; the handset's this time for any other
 * answer the OTP could reach (HTTP 200: a success, a charge the carrier refused, which means the OTP
 * was right, PIN_EXPIRED, MAX_PIN_RETRIES; a 500); the recorded one for a request refused before it
 * (400, 401, 403), so a malformed OTP stays malformed.
 */
async function otpFor(c: DcbClient, e: Entry, recorded: unknown): Promise<unknown> {
  if (e.http_status !== 200 && e.http_status < 500) return recorded
  let sent: string | undefined
  try {
    sent = (await c.otp(e.msisdn!)).otp
  } catch {
    return recorded
  }
  return e.message === 'INVALID_PIN' ? wrongOtp(sent) : sent
}

const lastSegment = (url: string) => url.slice(url.lastIndexOf('/') + 1)
