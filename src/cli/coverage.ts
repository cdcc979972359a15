/** `dcb coverage`: what each merchant's traffic exercised and what it did wrong, for people, as JSON, or as a JUnit report for CI. */
import { writeFileSync } from 'node:fs'
import chalk from 'chalk'
import type { CoverageAnswer, MerchantCoverage } from '../contract/index.js'
import { CliError, EXIT } from './errors.js'
import { clientFrom, guard, out, printJson, sessionGiven, warnOfNewSession, type ClientCliOptions } from './common.js'

export interface CoverageCliOptions extends ClientCliOptions {
  merchant?: string
  junit?: string
  /** With --junit: a session with no calls writes a report with no test case and passes. */
  allowEmpty?: boolean
  /** A whole percentage, 0 to 100 (checked by the command line). */
  min?: number
}

export async function coverage(o: CoverageCliOptions): Promise<void> {
  if (o.allowEmpty && o.junit === undefined) throw new CliError('--allow-empty goes with --junit FILE (it lets an empty report pass)', EXIT.USAGE)
  const c = clientFrom(o)
  const session = sessionGiven(o)
  await warnOfNewSession(c, o)
  const answer = await guard(() => c.coverage(o.merchant === undefined ? {} : { merchant: o.merchant }))
  // A gate that read nothing must not look green: no merchant had traffic and none was named (--merchant lists its outcomes, all unseen).
  const empty = o.junit !== undefined && !answer.coverage.length && !o.allowEmpty
  if (o.junit !== undefined) writeJunit(o.junit, answer, empty ? (session?.name ?? 'default') : undefined)
  if (o.json) printJson(answer)
  else print(answer, o.min)
  if (empty)
    throw new CliError(
      `no calls were recorded in session ${session?.name ?? 'default'}: the JUnit report ${o.junit} has no outcome to show and fails; give --merchant ID to report each outcome of that merchant, or --allow-empty when no traffic is expected`,
      EXIT.FAIL,
    )
  if (o.min === undefined) return
  const below = answer.coverage.filter((m) => m.percent < o.min!)
  // No traffic at all is below any minimum above zero: a CI run that sent nothing must not pass.
  if (!answer.coverage.length && o.min > 0) throw new CliError(`no merchant has traffic in this session: coverage 0% is below --min ${o.min}%`, EXIT.FAIL)
  if (below.length) throw new CliError(`coverage below --min ${o.min}%: ${below.map((m) => `${m.merchant} ${m.percent}%`).join(', ')}`, EXIT.FAIL)
}

function print(answer: CoverageAnswer, min: number | undefined): void {
  if (!answer.coverage.length) return out(chalk.dim('no merchant has traffic in this session yet'))
  for (const [i, m] of answer.coverage.entries()) {
    if (i) out()
    const low = min !== undefined && m.percent < min
    const pct = `${m.percent}%`
    out(`${chalk.bold(m.merchant)}  ${low ? chalk.red(pct) : chalk.green(pct)} of outcomes seen (${m.covered} of ${m.total}) since ${m.since}`)
    const never = m.outcomes.filter((x) => x.count === 0).map((x) => x.id)
    if (never.length) out(`  never seen: ${never.join(', ')}`)
    if (!m.findings.length) out(chalk.green('  no findings'))
    for (const f of m.findings) {
      out(`  ${chalk.yellow('!')} ${chalk.bold(f.code)} x${f.count}${f.example === null ? '' : chalk.dim(` (latest: journal entry ${f.example})`)}`)
      out(`    ${f.advice}`)
    }
  }
}

/**
 * One test suite per merchant: a test case per outcome (failing when never seen), a failing one per
 * finding. `emptySession`: no merchant had traffic there, and the report says so in one failing case.
 */
export function junitXml(answer: CoverageAnswer, emptySession?: string): string {
  const suites = answer.coverage.map(suite)
  if (emptySession !== undefined) suites.push(noCalls(emptySession))
  const extra = emptySession === undefined ? 0 : 1
  const tests = answer.coverage.reduce((n, m) => n + m.outcomes.length + m.findings.length, 0) + extra
  const failures = answer.coverage.reduce((n, m) => n + m.outcomes.filter((x) => !x.count).length + m.findings.length, 0) + extra
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="dcb coverage" tests="${tests}" failures="${failures}">\n${suites.join('')}</testsuites>\n`
}

function noCalls(session: string): string {
  const text = `no calls were recorded in session ${session}: no merchant has traffic to report (give --merchant ID to report its outcomes, --allow-empty when none is expected)`
  return `  <testsuite name="dcb.coverage" tests="1" failures="1">\n    <testcase classname="dcb.coverage" name="calls recorded"><failure message="no calls were recorded" type="no_traffic">${xml(text)}</failure></testcase>\n  </testsuite>\n`
}

function suite(m: MerchantCoverage): string {
  const cls = xml(`dcb.coverage.${m.merchant}`)
  const cases = m.outcomes.map((x) =>
    x.count
      ? `    <testcase classname="${cls}" name="${xml(x.id)}"><system-out>${x.count} seen</system-out></testcase>\n`
      : `    <testcase classname="${cls}" name="${xml(x.id)}"><failure message="never seen" type="uncovered">outcome ${xml(x.id)} was never seen since ${xml(m.since)}</failure></testcase>\n`,
  )
  for (const f of m.findings) {
    const detail = `${f.count} time${f.count === 1 ? '' : 's'}${f.example === null ? '' : `; latest: journal entry ${f.example}`}. ${f.advice}`
    cases.push(
      `    <testcase classname="${cls}" name="finding ${xml(f.code)}"><failure message="${xml(f.advice)}" type="${xml(f.code)}">${xml(detail)}</failure></testcase>\n`,
    )
  }
  const failures = m.outcomes.filter((x) => !x.count).length + m.findings.length
  return `  <testsuite name="${cls}" tests="${cases.length}" failures="${failures}">\n${cases.join('')}  </testsuite>\n`
}

function xml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

function writeJunit(file: string, answer: CoverageAnswer, emptySession: string | undefined): void {
  try {
    writeFileSync(file, junitXml(answer, emptySession))
  } catch (e) {
    throw new CliError(`cannot write the JUnit report ${file}: ${(e as Error).message}`, EXIT.FAIL)
  }
}
