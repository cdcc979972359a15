/** The client commands: the merchant API (init, verify, status) and the sandbox control API. */
import chalk from 'chalk'
import { ambiguousDuration } from '../core/time.js'
import { TransportError, type DcbClient } from '../client/index.js'
import { CONTROL_CALLS } from '../contract/calls.js'
import { MERCHANT_CALLS } from '../contract/merchant-calls.js'
import { CliError, EXIT, invokedAs } from './errors.js'
import {
  clientFrom,
  guard,
  out,
  printFields,
  printJson,
  reportEnvelope,
  requireValues,
  namedSessionNotThere,
  sessionMissing,
  stopInNewSession,
  warnOfNewSession,
  type ClientCliOptions,
} from './common.js'
import { decimal } from './numbers.js'

type Opts = ClientCliOptions & Record<string, any>

export async function init(o: Opts): Promise<void> {
  const v = await requireValues(
    { msisdn: o.msisdn, service: o.service, country: o.country },
    {
      msisdn: { flag: '--msisdn', message: 'MSISDN (digits, calling code first)', default: '60123456001' },
      service: { flag: '--service', message: 'service code', default: 'STREAMPLUS' },
      country: { flag: '--country', message: 'country code (lower case)', default: 'my' },
    },
  )
  const c = clientFrom(o)
  const r = await guard(() => c.init({ msisdn: v.msisdn, service_code: v.service, country_code: v.country, ...(o.language ? { language: o.language } : {}) }))
  reportEnvelope('init', r, o.json)
  if (!o.json && r.envelope.status === 'SUCCESS') {
    const p = r.envelope.payload!
    // The line is pasted into a shell: it goes where this call went (the flags that chose the server,
    // session, merchant and control access; the environment carries itself), its values quoted.
    const dcb = invokedAs()
    const q = shellWord
    // Each command of the line gets the credential it takes: verify the key, otp and mo the admin token, consent neither.
    const merchant = whereFlags(o, 'apiKey')
    const control = whereFlags(o, 'adminToken')
    const page = whereFlags(o)
    if (p.verif_request_id) out(chalk.dim(`  next: ${dcb} verify${merchant} --id ${q(p.verif_request_id)} --otp "$(${dcb} otp${control} ${q(v.msisdn)})"`))
    else if (p.short_code) out(chalk.dim(`  next: ${dcb} mo${control} ${q(v.msisdn)} ${q(p.short_code)} ${q(p.keyword ?? '')}`))
    else if (p.redirect_url) out(chalk.dim(`  next: open ${p.redirect_url}  (or ${dcb} consent${page} ${q(p.redirect_url)} approve)`))
  }
}

/** The client flags given on the command line that chose where a call goes (and with `credential`, that one), as a shell would take them back. */
function whereFlags(o: Opts, credential?: 'apiKey' | 'adminToken'): string {
  const given: [string, string | undefined][] = [
    ['--base-url', o.baseUrl],
    ['--session', o.session],
    ...(credential === 'apiKey' ? [['--api-key', o.apiKey] as [string, string | undefined]] : []),
    ...(credential === 'adminToken' ? [['--admin-token', o.adminToken] as [string, string | undefined]] : []),
  ]
  return given.map(([flag, value]) => (value === undefined ? '' : ` ${flag} ${shellWord(value)}`)).join('')
}

