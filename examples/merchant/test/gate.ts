import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { coverageJUnit, coverageVerdict, mergeCoverage, type CoverageAnswer, type CoveragePolicy } from 'dcb-sandbox'

// vitest's globalSetup: `setup` runs once before any test file, `teardown` once after all of them, in
// the main process. In process, each test file leaves its coverage in REPORTS (test/sandbox.ts); the
// teardown merges them and holds the suite to coverage-policy.json. Served, it does nothing: there
// `dcb coverage --sessions 'file-*' --policy coverage-policy.json` gates the sessions after vitest.

/** One JSON file per test file: its coverage, merged over its tests. */
export const REPORTS = new URL('../dcb-coverage/', import.meta.url)
const POLICY = new URL('../coverage-policy.json', import.meta.url)
const JUNIT = new URL('../coverage-report.xml', import.meta.url)

export function setup(): void {
  // A report left by an earlier run (of a file since renamed, say) must not count.
  rmSync(REPORTS, { recursive: true, force: true })
  mkdirSync(REPORTS, { recursive: true })
}

export function teardown(): void {
  if (process.env.DCB_BASE_URL) return
  let reasons: string[]
  let files: string[] = []
  try {
    files = readdirSync(REPORTS).filter((f) => f.endsWith('.json'))
    const reports = files.map((f) => JSON.parse(readFileSync(new URL(f, REPORTS), 'utf8')) as CoverageAnswer)
    const policy = JSON.parse(readFileSync(POLICY, 'utf8')) as CoveragePolicy
    const merged = mergeCoverage(...reports)
    writeFileSync(JUNIT, coverageJUnit(merged, policy))
    reasons = coverageVerdict(merged, policy)
  } catch (e) {
    // A policy coverageJUnit refuses (an unknown outcome id, say) fails the gate too.
    reasons = [(e as Error).message]
  }
  if (!reasons.length) return
  const ran = files.map((f) => f.replace(/\.json$/, '.test.ts')).join(', ') || 'no test file'
  console.error(`coverage-policy.json does not hold over ${ran}:\n${reasons.map((r) => `  ${r}`).join('\n')}`)
  // vitest 4 only logs an error thrown by a teardown, and exits 0: the exit code is set instead.
  process.exitCode = 1
}
