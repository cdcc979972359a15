/**
 * `GET /_sandbox/coverage?sessions=A,B` (or a glob such as `ci-*`): the coverage of several sessions
 * merged, as parallel test files (one session each) gate as one suite.
 */
import type { CoverageAnswer } from '../contract/control.js'
import { mergeCoverage } from '../core/coverage-gate.js'
import { SandboxError } from '../core/errors.js'

/** The sessions `spec` names (a comma list, or one glob), among those there: a name not there, or a glob matching none, is refused. */
export function sessionsNamed(spec: string, there: string[]): string[] {
  if (spec.includes('*')) {
    const re = new RegExp('^' + spec.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*') + '$')
    const found = there.filter((n) => re.test(n))
    if (!found.length) throw new SandboxError('SESSION_NOT_FOUND', `sessions: "${spec}" matches no session (there are: ${there.join(', ')})`)
    return found
  }
  const names = spec.split(',').map((s) => s.trim())
  if (names.some((n) => !n)) throw new SandboxError('BAD_REQUEST', 'sessions: session names separated by commas, or one glob such as ci-*')
  const missing = names.filter((n) => !there.includes(n))
  if (missing.length) throw new SandboxError('SESSION_NOT_FOUND', `sessions: no session ${missing.join(', ')}`)
  return [...new Set(names)]
}

/** Each session's coverage (`read`), merged per merchant. */
export async function mergedCoverage(names: string[], read: (name: string) => Promise<CoverageAnswer>): Promise<CoverageAnswer> {
  const answers: CoverageAnswer[] = []
  for (const n of names) answers.push(await read(n))
  return mergeCoverage(...answers) as CoverageAnswer
}