/** A word a POSIX shell reads back as itself: left bare when it is plain, otherwise in single quotes. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`
}

export async function verify(o: Opts): Promise<void> {
  const v = await requireValues({ id: o.id, otp: o.otp }, { id: { flag: '--id', message: 'verif_request_id' }, otp: { flag: '--otp', message: 'OTP' } })
  const c = clientFrom(o)
  const r = await guard(() => c.verify({ verif_request_id: v.id, otp: v.otp, ...(o.language ? { language: o.language } : {}) }))
  reportEnvelope('verify', r, o.json)
}

export async function status(id: string | undefined, o: Opts): Promise<void> {
  const v = await requireValues({ id }, { id: { flag: 'SUBSCRIPTION_ID', message: 'subscription_id' } })
  const c = clientFrom(o)
  const r = await guard(() => c.status({ subscription_id: v.id }))
  reportEnvelope('status', r, o.json)
}

export async function otp(msisdn: string | undefined, o: Opts): Promise<void> {
  if ((msisdn === undefined) === (o.id === undefined))
    throw new CliError(`usage: ${invokedAs()} otp MSISDN, or ${invokedAs()} otp --id VERIF_REQUEST_ID (one of them)`, EXIT.USAGE)
  const wait = o.wait === undefined ? 0 : decimal(String(o.wait), true)
  if (!Number.isFinite(wait) || wait < 0 || wait > 120) throw new CliError('--wait must be a number of seconds from 0 to 120', EXIT.USAGE)
  const c = clientFrom(o)
  await warnOfNewSession(c, o)
  const r = await guard(() => c.otp(o.id !== undefined ? { verif_request_id: String(o.id) } : msisdn!, { wait }), wait > 0)
  if (o.json) printJson(r)
  else out(r.otp)
}

export async function sms(msisdn: string, o: Opts): Promise<void> {
  const c = clientFrom(o)
  await warnOfNewSession(c, o)
  const r = await guard(() => c.sms(msisdn))
  if (o.json) return printJson(r)
  if (!r.messages.length) return out(chalk.dim(`no messages for ${msisdn}`))
  for (const m of r.messages) {
    const arrow = m.direction === 'mo' ? chalk.cyan(`→ ${m.to}`) : chalk.green(`← ${m.from}`)
    out(`${chalk.dim(m.at)} ${arrow} ${m.text}`)
  }
}

export async function mo(msisdn: string, shortCode: string, text: string[], o: Opts): Promise<void> {
  const c = clientFrom(o)
  const missing = await namedSessionNotThere(c, o)
  const r = await guard(() => c.mo({ msisdn, short_code: shortCode, text: text.join(' ') }))
  // A STOP that found nothing in a session it made (a mistyped name) says so: it still exits 0, as a STOP with nothing to stop does.
  if (missing && r.action === 'stop' && !r.canceled?.length) stopInNewSession(missing)
  if (r.action === 'charge_failed' || r.action === 'rejected') process.exitCode = EXIT.FAIL
  // An MO that did nothing (a keyword no service has there, a short code the carrier lacks) is no
  // success: a script would go on as if it had subscribed. Its reason (the request log's) ends the command.
  const nothing =
    r.action === 'unknown_keyword'
      ? `${r.message ?? 'not a keyword'}${r.keywords?.length ? ` (keywords there: ${r.keywords.filter(Boolean).join(', ')})` : ''}`
      : r.action === 'ignored'
        ? (r.reason ?? 'the carrier dropped it')
        : undefined
  if (o.json) printJson(r)
  else {
    // A STOP with nothing to cancel exits 0 (the carrier answered it, the request log counts it a STOP, and
    // the handset ends with no subscription there, as asked), but it is not shown as a success.
    const ok = r.action === 'subscribed' || (r.action === 'stop' && !!r.canceled?.length)
    out(`${ok ? chalk.green('✔') : chalk.yellow('•')} ${r.action}${r.code ? `: ${chalk.bold(r.code)}` : ''}`)
    const { action: _a, ...rest } = r
    printFields(rest)
  }
  if (nothing !== undefined) throw new CliError(`the MO did nothing (${r.action}): ${nothing}`, EXIT.FAIL)
}

export async function consent(url: string, action: string, o: Opts): Promise<void> {
  if (action !== 'approve' && action !== 'deny') throw new CliError(`the action must be approve or deny, not "${action}"`, EXIT.USAGE)
  if (/^[a-z][a-z0-9+.-]*:/i.test(url) && !/^https?:\/\//i.test(url))
    throw new CliError(`"${url}" is not an http(s) URL (give the redirect_url from init, or its id)`, EXIT.USAGE)
  const r = await guard(() => clientFrom(o).consent(url, action))
  const failed = r.query.status === 'FAIL'
  if (failed) process.exitCode = EXIT.FAIL
  if (o.json) return printJson(r)
  out(`${failed ? chalk.red('✘') : chalk.green('✔')} ${action}: ${r.location ? `303 → ${r.location}` : `HTTP ${r.status}`}`)
  printFields(r.query)
  if (r.reason) out(`  ${chalk.dim('why'.padEnd(17))} ${r.reason}`)
}

export async function cancel(id: string, o: Opts): Promise<void> {
  const c = clientFrom(o)
  // A session that is not there has no subscription to cancel: said by its name, not as SUBSCRIPTION_NOT_FOUND.
  await sessionMissing(c, o, `subscription ${id} was not canceled`, true)
  const r = await guard(() => c.cancel(id))
  if (o.json) return printJson(r)
  out(`${chalk.green('✔')} canceled by the carrier`)
  printFields({ subscription_id: r.subscription_id, status: r.status, canceled_dt: r.canceled_dt })
}

/** How many events a clock move lists in full for a person (more are summarised; --all or --json lists all). */
const LIST_EVENTS = 20
const EDGE_EVENTS = 5
/** A move's progress line on a terminal: first after this long without an answer, then this often. */
const PROGRESS_AFTER_MS = 1000
const PROGRESS_EVERY_MS = 500
/** Off a terminal the clock is read this often only to know the server still answers. */
const ALIVE_EVERY_MS = 2000

