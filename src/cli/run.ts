/**
 * `dcb run FILE`: a scripted scenario. Steps run in order; each stores its result under its name
 * (`as`, else the action), and later steps use `${name.path}` to refer to earlier results. An
 * `expect` step compares paths with values; the first mismatch ends the run with exit code 1.
 */
import chalk from 'chalk'
import { z } from 'zod'
import { headerValueProblem } from '../client/header-value.js'
import { DEFAULT_BASE_URL } from '../contract/defaults.js'
import type { InitBody, StatusBody, VerifyBody } from '../contract/index.js'
import type { Rule } from '../contract/operations.js'
import { clientFrom, guard, isHttpUrl, out, printJson } from './common.js'
import { CliError, EXIT } from './errors.js'
import type { RunTarget } from './run-local.js'
import { checkRunFlags, runWhere, type RunWhereOptions } from './run-where.js'
import { readRunDocument } from './run-file.js'
import { parseDuration, ambiguousDuration, timeProblem } from '../core/time.js'
import { HINT_KEYS } from '../core/nearest.js'

const ACTIONS = ['init', 'verify', 'status', 'otp', 'sms', 'mo', 'consent', 'cancel', 'clock', 'reset', 'rule', 'subscription', 'expect'] as const
type Action = (typeof ACTIONS)[number]

/**
 * The fields each sandbox action's object takes (`text`: or the one value as a string). Merchant
 * bodies and rules go as written (the server judges them, a bad one on purpose too); a field no
 * action takes is refused before anything runs, since ignoring it would run something else
 * (`{"consent": {"acton": "deny"}}` approving, `{"otp": {"wiat": 30}}` waiting 5 s).
 */
const ACTION_FIELDS: Partial<Record<Action, { fields: string[]; required: string[]; text?: boolean }>> = {
  otp: { fields: ['msisdn', 'wait'], required: ['msisdn'], text: true },
  sms: { fields: ['msisdn'], required: ['msisdn'], text: true },
  mo: { fields: ['msisdn', 'short_code', 'text'], required: ['msisdn', 'short_code', 'text'] },
  consent: { fields: ['url', 'action'], required: ['url'] },
  cancel: { fields: ['subscription_id'], required: ['subscription_id'], text: true },
  subscription: { fields: ['subscription_id'], required: ['subscription_id'], text: true },
  clock: { fields: ['advance', 'set'], required: [] },
  reset: { fields: ['clock', 'frozen', 'seed'], required: [] },
}

