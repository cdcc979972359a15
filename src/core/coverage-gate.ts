/**
 * Gating CI on coverage: merging the answers of several sessions, a policy (what a suite must show),
 * its verdict and the JUnit report. Pure functions over the answer's shape (`GET /_sandbox/coverage`),
 * shared by `dcb coverage` and the library, so a suite in process gates exactly as one over HTTP.
 */
import { FINDING_CODES } from './coverage.js'

export interface GateOutcome {
  id: string
  count: number
  how?: string
  codes?: Record<string, number>
}
export interface GateFinding {
  code: string
  count: number
  example: number | null
  advice: string
}
export interface GateMerchant {
  merchant: string
  since: string
  covered: number
  total: number
  percent: number
  outcomes: GateOutcome[]
  findings: GateFinding[]
}
export interface GateAnswer {
  coverage: GateMerchant[]
}

/** What a suite must show: outcomes (ids or globs such as `verify.*`), findings allowed, a minimum percentage. */
export interface CoveragePolicy {
  require?: string[]
  allow?: string[]
  min?: number
  /** Findings fail unless allowed (implied by `allow` or a policy file). */
  failOnFindings?: boolean
}

/** The keys a policy file may hold. */
export const POLICY_KEYS = ['require', 'allow', 'min']

/** A policy file's text, checked: JSON, only the known keys, each of its type. Throws an Error naming the problem. */
export function parsePolicy(text: string, file = 'the policy'): CoveragePolicy {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (e) {
    throw new Error(`${file} is not JSON: ${(e as Error).message}`)
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${file} must be a JSON object with require, allow and min`)
  const o = v as Record<string, unknown>
  const unknown = Object.keys(o).filter((k) => !POLICY_KEYS.includes(k))
  if (unknown.length)
    throw new Error(`${file} has unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (known: ${POLICY_KEYS.join(', ')})`)
  const strings = (k: string) => {
    if (o[k] === undefined) return undefined
    if (!Array.isArray(o[k]) || !(o[k] as unknown[]).every((x) => typeof x === 'string')) throw new Error(`${file}: "${k}" must be an array of strings`)
    return o[k] as string[]
  }
  const min = o.min
  if (min !== undefined && (typeof min !== 'number' || !Number.isInteger(min) || min < 0 || min > 100))
    throw new Error(`${file}: "min" must be a whole number from 0 to 100`)
  return { require: strings('require'), allow: strings('allow'), min: min as number | undefined, failOnFindings: true }
}

/** A glob of outcome ids: `*` matches any run of characters. */
function globRe(glob: string): RegExp {
  return new RegExp('^' + glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*') + '$')
}

/**
 * Refuses a policy naming what does not exist: an outcome id or a glob matching none of `known`, a
 * finding code that is not one. Throws an Error naming each.
 */
export function checkPolicy(policy: CoveragePolicy, known: Iterable<string>): void {
  const ids = [...known]
  for (const r of policy.require ?? []) {
    const re = globRe(r)
    if (!ids.some((id) => re.test(id)))
      throw new Error(r.includes('*') ? `require: the glob "${r}" matches no outcome` : `require: "${r}" is not an outcome id`)
  }
  for (const a of policy.allow ?? [])
    if (!(FINDING_CODES as string[]).includes(a)) throw new Error(`allow: "${a}" is not a finding code (one of ${FINDING_CODES.join(', ')})`)
}

/**
 * Whether a policy holds a merchant: not when every call it made was refused 401 or 403 (a suite's
 * negative tests with an inactive or off-site key). A merchant with no call at all is held.
 */
export function authenticated(m: GateMerchant): boolean {
  const refusal = (id: string) => /\.UNAUTHORIZED_40[13]$/.test(id)
  if (!m.outcomes.some((o) => o.count > 0 && refusal(o.id))) return true
  return m.outcomes.some((o) => o.count > 0 && !refusal(o.id)) || m.findings.some((f) => f.code !== 'AUTH_FAILURE')
}

/** The outcomes of `m` the policy requires. */
function required(m: GateMerchant, policy: CoveragePolicy): Set<string> {
  const out = new Set<string>()
  for (const r of policy.require ?? []) {
    if (!r.includes('*')) out.add(r)
    else for (const o of m.outcomes) if (globRe(r).test(o.id)) out.add(o.id)
  }
  return out
}

const findingsFail = (p: CoveragePolicy) => !!p.failOnFindings || p.allow !== undefined

/**
 * The policy's verdict: one line per reason to fail (empty: it passes). `min` and `require` hold
 * only merchants with a call past authentication; findings hold every merchant shown.
 */
export function coverageVerdict(answer: GateAnswer, policy: CoveragePolicy): string[] {
  const reasons: string[] = []
  const allowed = new Set(policy.allow ?? [])
  for (const m of answer.coverage) {
    if (authenticated(m)) {
      const byId = new Map(m.outcomes.map((o) => [o.id, o]))
      for (const id of required(m, policy)) {
        const o = byId.get(id)
        // With how to produce it, as the report says it for each outcome never seen.
        if (!o?.count) reasons.push(`${m.merchant}: required outcome ${id} was never seen${o?.how ? `; ${o.how}` : ''}`)
      }
      if (policy.min !== undefined && m.percent < policy.min) reasons.push(`${m.merchant}: coverage ${m.percent}% is below min ${policy.min}%`)
    }
    if (findingsFail(policy))
      for (const f of m.findings) if (!allowed.has(f.code)) reasons.push(`${m.merchant}: finding ${f.code} x${f.count} is not allowed: ${f.advice}`)
  }
  return reasons
}

/** Answers of several sessions as one: counts and findings summed per merchant, `since` the earliest. */
export function mergeCoverage(...reports: GateAnswer[]): GateAnswer {
  const by = new Map<string, GateMerchant>()
  for (const r of reports)
    for (const m of r.coverage) {
      const into = by.get(m.merchant)
      if (!into) {
        by.set(m.merchant, {
          ...m,
          outcomes: m.outcomes.map((o) => ({ ...o, ...(o.codes ? { codes: { ...o.codes } } : {}) })),
          findings: m.findings.map((f) => ({ ...f })),
        })
        continue
      }
      if (m.since < into.since) into.since = m.since
      for (const o of m.outcomes) {
        const t = into.outcomes.find((x) => x.id === o.id)
        if (!t) into.outcomes.push({ ...o })
        else {
          t.count += o.count
          if (o.codes) for (const [k, n] of Object.entries(o.codes)) (t.codes ??= {})[k] = (t.codes[k] ?? 0) + n
          if (t.how === undefined && o.how !== undefined) t.how = o.how
        }
      }
      for (const f of m.findings) {
        const t = into.findings.find((x) => x.code === f.code)
        if (!t) into.findings.push({ ...f })
        else {
          t.count += f.count
          if (t.example === null) t.example = f.example
        }
      }
    }
  const coverage = [...by.values()].map((m) => {
    const outcomes = m.outcomes.map((o) => {
      const { how, ...rest } = o
      return o.count ? rest : { ...rest, how }
    })
    const findings = FINDING_CODES.flatMap((c) => m.findings.filter((f) => f.code === c))
    const covered = outcomes.filter((o) => o.count > 0).length
    const total = outcomes.length
    return { ...m, outcomes, findings, covered, total, percent: total ? Math.floor((covered * 100) / total) : 100 }
  })
  return { coverage }
}

function xml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** What the JUnit report says besides the answer and the policy (the command line's own). */
export interface JUnitOptions {
  /** No merchant had traffic in this session (named): said in one failing case. */
  emptySession?: string
  /** `--min` without a policy: held as a policy's `min` is. */
  min?: number
}

/**
 * The JUnit report: one suite per merchant. Without a policy: a case per outcome failing when never
 * seen, and a failing case per finding. With one: an outcome fails only when required and unseen (the
 * others pass when seen, are skipped when not); a finding passes when allowed. A `min` (the policy's,
 * or `--min`) is one case per merchant, failing below it, skipped for a merchant whose every call was
 * refused; with no merchant at all it fails above 0, as the exit code does. The one function behind
 * `dcb coverage --junit` and the library's `coverageJUnit`, so both write the same XML.
 */
export function coverageJUnit(answer: GateAnswer, policy?: CoveragePolicy, opts: JUnitOptions = {}): string {
  const { emptySession } = opts
  const min = policy?.min ?? opts.min
  let tests = 0
  let failures = 0
  let skipped = 0
  const suites: string[] = []
  for (const m of answer.coverage) {
    const cls = xml(`dcb.coverage.${m.merchant}`)
    const held = authenticated(m)
    const req = policy ? (held ? required(m, policy) : new Set<string>()) : undefined
    const allowed = new Set(policy?.allow ?? [])
    const cases: string[] = []
    let f = 0
    let s = 0
    if (min !== undefined) {
      const open = `    <testcase classname="${cls}" name="min ${min}%">`
      const pct = `coverage ${m.percent}% (${m.covered} of ${m.total} outcomes seen)`
      if (!held) {
        s++
        cases.push(`${open}<skipped message="not held: every call was refused 401 or 403" /></testcase>\n`)
      } else if (m.percent < min) {
        f++
        cases.push(`${open}<failure message="below min" type="below_min">${xml(`${pct} is below min ${min}%`)}</failure></testcase>\n`)
      } else cases.push(`${open}<system-out>${xml(pct)}</system-out></testcase>\n`)
    }
    for (const x of m.outcomes) {
      const open = `    <testcase classname="${cls}" name="${xml(x.id)}">`
      if (x.count) cases.push(`${open}<system-out>${x.count} seen</system-out></testcase>\n`)
      else if (!req || req.has(x.id)) {
        f++
        const how = x.how ? `; ${x.how}` : ''
        cases.push(
          `${open}<failure message="never seen" type="uncovered">outcome ${xml(x.id)} was never seen since ${xml(m.since)}${xml(how)}</failure></testcase>\n`,
        )
      } else {
        s++
        cases.push(`${open}<skipped message="never seen, not required" /></testcase>\n`)
      }
    }
    for (const fd of m.findings) {
      const detail = `${fd.count} time${fd.count === 1 ? '' : 's'}${fd.example === null ? '' : `; latest: request log entry ${fd.example}`}. ${fd.advice}`
      const open = `    <testcase classname="${cls}" name="finding ${xml(fd.code)}">`
      if (policy && (allowed.has(fd.code) || !findingsFail(policy))) cases.push(`${open}<system-out>${xml(detail)} (allowed)</system-out></testcase>\n`)
      else {
        f++
        cases.push(`${open}<failure message="${xml(fd.advice)}" type="${xml(fd.code)}">${xml(detail)}</failure></testcase>\n`)
      }
    }
    tests += cases.length
    failures += f
    skipped += s
    suites.push(`  <testsuite name="${cls}" tests="${cases.length}" failures="${f}"${s ? ` skipped="${s}"` : ''}>\n${cases.join('')}  </testsuite>\n`)
  }
  // No merchant at all: nothing was held, which must not look green (the command exits 1 too).
  const general: string[] = []
  if (emptySession !== undefined) {
    const text = `no calls were recorded in session ${emptySession}: no merchant has traffic to report (give --merchant ID to report its outcomes, --allow-empty when none is expected)`
    general.push(
      `    <testcase classname="dcb.coverage" name="calls recorded"><failure message="no calls were recorded" type="no_traffic">${xml(text)}</failure></testcase>\n`,
    )
  }
  if (!answer.coverage.length && min !== undefined && min > 0)
    general.push(
      `    <testcase classname="dcb.coverage" name="min ${min}%"><failure message="below min" type="below_min">no merchant has traffic: coverage 0% is below min ${min}%</failure></testcase>\n`,
    )
  if (general.length) {
    suites.push(`  <testsuite name="dcb.coverage" tests="${general.length}" failures="${general.length}">\n${general.join('')}  </testsuite>\n`)
    tests += general.length
    failures += general.length
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="dcb coverage" tests="${tests}" failures="${failures}"${skipped ? ` skipped="${skipped}"` : ''}>\n${suites.join('')}</testsuites>\n`
}