type ClockView = Awaited<ReturnType<DcbClient['now']>>
type MoveAnswer = Awaited<ReturnType<DcbClient['advance']>>
type MoveEvent = MoveAnswer['events'][number]

/** The clock in one line: the time, the move under way (if one is), the next event due. */
function clockLine(r: ClockView): string {
  const move = r.move ? chalk.yellow(`  moving to ${r.move.to}: reached ${r.now}, ${r.move.events_run} events run so far`) : ''
  return `${r.now}${r.frozen ? ' (frozen)' : ''}${move}${chalk.dim(r.next_event_dt ? `  next event ${r.next_event_dt}` : '  no event due')}`
}

export async function clock(args: string[], o: Opts): Promise<void> {
  const c = clientFrom(o)
  const [verb, arg] = args
  if (!verb) {
    if (o.all) throw new CliError(`--all lists the events of a move: ${invokedAs()} clock advance DURATION --all, or clock set TIME --all`, EXIT.USAGE)
    await warnOfNewSession(c, o)
    const r = await guard(() => c.now())
    if (o.json) return printJson(r)
    return out(clockLine(r))
  }
  if ((verb !== 'advance' && verb !== 'set') || !arg || args.length > 2)
    throw new CliError(`usage: ${invokedAs()} clock [advance DURATION | set TIME] (e.g. advance P1M, advance 36h, set 2026-01-31T00:00:00)`, EXIT.USAGE)
  const ambiguous = verb === 'advance' ? ambiguousDuration(arg) : undefined
  if (ambiguous) throw new CliError(ambiguous, EXIT.USAGE)
  const r = await withProgress(c, () => (verb === 'advance' ? c.advance(arg) : c.setTime(arg)))
  if (o.json) return printJson(r)
  printMove(r, !!o.all)
}

/**
 * Runs a clock move, which takes as long as its events do (no time-out unless --timeout gives one).
 * Meanwhile the clock is read (reads answer during a move, between its batches): on a terminal a
 * line on stderr says where the move is, rewritten in place and wiped when the answer comes. A read
 * that gets no answer ends the wait (exit 3), so a hung server is not waited on forever; a server that
 * is gone ends the move's own connection.
 */
async function withProgress(c: DcbClient, move: () => Promise<MoveAnswer>): Promise<MoveAnswer> {
  const started = Date.now()
  const tty = !!process.stderr.isTTY
  let timer: NodeJS.Timeout | undefined
  let done = false
  let shown = false
  // The last position read with the move on. A read the server refuses (it stops listening to shut
  // down), or one after the move stopped, keeps it shown until the answer wipes the line.
  let last: ClockView | undefined
  let lost!: (e: Error) => void
  const gone = new Promise<never>((_, reject) => (lost = reject))
  const look = async () => {
    try {
      const view = await c.now()
      if (view.move) last = view
    } catch (e) {
      if (done) return
      // Only a read with no answer ends the wait: the server is hung. A refused read (a server shutting
      // down stops listening first) leaves the move's own connection to bring its answer or its failure.
      if (e instanceof TransportError && e.timedOut)
        return lost(new TransportError(`${e.message} (asked where the clock move is, while waiting for its answer)`))
    }
    if (done) return
    if (tty) {
      const s = Math.round((Date.now() - started) / 1000)
      const where = last?.move ? `reached ${last.now} of ${last.move.to}, ${last.move.events_run} events run` : 'under way'
      process.stderr.write(`\r\x1b[Kdcb: moving the clock: ${where} (${s} s)`)
      shown = true
    }
    timer = setTimeout(look, tty ? PROGRESS_EVERY_MS : ALIVE_EVERY_MS)
  }
  timer = setTimeout(look, tty ? PROGRESS_AFTER_MS : ALIVE_EVERY_MS)
  const answer = move().catch((e: unknown) => {
    // Given up on (--timeout): the server goes on with the move all the same.
    if (e instanceof TransportError && e.timedOut)
      throw new TransportError(`${e.message}; the clock move goes on in the server (${invokedAs()} clock shows where it is)`)
    throw e
  })
  try {
    return await guard(() => Promise.race([answer, gone]), true)
  } finally {
    done = true
    clearTimeout(timer)
    if (shown) process.stderr.write('\r\x1b[K')
  }
}

