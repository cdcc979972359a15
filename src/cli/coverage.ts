/** `dcb coverage`: what each merchant's traffic exercised and what it did wrong, for people, as JSON, or as a JUnit report for CI. */
import { writeFileSync } from 'node:fs'
import chalk from 'chalk'
import type { CoverageAnswer } from '../contract/index.js'
import { countableIds } from '../core/coverage-outcomes.js'
import { nearestName } from '../core/nearest.js'
import { describeJsonProblem, parseJsonText } from '../json-text.js'
import { readUserText, UserFileError } from '../user-text.js'
import {
  checkPolicy,
  coverageJUnit,
  coverageVerdict,
  authenticated,
  mergeCoverage,
  parsePolicy,
  POLICY_KEYS,
  type CoveragePolicy,
} from '../core/coverage-gate.js'
import { CliError, EXIT } from './errors.js'
import { clientFrom, guard, listSessions, out, printJson, sessionGiven, warnOfNewSession, type ClientCliOptions } from './common.js'

export interface CoverageCliOptions extends Omit<ClientCliOptions, 'session'> {
  /** Repeatable: the sessions merged (one: that session). */
  session?: string[] | string
  sessions?: string
  merchant?: string
  junit?: string
  /** With --junit: a session with no calls writes a report with no test case and passes. */
  allowEmpty?: boolean
  /** A whole percentage, 0 to 100 (checked by the command line). */
  min?: number
  policy?: string
  require?: string[]
  allow?: string[]
  failOnFindings?: boolean
}

/** How deep a policy file may nest arrays and objects (it needs two levels). */
const POLICY_MAX_DEPTH = 64

/**
 * A policy file's text, checked as a user's file is (a regular file within its bound, UTF-8, JSON
 * within its depth), or a CliError (exit 2). The path may name any file: what is wrong says where,
 * never what the file holds, and a JSON object with no key of a policy (nor one near it) is said to
 * be none without its keys.
 */
function readPolicyText(file: string): string {
  let text: string
  try {
    text = readUserText(file, 'policy')
  } catch (e) {
    if (e instanceof UserFileError) throw new CliError(`cannot read the policy ${file}: ${e.message}`, EXIT.USAGE)
    throw e
  }
  const parsed = parseJsonText(text, POLICY_MAX_DEPTH)
  if ('problem' in parsed) throw new CliError(`the policy ${file} is not JSON: ${describeJsonProblem(parsed.problem)}`, EXIT.USAGE)
  const v = parsed.value
  const keys = v && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v) : []
  if (keys.length && !keys.some((k) => POLICY_KEYS.includes(k) || nearestName(k, POLICY_KEYS) !== undefined))
    throw new CliError(`the policy ${file} is not a policy: a JSON object with require, allow and min was expected`, EXIT.USAGE)
  return text
}

/** The policy the flags and the file give; undefined: none (today's behaviour, `--min` alone). */
function policyOf(o: CoverageCliOptions): CoveragePolicy | undefined {
  let p: CoveragePolicy | undefined
  if (o.policy !== undefined) {
    const text = readPolicyText(o.policy)
    try {
      p = parsePolicy(text, `the policy ${o.policy}`)
    } catch (e) {
      throw new CliError((e as Error).message, EXIT.USAGE)
    }
  }
  if (o.require || o.allow || o.failOnFindings) {
    p ??= {}
    p = {
      ...p,
      require: [...(p.require ?? []), ...(o.require ?? [])],
      allow: o.allow || p.allow ? [...(p.allow ?? []), ...(o.allow ?? [])] : undefined,
      failOnFindings: p.failOnFindings || !!o.failOnFindings || !!o.allow,
    }
  }
  if (p && o.min !== undefined) p = { ...p, min: o.min }
  return p
}