/** What is wrong with an action's argument as written (before references resolve), or undefined. */
function argumentProblem(action: Action, arg: unknown): string | undefined {
  const isObject = arg !== null && typeof arg === 'object' && !Array.isArray(arg)
  // A whole reference is judged once it resolves (`{"rule": "${r1.rule}"}` adds again a rule an earlier step added).
  const later = isWholeReference(arg)
  if (action === 'expect' && !isObject && !later) return `expect takes an object of path: value, not ${JSON.stringify(arg)}`
  if (action === 'rule' && !isObject && !later) return `rule takes a rule object (the body of POST /_sandbox/rules), not ${JSON.stringify(arg)}`
  const spec = ACTION_FIELDS[action]
  if (spec?.text && arg === '') return `${action} takes a non-empty string, not ""`
  if (!spec || (spec.text && typeof arg === 'string')) return undefined
  const shape = `{${spec.fields.map((f) => `"${f}"`).join(', ')}}${spec.text ? ' or a string' : ''}`
  if (!isObject) return `${action} takes ${shape}, not ${JSON.stringify(arg)}`
  const keys = Object.keys(arg)
  const unknown = keys.find((k) => !spec.fields.includes(k))
  if (unknown !== undefined) return `${action} takes ${shape}: no field "${unknown}"`
  const missing = spec.required.find((k) => !keys.includes(k))
  if (missing !== undefined) return `${action} needs "${missing}"`
  if (action === 'clock' && keys.length !== 1) return 'clock takes one of {"advance": "P1M"} or {"set": "2026-01-31T00:00:00"}'
  // A value of the wrong kind, unless a reference gives it later (one that is the whole string keeps its type).
  const a = arg as Record<string, unknown>
  const given = (k: string): unknown => (isWholeReference(a[k]) ? undefined : a[k])
  if (action === 'otp' && given('wait') !== undefined && typeof a.wait !== 'number')
    return `otp "wait" must be a number of seconds, not ${JSON.stringify(a.wait)}`
  if (action === 'consent' && given('action') !== undefined && a.action !== 'approve' && a.action !== 'deny')
    return `consent "action" must be "approve" or "deny", not ${JSON.stringify(a.action)}`
  if (action === 'reset' && given('clock') !== undefined && typeof a.clock !== 'string')
    return `reset "clock" must be a time such as "2026-01-31T00:00:00", not ${JSON.stringify(a.clock)}`
  if (action === 'reset' && given('frozen') !== undefined && typeof a.frozen !== 'boolean')
    return `reset "frozen" must be true or false, not ${JSON.stringify(a.frozen)}`
  if (action === 'reset' && given('seed') !== undefined && !(Number.isSafeInteger(a.seed) && (a.seed as number) >= 0))
    return `reset "seed" must be a whole number from 0, not ${JSON.stringify(a.seed)}`
  const empty = (STRING_FIELDS[action] ?? []).find((k) => given(k) !== undefined && (typeof a[k] !== 'string' || !a[k]))
  if (empty !== undefined) return `${action} "${empty}" must be a non-empty string, not ${JSON.stringify(a[empty])}`
  // A time or duration written out is judged now, as the server would judge it after the reset.
  const literal = (k: string) => (typeof a[k] === 'string' && !a[k].includes('${') ? a[k] : undefined)
  const advance = action === 'clock' ? literal('advance') : undefined
  if (advance !== undefined && !parseDuration(advance))
    return `clock "advance": ${ambiguousDuration(advance) ?? `${JSON.stringify(advance)} is not a duration such as P1M, PT6M or 36h`}`
  for (const k of action === 'clock' ? ['set'] : action === 'reset' ? ['clock'] : []) {
    const problem = literal(k) === undefined ? undefined : timeProblem(literal(k)!)
    if (problem) return `${action} "${k}": ${problem}`
  }
  return undefined
}

/** The fields a step sends as they are, which must be non-empty strings (a string form is judged as its one field). */
const STRING_FIELDS: Partial<Record<Action, string[]>> = {
  otp: ['msisdn'],
  sms: ['msisdn'],
  mo: ['msisdn', 'short_code', 'text'],
  consent: ['url'],
  cancel: ['subscription_id'],
  subscription: ['subscription_id'],
  clock: ['advance', 'set'],
}

const isWholeReference = (v: unknown): boolean => typeof v === 'string' && /^\$\{[^}]+\}$/.test(v)

/** A key the run sends as the API-KEY header. */
const ApiKey = z.string().superRefine((key, ctx) => {
  const problem = headerValueProblem(key)
  if (problem) ctx.addIssue({ code: 'custom', message: problem })
})

const Step = z
  .object({
    as: z
      .string()
      .regex(/^[A-Za-z_]\w*$/)
      .optional(),
    api_key: ApiKey.optional(),
    note: z.string().optional(),
  })
  .catchall(z.unknown())
  .superRefine((s, ctx) => {
    const actions = Object.keys(s).filter((k) => (ACTIONS as readonly string[]).includes(k)) as Action[]
    const unknown = Object.keys(s).filter((k) => !(ACTIONS as readonly string[]).includes(k) && !['as', 'api_key', 'note'].includes(k))
    if (unknown.length) ctx.addIssue({ code: 'custom', message: `unknown key "${unknown[0]}" (actions: ${ACTIONS.join(', ')})` })
    else if (actions.length !== 1) ctx.addIssue({ code: 'custom', message: `a step needs exactly one action of: ${ACTIONS.join(', ')}` })
    else {
      const problem = argumentProblem(actions[0]!, s[actions[0]!])
      if (problem) ctx.addIssue({ code: 'custom', message: problem, path: [actions[0]!] })
    }
  })