/** What a clock move ran: each event when few (or --all); else counts per kind, then the first and last few. */
function printMove(r: MoveAnswer, all: boolean): void {
  const listed = r.events.length
  const omitted = r.events_omitted ?? 0
  const total = listed + omitted
  // The last events of the move (the answer lists its first ones; past its size bound, `events_last` has the end).
  const last: MoveEvent[] = omitted ? (r.events_last ?? []) : r.events
  out(`${r.clock.now}  ${chalk.dim(`${total} event${total === 1 ? '' : 's'}`)}`)
  const line = (e: MoveEvent) =>
    out(
      `  ${chalk.dim(e.at)} ${String(e.type).padEnd(16)} ${e.subscription_id ?? e.verif_request_id ?? ''} ${e.code ? chalk.red(e.code) : ''}${e.status ? chalk.dim(` -> ${e.status}`) : ''}${e.reason ? `\n    ${chalk.dim('why:')} ${e.reason}` : ''}`,
    )
  const notListed = `not listed in the answer, which lists the first ${listed} (64 MiB)`
  if (all || total <= LIST_EVENTS) {
    for (const e of r.events) line(e)
    if (!omitted) return
    // The end of the move, which the listing does not reach: the last ones it ran that are not listed.
    const end = last.slice(-Math.min(omitted, last.length))
    if (omitted > end.length) out(chalk.dim(`  … ${omitted - end.length} more, ${notListed} …`))
    for (const e of end) line(e)
    return
  }
  // Thousands of events help no one on a screen: counts per kind (they add up to the total), then the first and last few.
  const pad = String(total).length
  const row = (n: number, what: string) => out(`  ${String(n).padStart(Math.max(8, pad))}  ${what}`)
  if (r.event_counts) for (const k of r.event_counts) row(k.count, k.code ? `${k.type} ${k.code}` : k.type)
  else {
    // An older server counts nothing: the listed ones by kind, the rest as one line.
    const kinds = new Map<string, number>()
    for (const e of r.events) {
      const kind = e.code ? `${e.type} ${e.code}` : String(e.type)
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
    }
    for (const [kind, n] of [...kinds].sort((a, b) => b[1] - a[1])) row(n, kind)
    if (omitted) row(omitted, chalk.dim(`of kinds not known: ${notListed}`))
  }
  row(total, `in all${omitted && r.event_counts ? chalk.dim(` (${omitted} of them ${notListed})`) : ''}`)
  out(chalk.dim(`  first ${EDGE_EVENTS}:`))
  for (const e of r.events.slice(0, EDGE_EVENTS)) line(e)
  const end = last.length ? last.slice(-EDGE_EVENTS) : r.events.slice(-EDGE_EVENTS)
  out(chalk.dim(`  … ${total - EDGE_EVENTS - end.length} more …`))
  out(chalk.dim(last.length ? `  last ${end.length}:` : `  last ${end.length} listed (the answer does not say which came last):`))
  for (const e of end) line(e)
  out(chalk.dim(`  (every event: --all, or --json${omitted ? `; past the first ${listed}, the answer has only the last ${last.length}` : ''})`))
}

const STATUSES = ['ACTIVE', 'CANCELED', 'EXPIRED']

export async function subscriptions(o: Opts): Promise<void> {
  if (o.status !== undefined && !STATUSES.includes(String(o.status).toUpperCase()))
    throw new CliError(`--status "${o.status}" is not a subscription status; valid: ${STATUSES.join(', ')}`, EXIT.USAGE)
  const c = clientFrom(o)
  await warnOfNewSession(c, o)
  const r = await guard(() => c.subscriptions({ msisdn: o.msisdn, merchant: o.merchant, service: o.service, status: o.status }))
  if (o.json) return printJson(r)
  if (!r.subscriptions.length) return out(chalk.dim('no subscriptions'))
  for (const s of r.subscriptions) {
    const color = s.status === 'ACTIVE' ? chalk.green : s.status === 'CANCELED' ? chalk.yellow : chalk.red
    out(
      `${s.subscription_id}  ${color(String(s.status).padEnd(8))} ${s.msisdn.padEnd(13)} ${s.service_code.padEnd(11)} ${chalk.dim(`${s.merchant} expires ${s.expiry_dt}`)}`,
    )
  }
}