const globRe = (g: string) => new RegExp('^' + g.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*') + '$')

export async function coverage(o: CoverageCliOptions): Promise<void> {
  if (o.allowEmpty && o.junit === undefined) throw new CliError('--allow-empty goes with --junit FILE (it lets an empty report pass)', EXIT.USAGE)
  const policy = policyOf(o)
  const named = o.session === undefined ? [] : Array.isArray(o.session) ? o.session : [o.session]
  if (o.sessions !== undefined && named.length) throw new CliError('give --session NAME (repeatable) or --sessions GLOB, not both', EXIT.USAGE)
  const one: ClientCliOptions = { ...o, session: named.length === 1 ? named[0] : undefined }
  const c = clientFrom(one)
  let sessions: string[] | undefined
  if (o.sessions !== undefined || named.length > 1) {
    const { sessions: listed } = await listSessions(c)
    const all = listed.map((s) => s.name)
    if (o.sessions !== undefined) {
      const re = globRe(o.sessions)
      sessions = all.filter((n) => re.test(n))
      if (!sessions.length) throw new CliError(`--sessions "${o.sessions}" matches no session (there are: ${all.join(', ')})`, EXIT.FAIL)
    } else {
      // A merge reading a session that is not there would make it empty and gate on less than the suite ran.
      const missing = [...new Set(named)].filter((n) => !all.includes(n))
      if (missing.length)
        throw new CliError(`--session: no session ${missing.map((n) => `"${n}"`).join(', ')} to merge (there are: ${all.join(', ')})`, EXIT.FAIL)
      sessions = [...new Set(named)]
    }
  }
  const query = o.merchant === undefined ? {} : { merchant: o.merchant }
  let answer: CoverageAnswer
  if (sessions) {
    const answers: CoverageAnswer[] = []
    for (const name of sessions) {
      const s = clientFrom({ ...o, session: name })
      answers.push(await guard(() => s.coverage(query)))
    }
    answer = mergeCoverage(...answers) as CoverageAnswer
  } else {
    await warnOfNewSession(c, one)
    answer = await guard(() => c.coverage(query))
  }
  if (policy) {
    try {
      checkPolicy(policy, [...countableIds(), ...answer.coverage.flatMap((m) => m.outcomes.map((x) => x.id))])
    } catch (e) {
      throw new CliError((e as Error).message, EXIT.USAGE)
    }
  }
  const sessionName = sessions ? sessions.join(', ') : (sessionGiven(one)?.name ?? 'default')
  // A gate that read nothing must not look green: no merchant had traffic and none was named (--merchant lists its outcomes, all unseen).
  const empty = o.junit !== undefined && !answer.coverage.length && !o.allowEmpty
  if (o.junit !== undefined) writeJunit(o.junit, coverageJUnit(answer, policy, { emptySession: empty ? sessionName : undefined, min: o.min }))
  if (o.json) printJson(answer)
  else print(answer, o.min)
  if (empty)
    throw new CliError(
      `no calls were recorded in session ${sessionName}: the JUnit report ${o.junit} has no outcome to show and fails; give --merchant ID to report each outcome of that merchant, or --allow-empty when no traffic is expected`,
      EXIT.FAIL,
    )
  // No traffic at all is below any minimum above zero: a CI run that sent nothing must not pass.
  const min = policy?.min ?? o.min
  if (min !== undefined && min > 0 && !answer.coverage.length)
    throw new CliError(`no merchant has traffic in this session: coverage 0% is below --min ${min}%`, EXIT.FAIL)
  if (policy) {
    const reasons = coverageVerdict(answer, policy)
    if (reasons.length) throw new CliError(reasons.join('\n'), EXIT.FAIL)
    return
  }
  if (o.min === undefined) return
  // A merchant whose every call was refused 401 or 403 (a suite's negative tests) is listed but not held to --min.
  const below = answer.coverage.filter((m) => authenticated(m) && m.percent < o.min!)
  if (below.length) throw new CliError(`coverage below --min ${o.min}%: ${below.map((m) => `${m.merchant} ${m.percent}%`).join(', ')}`, EXIT.FAIL)
}

function print(answer: CoverageAnswer, min: number | undefined): void {
  if (!answer.coverage.length) return out(chalk.dim('no merchant has traffic in this session yet'))
  for (const [i, m] of answer.coverage.entries()) {
    if (i) out()
    const low = min !== undefined && m.percent < min
    const pct = `${m.percent}%`
    out(`${chalk.bold(m.merchant)}  ${low ? chalk.red(pct) : chalk.green(pct)} of outcomes seen (${m.covered} of ${m.total}) since ${m.since}`)
    const never = m.outcomes.filter((x) => x.count === 0)
    if (never.length) out(`  never seen (${never.length}):`)
    for (const x of never) out(`    ${x.id}${x.how ? chalk.dim(`: ${x.how}`) : ''}`)
    if (!m.findings.length) out(chalk.green('  no findings'))
    for (const f of m.findings) {
      out(`  ${chalk.yellow('!')} ${chalk.bold(f.code)} x${f.count}${f.example === null ? '' : chalk.dim(` (latest: request log entry ${f.example})`)}`)
      out(`    ${f.advice}`)
    }
  }
}

function writeJunit(file: string, text: string): void {
  try {
    writeFileSync(file, text)
  } catch (e) {
    throw new CliError(`cannot write the JUnit report ${file}: ${(e as Error).message}`, EXIT.FAIL)
  }
}