const RunFile = z.strictObject({
  $schema: z.string().optional(),
  description: z.string().optional(),
  // Judged where the run goes to it (below): an in-process run or --base-url does not use it.
  base_url: z.string().optional(),
  api_key: ApiKey.optional(),
  // Judged by runWhere, naming the JSON path: a fixture path or list of them, a time.
  fixtures: z.unknown().optional(),
  clock: z.unknown().optional(),
  steps: z.array(Step).min(1),
})

type Results = Record<string, unknown>

/** A `${...}` reference that names nothing: the run stops before sending the step (an empty value would look green). */
export class UnresolvedReference extends Error {
  constructor(
    readonly reference: string,
    why: string,
  ) {
    super(`\${${reference}} does not resolve: ${why}`)
  }
}

/** `${a.b.c}` -> the value at that path of the results; a string that is only a reference keeps its type. */
export function substitute(v: unknown, results: Results): unknown {
  if (typeof v === 'string') {
    const whole = /^\$\{([^}]+)\}$/.exec(v)
    if (whole) return resolve(results, whole[1]!)
    return v.replace(/\$\{([^}]+)\}/g, (_m, path: string) => {
      const got = resolve(results, path)
      return typeof got === 'object' && got !== null ? JSON.stringify(got) : String(got)
    })
  }
  if (Array.isArray(v)) return v.map((x) => substitute(x, results))
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, results)]))
  return v
}

/** The value a reference names, or UnresolvedReference saying which part is missing. */
function resolve(results: Results, path: string): unknown {
  const parts = path.trim().split('.')
  const [name] = parts
  if (!Object.prototype.hasOwnProperty.call(results, name!)) {
    const known = Object.keys(results)
    throw new UnresolvedReference(path, `no earlier step is named "${name}" (${known.length ? `named so far: ${known.join(', ')}` : 'no step has run yet'})`)
  }
  let cur: unknown = results
  for (const [i, part] of parts.entries()) {
    const key = /^\d+$/.test(part) && Array.isArray(cur) ? Number(part) : part
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) {
      const at = parts.slice(0, i).join('.')
      throw new UnresolvedReference(path, cur === null || typeof cur !== 'object' ? `${at} is ${JSON.stringify(cur)}` : `${at} has no "${part}"`)
    }
    cur = (cur as Record<string | number, unknown>)[key]
  }
  return cur
}

/**
 * What `path` names in the results, as an expect reads it, or why it names no value (a JSON answer
 * has no undefined: a field left out, an item past the end, a step through null), naming where the
 * path stops and what that level has.
 */
export function lookup(root: unknown, path: string): { value: unknown } | { missing: string } {
  const parts = path.trim().split('.')
  let cur: unknown = root
  for (const [i, part] of parts.entries()) {
    const at = () => parts.slice(0, i).join('.')
    if (cur === null || cur === undefined) return { missing: `${at()} is ${JSON.stringify(cur ?? null)}` }
    // The answer's own fields only (as a reference reads them): not a string's length, nor an inherited `constructor`.
    const key = /^\d+$/.test(part) && Array.isArray(cur) ? Number(part) : part
    const next = typeof cur === 'object' && Object.prototype.hasOwnProperty.call(cur, key) ? (cur as Record<string | number, unknown>)[key] : undefined
    if (next !== undefined) {
      cur = next
      continue
    }
    if (Array.isArray(cur))
      return { missing: `${at()} has no item ${part} (it has ${cur.length} item${cur.length === 1 ? '' : 's'}${cur.length ? `: 0 to ${cur.length - 1}` : ''})` }
    if (typeof cur !== 'object') return { missing: `${at()} is ${JSON.stringify(cur)}, which has no field "${part}"` }
    const fields = Object.keys(cur)
    return { missing: `${at()} has no field "${part}" (${fields.length ? `its fields: ${fields.join(', ')}` : 'it has no fields'})` }
  }
  return { value: cur }
}

