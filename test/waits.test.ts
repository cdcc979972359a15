/**
 * Tests wait on events, not on the wall clock: a sleep before an assertion passes on a quiet machine
 * and fails on a busy one, and a bound on elapsed time is a benchmark (`npm run bench`), not a test.
 * test/wait.ts has the ways to wait instead (fake timers, the server's side of a request, a live
 * stream's hello, a child's output). A line that must use the wall clock says why, on that line or
 * the one above it: `// wall-clock: <reason>`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const TEST = resolve(import.meta.dirname)

const PATTERNS: { what: string; re: RegExp }[] = [
  // await new Promise((r) => setTimeout(r, 300)), setTimeout(resolve, ms), a sleep(ms) helper
  { what: 'a sleep', re: /setTimeout\(\s*(r|res|resolve|done|wake)\s*,|\bsleep\(\s*\d/ },
  // const t0 = performance.now() … expect(performance.now() - t0); Date.now() - start
  { what: 'a bound on elapsed time', re: /performance\.now\(\)|Date\.now\(\)\s*-\s*\w/ },
  // while (Date.now() < deadline) … poll again
  { what: 'polling against a deadline', re: /Date\.now\(\)\s*[<>]=?\s*\w|\w\s*[<>]=?\s*Date\.now\(\)/ },
]

/** Each line of `text` that waits on the wall clock without saying why. */
export function wallClockWaits(text: string): string[] {
  const lines = text.split('\n')
  return lines.flatMap((line, i) => {
    const hit = PATTERNS.find((p) => p.re.test(line))
    if (!hit) return []
    const reason = /\/\/ wall-clock: \S/
    if (reason.test(line) || reason.test(lines[i - 1] ?? '')) return []
    return [`${i + 1}: ${hit.what}: ${line.trim()}`]
  })
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))
}

describe('tests wait on events', () => {
  it('finds a sleep', () => {
    expect(wallClockWaits('    await new Promise((r) => setTimeout(r, 300))')).toHaveLength(1)
    expect(wallClockWaits('  setTimeout(resolve, RETRY_MS)')).toHaveLength(1)
  })

  it('finds a bound on elapsed time', () => {
    expect(wallClockWaits('    expect(performance.now() - t0).toBeGreaterThanOrEqual(290)')).toHaveLength(1)
    expect(wallClockWaits('    expect(Date.now() - t0).toBeLessThan(2500)')).toHaveLength(1)
  })

  it('finds polling against a deadline', () => {
    expect(wallClockWaits('    while (!seen() && Date.now() < deadline) await tick()')).toHaveLength(1)
  })

  it('passes a wait whose line above says why', () => {
    expect(wallClockWaits('    // wall-clock: the idle timeout under test is real time\n    await new Promise((r) => setTimeout(r, 300))')).toEqual([])
  })

  it('passes a timer that is not a wait', () => {
    expect(wallClockWaits('    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)')).toEqual([])
  })

  it('passes a reading of the clock that is not a bound', () => {
    expect(wallClockWaits('    const before = Date.now()')).toEqual([])
  })

  it('no test file under test/ sleeps or times itself without saying why', () => {
    const all = files(TEST).filter((f) => /\.(ts|mjs|js)$/.test(f) && f !== import.meta.filename)
    expect(all.length).toBeGreaterThan(40)
    const found = all.flatMap((f) => wallClockWaits(readFileSync(f, 'utf8')).map((hit) => `${relative(TEST, f)}:${hit}`))
    expect(found).toEqual([])
  })
})
