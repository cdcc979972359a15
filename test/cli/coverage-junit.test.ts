/**
 * `dcb coverage --junit` and the library's `coverageJUnit` write the same XML for the same answer and
 * policy: one session, merged sessions, no policy, a policy with `min`, an empty session. The binary
 * runs against a real server; the library is given what the control API answers for the same sessions.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { coverageJUnit, mergeCoverage, type CoverageAnswer, type CoveragePolicy } from '../../src/index.js'
import { tempDir, useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())

const run = (args: string[]) => dcb(['coverage', ...args], { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined, DCB_SESSION: undefined } })
const headers = (session: string) => ({ 'x-dcb-session': session })
const init = (msisdn: string, session: string, key?: string) =>
  c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, { key, headers: headers(session) })
const answerOf = async (session: string): Promise<CoverageAnswer> => (await c.control('/coverage', undefined, { headers: headers(session) })).body
const policyFile = (name: string, policy: CoveragePolicy) => {
  const f = join(tmp.dir, name)
  writeFileSync(f, JSON.stringify(policy))
  return f
}
/** Runs the binary with --junit and answers its exit code and the report it wrote. */
async function junit(args: string[], name: string): Promise<{ code: number | null; xml: string }> {
  const file = join(tmp.dir, name)
  const r = await run([...args, '--junit', file])
  return { code: r.code, xml: readFileSync(file, 'utf8') }
}
/** A min case of a merchant: passing (system-out), failing or skipped. */
const minCase = (xml: string, merchant: string, min: number) =>
  new RegExp(`<testcase classname="dcb.coverage.${merchant}" name="min ${min}%"><(\\w[\\w-]*)`).exec(xml)?.[1]

/** Two test files' traffic, one session each: subscriptions, findings, and a merchant whose every call was refused. */
async function traffic(): Promise<void> {
  await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: headers('ci-a') })
  await init('60123456101', 'ci-a') // init.INVALID_MSISDN
  await c.api('/subscriptions/init', {}, { raw: '{', headers: headers('ci-a') }) // INVALID_REQUEST
  await init('60123456001', 'ci-b')
  await init('60123456001', 'ci-b', 'sandbox-inactive-key') // AUTH_FAILURE of a merchant not held to min
}

describe('dcb coverage --junit and coverageJUnit: the same XML', () => {
  describe('for the traffic of two sessions, with a policy file holding min', () => {
    // One traffic for these tests (named sessions outlive the reset before each test); its answers read once.
    let a: CoverageAnswer
    let b: CoverageAnswer
    let merged: { code: number | null; xml: string }
    const policy: CoveragePolicy = { require: ['init.otp', 'init.INVALID_MSISDN'], allow: ['INVALID_REQUEST', 'AUTH_FAILURE'], min: 2 }
    let file: string
    const demoOf = () => mergeCoverage(a, b).coverage.find((m) => m.merchant === 'demo')!
    beforeAll(async () => {
      await c.control('/reset', {})
      await traffic()
      ;[a, b] = [await answerOf('ci-a'), await answerOf('ci-b')]
      file = policyFile('policy.json', policy)
      merged = await junit(['--sessions', 'ci-*', '--policy', file], 'merged.xml')
    })
    afterAll(async () => {
      for (const s of ['ci-a', 'ci-b']) await c.control(`/sessions/${s}`, undefined, { method: 'DELETE' })
    })

    it('for one session', async () => {
      const one = await junit(['--session', 'ci-a', '--policy', file], 'one.xml')
      expect(one.xml).toBe(coverageJUnit(a, policy))
    })

    it('for merged sessions, by a glob or by --session repeated', async () => {
      expect(merged.xml).toBe(coverageJUnit(mergeCoverage(a, b), policy))
      expect(await junit(['--session', 'ci-a', '--session', 'ci-b', '--policy', file], 'both.xml')).toEqual(merged)
    })

    it('with no policy', async () => {
      expect((await junit(['--session', 'ci-a'], 'bare.xml')).xml).toBe(coverageJUnit(a))
    })

    it('with min met: exit 0, the min case passing for a merchant held to it, skipped for one not held', () => {
      // min is a case of each merchant held to it: the exit code and the report agree.
      expect(demoOf().percent).toBeGreaterThanOrEqual(policy.min!)
      expect([merged.code, minCase(merged.xml, 'demo', 2), minCase(merged.xml, 'inactive', 2)]).toEqual([0, 'system-out', 'skipped'])
    })

    it('with min not met: exit 1, the min case failing with the coverage it saw', async () => {
      const demo = demoOf()
      const high = { ...policy, min: demo.percent + 1 }
      const below = await junit(['--sessions', 'ci-*', '--policy', policyFile('high.json', high)], 'high.xml')
      expect(below.code).toBe(1)
      expect(below.xml).toBe(coverageJUnit(mergeCoverage(a, b), high))
      expect(minCase(below.xml, 'demo', high.min)).toBe('failure')
      expect(below.xml).toContain(`coverage ${demo.percent}% (${demo.covered} of ${demo.total} outcomes seen) is below min ${high.min}%`)
      expect(below.xml).toMatch(/<testsuites name="dcb coverage" tests="\d+" failures="1" skipped="\d+">/)
    })

    it("with --min as a flag beside the policy's other keys as flags, as the policy's min", async () => {
      const min = demoOf().percent + 1
      const flag = await junit(
        ['--sessions', 'ci-*', '--require', 'init.otp', '--allow', 'INVALID_REQUEST', '--allow', 'AUTH_FAILURE', '--min', String(min)],
        'flag.xml',
      )
      expect(flag).toEqual({
        code: 1,
        xml: coverageJUnit(mergeCoverage(a, b), { require: ['init.otp'], allow: ['INVALID_REQUEST', 'AUTH_FAILURE'], min }),
      })
    })
  })

  it('--min alone (no policy) is a case too, failing when the command exits 1 for it', async () => {
    await traffic()
    const a = await answerOf('ci-a')
    const pct = a.coverage[0]!.percent
    const at = await junit(['--session', 'ci-a', '--min', String(pct)], 'at.xml')
    expect([at.code, minCase(at.xml, 'demo', pct)]).toEqual([0, 'system-out'])
    const above = await junit(['--session', 'ci-a', '--min', String(pct + 1)], 'above.xml')
    expect([above.code, minCase(above.xml, 'demo', pct + 1)]).toEqual([1, 'failure'])
    // Without a policy the outcomes never seen still fail, as before.
    expect(above.xml).toContain('name="verify.SUCCESS"><failure message="never seen"')
    for (const s of ['ci-a', 'ci-b']) await c.control(`/sessions/${s}`, undefined, { method: 'DELETE' })
  })

  it('an empty session held to min fails the same way in both', async () => {
    const policy: CoveragePolicy = { require: [], min: 20 }
    const r = await junit(['--session', 'ci-none', '--allow-empty', '--policy', policyFile('empty.json', policy)], 'empty.xml')
    expect(r.code).toBe(1)
    const empty = await answerOf('ci-none')
    expect(empty).toEqual({ coverage: [] })
    expect(r.xml).toBe(coverageJUnit(empty, policy))
    expect(r.xml).toContain('<testcase classname="dcb.coverage" name="min 20%"><failure message="below min" type="below_min">no merchant has traffic')
    await c.control('/sessions/ci-none', undefined, { method: 'DELETE' })
  })
})