const str = (o: Record<string, unknown>, k: string, where: string): string => {
  const v = o[k]
  if (typeof v !== 'string' || !v) throw new CliError(`${where}: "${k}" must be a non-empty string (got ${JSON.stringify(v)})`, EXIT.USAGE)
  return v
}

async function perform(c: RunTarget, action: Action, arg: unknown, where: string): Promise<unknown> {
  const a = (arg ?? {}) as Record<string, unknown>
  const envelope = (r: { httpStatus: number; envelope: object }) => ({ http: r.httpStatus, ...r.envelope })
  // Merchant bodies go to the server as written (a run file may send a bad one on purpose): the server judges them.
  switch (action) {
    case 'init':
      return envelope(await c.init(a as InitBody))
    case 'verify':
      return envelope(await c.verify(a as VerifyBody))
    case 'status':
      return envelope(await c.status(typeof arg === 'string' ? { subscription_id: arg } : (a as StatusBody)))
    case 'otp':
      if (a.wait !== undefined && typeof a.wait !== 'number')
        throw new CliError(`${where}: "wait" must be a number of seconds (got ${JSON.stringify(a.wait)})`, EXIT.USAGE)
      return c.otp(typeof arg === 'string' ? arg : str(a, 'msisdn', where), { wait: a.wait ?? 5 })
    case 'sms':
      return c.sms(typeof arg === 'string' ? arg : str(a, 'msisdn', where))
    case 'mo':
      return c.mo({ msisdn: str(a, 'msisdn', where), short_code: str(a, 'short_code', where), text: str(a, 'text', where) })
    case 'consent': {
      const act = a.action ?? 'approve'
      if (act !== 'approve' && act !== 'deny') throw new CliError(`${where}: consent action must be approve or deny`, EXIT.USAGE)
      return c.consent(str(a, 'url', where), act)
    }
    case 'cancel':
      return c.cancel(typeof arg === 'string' ? arg : str(a, 'subscription_id', where))
    case 'subscription':
      return c.subscription(typeof arg === 'string' ? arg : str(a, 'subscription_id', where))
    case 'clock':
      if (typeof a.advance === 'string') return c.advance(a.advance)
      if (typeof a.set === 'string') return c.setTime(a.set)
      throw new CliError(`${where}: clock needs {"advance": "P1M"} or {"set": "2026-01-31T00:00:00"}`, EXIT.USAGE)
    case 'reset': {
      const extra = Object.keys(a).filter((k) => k !== 'clock' && k !== 'frozen' && k !== 'seed')
      if (extra.length || (a.clock !== undefined && typeof a.clock !== 'string'))
        throw new CliError(`${where}: reset takes {} or {"clock": "2026-01-31T00:00:00"} (and "frozen": true or false, "seed": N)`, EXIT.USAGE)
      return c.reset(a as { clock?: string; frozen?: boolean; seed?: number })
    }
    case 'rule':
      if (!arg || typeof arg !== 'object' || Array.isArray(arg))
        throw new CliError(`${where}: rule needs a rule object (the body of POST /_sandbox/rules)`, EXIT.USAGE)
      return c.rules.add(a as Rule)
    case 'expect':
      return undefined
  }
}

/**
 * `reset`: false with --no-reset (keep the sandbox's state instead of resetting it first); `fixtures`
 * (--fixtures, repeatable) and `clock` (--clock): a fresh in-process sandbox with those, no server.
 */
export type RunCliOptions = RunWhereOptions

interface StepReport {
  step: number
  name: string
  action: Action
  input?: unknown
  result?: unknown
  /** `missing`: why the path names no value in the answer (then there is no `got`). */
  expect?: { path: string; expected: unknown; got: unknown; missing?: string; pass: boolean }[]
}