export async function logs(o: Opts): Promise<void> {
  const c = clientFrom(o)
  const print = (e: Record<string, any>) => {
    if (o.json) return out(JSON.stringify(e))
    const ok = e.http_status < 300 && !e.message
    const status = (ok ? chalk.green : chalk.red)(`${e.http_status} ${e.message || 'SUCCESS'}`)
    const state = answeredState(e)
    const who = [e.merchant, e.msisdn, e.ip ? `from ${e.ip}` : ''].filter(Boolean).join(' ')
    out(
      `${chalk.dim(e.sandbox_time)} ${e.method} ${e.path} ${status}${state ? ` ${stateColor(state)(state)}` : ''}${e.client_closed ? chalk.yellow(' (client gone)') : ''}${e.fault ? chalk.yellow(` (fault ${e.fault.kind}, ${e.fault.when})`) : ''} ${chalk.dim(`${who} ${e.duration_ms} ms${e.delay_ms ? ` (held ${e.delay_ms} ms by a rule)` : ''}`)}${e.reason ? `\n    ${chalk.dim('why:')} ${e.reason}` : ''}`,
    )
    for (const line of moveLines(e, o.subscription === undefined ? undefined : String(o.subscription))) out(`    ${chalk.dim('ran:')} ${line}`)
  }
  // --all: every entry the request log holds (it is bounded); otherwise the latest --limit. Both: one would be dropped.
  if (o.all && o.limit !== undefined)
    throw new CliError('--all shows every entry the request log holds: it cannot go with --limit (drop one of them)', EXIT.USAGE)
  const limit = o.all ? 1_000_000 : decimal(String(o.limit ?? 20))
  if (!o.all && (!Number.isInteger(limit) || limit < 1 || limit > 100_000))
    throw new CliError(`--limit "${o.limit}" must be a whole number from 1 to 100000`, EXIT.USAGE)
  if (o.subscription !== undefined && o.follow)
    throw new CliError('--subscription lists what the request log holds; it does not follow (use --msisdn with -f)', EXIT.USAGE)
  await warnOfNewSession(c, o)
  // A mistyped id is SUBSCRIPTION_NOT_FOUND, not an empty list.
  if (o.subscription !== undefined) await guard(() => c.subscription(String(o.subscription)))
  const first = await guard(() =>
    c.requests({
      since: 0,
      limit,
      ...(o.msisdn ? { msisdn: o.msisdn } : {}),
      ...(o.subscription !== undefined ? { subscription: String(o.subscription) } : {}),
    }),
  )
  if (!first.requests.length && !o.json) {
    const none =
      o.subscription !== undefined
        ? `no request about subscription ${o.subscription}${o.msisdn ? ` and ${o.msisdn} (both filters apply)` : ''} in the request log`
        : o.msisdn
          ? `no request about ${o.msisdn} in the request log`
          : 'the request log is empty (no merchant call since the server started or was reset)'
    out(chalk.dim(`${none}${o.follow ? '; waiting for requests…' : ''}`))
  }
  for (const e of [...first.requests].reverse()) print(e)
  if (!o.follow) return
  // Loaded only when following: the stream reader stays out of every other command's start-up.
  const { follow } = await import('./follow.js')
  await follow(c, { msisdn: o.msisdn, last: first.requests[0]?.id ?? 0, print })
}

/** The subscription state a Status call answered (ACTIVE, CANCELED, EXPIRED), read from the envelope the request log kept. */
function answeredState(e: Record<string, any>): string | undefined {
  const state = e.path === MERCHANT_CALLS.status.path ? e.response?.payload?.status : undefined
  return typeof state === 'string' ? state : undefined
}

/** A subscription status in its color (ACTIVE green, CANCELED yellow, EXPIRED red). */
const stateColor = (state: string) => (state === 'ACTIVE' ? chalk.green : state === 'CANCELED' ? chalk.yellow : chalk.red)

const LOGGED_EVENTS = 5
/** The paths of a clock move (advance, set) as the request log names them. */
const CLOCK_MOVES = new Set([CONTROL_CALLS.advance.path, CONTROL_CALLS.setTime.path].map((p) => `/_sandbox${p}`))

/**
 * What a clock move in the request log ran (a renewal that failed shows only there): its events, those of
 * `subscription` when the request log is shown for one, listed up to a few, else counted by kind.
 */
function moveLines(e: Record<string, any>, subscription: string | undefined): string[] {
  const r = e.response
  if (!CLOCK_MOVES.has(e.path) || !r || typeof r !== 'object') return []
  if (!Array.isArray(r.events)) return r.event_count ? [`${r.event_count} events (too many for the request log to list)`] : []
  const events: Record<string, any>[] = subscription === undefined ? r.events : r.events.filter((x: any) => x.subscription_id === subscription)
  if (events.length <= LOGGED_EVENTS)
    return events.map(
      (x) =>
        `${x.at} ${x.type}${x.msisdn ? ` ${x.msisdn}` : ''}${x.code ? ` ${chalk.red(x.code)}` : ''}${x.status ? ` -> ${x.status}` : ''}${x.reason ? chalk.dim(` (why: ${x.reason})`) : ''}`,
    )
  const kinds = new Map<string, number>()
  for (const x of events) kinds.set(x.code ? `${x.type} ${x.code}` : x.type, (kinds.get(x.code ? `${x.type} ${x.code}` : x.type) ?? 0) + 1)
  return [
    `${events.length} events: ${[...kinds]
      .sort((a, b) => b[1] - a[1])
      .map(([kind, n]) => `${n} ${kind}`)
      .join(', ')}`,
  ]
}

export async function reset(o: Opts): Promise<void> {
  const seed = o.seed === undefined ? {} : { seed: Number(o.seed) }
  const r = await guard(() => clientFrom(o).reset(o.clock ? { clock: String(o.clock), ...seed } : seed))
  if (o.json) return printJson(r)
  out(`${chalk.green('✔')} back to the loaded fixtures${o.clock ? ` at ${o.clock}` : ''}${o.seed === undefined ? '' : `, delays drawn from seed ${r.seed}`}`)
}

export async function scenarios(o: Opts): Promise<void> {
  if (o.markdown && o.json) throw new CliError('--markdown and --json are two forms of the same list: give one', EXIT.USAGE)
  const c = clientFrom(o)
  await warnOfNewSession(c, o)
  const r = await guard(() => c.scenarios())
  if (o.json) return printJson(r)
  if (o.markdown) {
    const { scenarioTable } = await import('../core/scenarios.js')
    return out(scenarioTable(r.scenarios))
  }
  for (const s of r.scenarios)
    out(
      `${s.match.padEnd(16)} ${chalk.dim(s.step.padEnd(15))} ${chalk.bold(s.outcome.padEnd(40))} ${chalk.dim(s.description)}${s.source === 'runtime' ? chalk.yellow(' (runtime)') : ''}`,
    )
}

/**
 * One subscription: its fields, then its timeline as the control API gives it, oldest first (state
 * changes, charges, the messages sent about it, the requests about it in the request log).
 */
export async function subscription(id: string, o: Opts): Promise<void> {
  const c = clientFrom(o)
  await warnOfNewSession(c, o)
  const sub = await guard(() => c.subscription(id))
  // --json: the control API's answer as it is (GET /_sandbox/subscriptions/ID), for scripts that know it.
  if (o.json) return printJson(sub)
  const { charges: _charges, timeline, ...fields } = sub as Record<string, any> & { timeline: Record<string, any>[] }
  out(`${chalk.bold(id)}  ${stateColor(fields.status)(fields.status)}`)
  printFields(fields)
  out(`\n${chalk.bold('timeline')} ${chalk.dim('(oldest first: state changes, charges, messages sent about it, requests about it)')}`)
  for (const e of timeline) {
    const why = (text: unknown) => (text ? `\n    ${chalk.dim('why:')} ${text}` : '')
    const head = `  ${chalk.dim(e.at)} ${String(e.type).padEnd(8)}`
    if (e.type === 'state') {
      const by = e.superseded_by ? ` by ${e.superseded_by}` : ''
      out(`${head} ${e.from ?? 'new'} -> ${stateColor(e.to)(e.to)} ${chalk.dim(`(${e.cause}${by})`)}`)
    } else if (e.type === 'charge') {
      const outcome = (e.outcome === 'SUCCESS' ? chalk.green : chalk.red)(String(e.outcome).padEnd(22))
      out(`${head} ${String(e.kind).padEnd(8)} ${outcome} ${e.amount ?? ''} ${e.currency ?? ''}${why(e.reason)}`)
    } else if (e.type === 'message') out(`${head} ${String(e.kind).padEnd(14)} ${e.text}`)
    else out(`${head} #${e.request_id} ${e.method} ${e.path} ${chalk.dim(`${e.http_status}${e.message ? ` ${e.message}` : ''}`)}${why(e.reason)}`)
  }
}