export async function runFile(file: string, o: RunCliOptions): Promise<void> {
  checkRunFlags(o)
  const data = readRunDocument(file)
  const parsed = RunFile.safeParse(data, HINT_KEYS)
  if (!parsed.success) {
    const i = parsed.error.issues[0]!
    throw new CliError(`${file}: $${i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}: ${i.message}`, EXIT.USAGE)
  }
  const doc = parsed.data
  // A name given twice: the later step's result would replace the earlier one's, and a reference or
  // expect meant for the first would read the second. (A name left to the action, such as two otp steps, may repeat.)
  // An as name that is another step's action, left as its name (as "status" beside a plain status step), clashes too.
  const named = new Map<string, { step: number; path: string }>()
  const byAction = new Map<string, { step: number; path: string }>()
  for (const [i, step] of doc.steps.entries()) {
    const action = Object.keys(step).find((k) => (ACTIONS as readonly string[]).includes(k))
    const clash = (name: string, path: string, other: { step: number; path: string }) =>
      new CliError(
        `${file}: steps ${other.step} and ${i + 1} are both named "${name}" (${other.path}, ${path}): the later result would replace the earlier; give each its own name`,
        EXIT.USAGE,
      )
    if (step.as === undefined) {
      if (action === undefined || action === 'expect') continue
      const path = `the action of $.steps[${i}]`
      const first = named.get(action)
      if (first) throw clash(action, path, first)
      if (!byAction.has(action)) byAction.set(action, { step: i + 1, path })
      continue
    }
    const path = `$.steps[${i}].as`
    const first = named.get(step.as) ?? byAction.get(step.as)
    if (first) throw clash(step.as, path, first)
    named.set(step.as, { step: i + 1, path })
  }
  const where = runWhere(file, doc, o)
  const inProcess = where !== undefined
  const base = { ...o, baseUrl: o.baseUrl ?? doc.base_url, apiKey: o.apiKey ?? doc.api_key }
  // The file's server is not where an in-process run goes: said, so a run that passes is not taken for
  // one against it. A base_url that is no URL is refused only where the run would go to it.
  const notUrl = doc.base_url !== undefined && !isHttpUrl(doc.base_url)
  if (inProcess && doc.base_url !== undefined) {
    const without = notUrl ? 'without it the run is refused: it is not an http(s) URL' : 'without it the run goes there'
    process.stderr.write(
      `dcb: ${file}: base_url ${notUrl ? JSON.stringify(doc.base_url) : doc.base_url} is not used: ${where.by} runs a fresh in-process sandbox (${without})\n`,
    )
  } else if (notUrl && o.baseUrl === undefined) throw new CliError(`${file}: $.base_url: is not an http(s) URL (e.g. ${DEFAULT_BASE_URL})`, EXIT.USAGE)
  // Loaded only for an in-process run: a run against a server stays as light as the other client commands.
  const local = where ? await (await import('./run-local.js')).localSandbox(where.fixtures, where.clock) : undefined
  const targetFor = (apiKey: string | undefined): RunTarget => local?.target(apiKey ?? base.apiKey) ?? clientFrom(apiKey ? { ...base, apiKey } : base)
  const human = !o.json
  const say = (line: string) => human && out(line)
  const results: Results = {}
  let expectations = 0
  const report = {
    file,
    description: doc.description ?? null,
    reset: o.reset !== false,
    in_process: inProcess,
    passed: false,
    step_count: doc.steps.length,
    expectations_passed: 0,
    steps: [] as StepReport[],
  }
  if (doc.description) say(chalk.bold(doc.description))
  // A run starts from the loaded fixtures, so it gives the same answers every time.
  if (local)
    say(
      chalk.dim(
        `a fresh in-process sandbox${where!.shown.length ? ` with ${where!.shown.join(', ')}` : ''}${where!.clock ? `, clock ${where!.clock} (frozen)` : ''}`,
      ),
    )
  else if (o.reset !== false) {
    say(chalk.dim('resetting the sandbox first (back to the loaded fixtures; --no-reset keeps its state)'))
    await guard(() => clientFrom(base).reset())
  }
  /** Why no result has this name at step `at`: no step of that name has run (one may come later). */
  const notRun = (name: string, at: number): string => {
    const later = doc.steps.findIndex(
      (t, j) => j > at && !('expect' in t) && (t.as ?? Object.keys(t).find((k) => (ACTIONS as readonly string[]).includes(k))) === name,
    )
    const known = Object.keys(results)
    return `no step named "${name}" has run before it (${later >= 0 ? `step ${later + 1} is named so, later; ` : ''}${known.length ? `named so far: ${known.join(', ')}` : 'no step has run yet'})`
  }
  try {
    for (const [i, s] of doc.steps.entries()) {
      const action = Object.keys(s).find((k) => (ACTIONS as readonly string[]).includes(k)) as Action
      const where = `${file}: step ${i + 1} (${action})`
      let arg: unknown
      try {
        arg = substitute(s[action], results)
      } catch (e) {
        if (e instanceof UnresolvedReference) throw new CliError(`${where}: ${e.message}; the step was not sent`, EXIT.FAIL)
        throw e
      }
      const name = s.as ?? action
      if (action === 'expect') {
        if (!arg || typeof arg !== 'object' || Array.isArray(arg)) throw new CliError(`${where}: expect needs an object of path: value`, EXIT.USAGE)
        const checks: NonNullable<StepReport['expect']> = []
        report.steps.push({ step: i + 1, name, action, expect: checks })
        for (const [path, want] of Object.entries(arg)) {
          const ran = path.trim().split('.')[0]!
          if (!Object.prototype.hasOwnProperty.call(results, ran))
            throw new CliError(`expectation failed at step ${i + 1}: ${path}: ${notRun(ran, i)}`, EXIT.FAIL)
          const found = lookup(results, path)
          // A field the answer does not have fails (no JSON value is undefined) and says what is there instead.
          if ('missing' in found) {
            const { missing } = found
            checks.push({ path, expected: want, got: undefined, missing, pass: false })
            say(`${chalk.red('  ✘')} expect ${path} = ${JSON.stringify(want)}${chalk.red(`, missing: ${missing}`)}`)
            throw new CliError(`expectation failed at step ${i + 1}: ${path} is missing: ${missing}; expected ${JSON.stringify(want)}`, EXIT.FAIL)
          }
          const got = found.value
          const pass = JSON.stringify(got) === JSON.stringify(want)
          checks.push({ path, expected: want, got, pass })
          say(
            `${pass ? chalk.green('  ✔') : chalk.red('  ✘')} expect ${path} = ${JSON.stringify(want)}${pass ? '' : chalk.red(`, got ${JSON.stringify(got)}`)}`,
          )
          if (!pass) throw new CliError(`expectation failed at step ${i + 1}: ${path} is ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`, EXIT.FAIL)
          expectations++
        }
        continue
      }
      const c = targetFor(s.api_key)
      say(`${chalk.cyan('→')} ${chalk.bold(name)}${s.note ? chalk.dim(` (${s.note})`) : ''} ${chalk.dim(JSON.stringify(arg ?? {}))}`)
      // No progress note where nothing is slow: an in-process sandbox has no server, an `otp` step waits on purpose.
      const result = await guard(() => perform(c, action, arg, where), local !== undefined || action === 'otp')
      results[name] = result
      report.steps.push({ step: i + 1, name, action, input: arg ?? {}, result })
      say(`${chalk.cyan('←')} ${JSON.stringify(result)}`)
    }
  } finally {
    await local?.close()
    // With --json the report is printed whatever happened; the error (if any) still goes to stderr.
    report.passed = report.steps.length === doc.steps.length && report.steps.every((s) => !s.expect || s.expect.every((e) => e.pass))
    report.expectations_passed = expectations
    if (o.json) printJson(report)
  }
  say(chalk.green(`✔ ${doc.steps.length} step${doc.steps.length === 1 ? '' : 's'}, ${expectations} expectation${expectations === 1 ? '' : 's'} passed`))
}
