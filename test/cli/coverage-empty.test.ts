/**
 * dcb coverage as a CI gate that read nothing: no calls in the session (nothing sent, or sent to
 * another session or server) must not pass as a green JUnit report, and a session named wrong (a read
 * makes it) is said on stderr. Through the binary against a real server over loopback.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir, useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())

const run = (args: string[], env: Record<string, string> = {}) =>
  dcb(['coverage', ...args], { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined, DCB_SESSION: undefined, ...env } })
const counts = (xml: string) => /<testsuites [^>]*tests="(\d+)" failures="(\d+)"/.exec(xml)!.slice(1).map(Number)

describe('dcb coverage --junit with no calls recorded', () => {
  it('exits 1 with one line naming the session and what to pass', async () => {
    const file = join(tmp.dir, 'empty.xml')
    const r = await run(['--junit', file])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(
      `dcb: no calls were recorded in session default: the JUnit report ${file} has no outcome to show and fails; give --merchant ID to report each outcome of that merchant, or --allow-empty when no traffic is expected\n`,
    )
    // In a named session, the line names it.
    const named = await run(['--junit', file, '--session', 'ci-empty'])
    expect(named.stderr).toMatch(/^dcb: no calls were recorded in session ci-empty: /m)
  })

  it('writes a report with one failing case saying no calls were recorded', async () => {
    const file = join(tmp.dir, 'empty-report.xml')
    await run(['--junit', file])
    const xml = readFileSync(file, 'utf8')
    expect(counts(xml)).toEqual([1, 1])
    expect(xml).toContain('<failure message="no calls were recorded" type="no_traffic">')
  })

  it('--allow-empty writes a report with no test case and exits 0', async () => {
    const file = join(tmp.dir, 'allowed.xml')
    const r = await run(['--junit', file, '--allow-empty'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(counts(readFileSync(file, 'utf8'))).toEqual([0, 0])
  })

  it('--allow-empty without --junit is refused with exit 2', async () => {
    const alone = await run(['--allow-empty'])
    expect([alone.code, alone.stderr]).toEqual([2, 'dcb: --allow-empty goes with --junit FILE (it lets an empty report pass)\n'])
  })

  it('with --merchant, the report holds every outcome of that merchant, each failing unseen', async () => {
    const file = join(tmp.dir, 'merchant.xml')
    const named = await run(['--junit', file, '--merchant', 'demo'])
    expect([named.code, named.stderr]).toEqual([0, ''])
    const [tests, failures] = counts(readFileSync(file, 'utf8'))
    expect(tests).toBeGreaterThan(40)
    expect(failures).toBe(tests)
  })

  it('once there was traffic, the report holds every outcome and exits 0', async () => {
    const file = join(tmp.dir, 'traffic.xml')
    // The --merchant report gives the number of outcomes to expect.
    await run(['--junit', file, '--merchant', 'demo'])
    const [tests] = counts(readFileSync(file, 'utf8'))
    await c.subscribe('60123456001')
    const traffic = await run(['--junit', file])
    expect([traffic.code, traffic.stderr]).toEqual([0, ''])
    expect(counts(readFileSync(file, 'utf8'))[0]).toBe(tests)
  })
})

describe('dcb coverage --session NAME of a session that did not exist', () => {
  it('says on stderr that the read made it', async () => {
    const typo = await run(['--session', 'suite-tpyo'])
    expect(typo.code).toBe(0)
    expect(typo.stderr).toBe(
      'dcb: warning: session "suite-tpyo" (--session) did not exist: this read makes it, empty (a mistyped name? the sessions are listed by GET /_sandbox/sessions)\n',
    )
  })

  it('reads a session made by an earlier read without a word', async () => {
    // The first read makes the session (and warns); the second must not warn.
    // A name of its own: a reset between tests keeps the sessions a read made.
    expect((await run(['--session', 'suite-read-twice'])).stderr).not.toBe('')
    expect((await run(['--session', 'suite-read-twice'])).stderr).toBe('')
  })

  it('names DCB_SESSION as where the name came from', async () => {
    const fromEnv = await run(['--json'], { DCB_SESSION: 'suite-env' })
    expect(fromEnv.stderr).toMatch(/^dcb: warning: session "suite-env" \(DCB_SESSION\) did not exist: /)
    expect(JSON.parse(fromEnv.stdout)).toEqual({ coverage: [] })
  })

  it('reads a session the calls made without a word, its counts shown', async () => {
    await c.api('/subscriptions/init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: { 'x-dcb-session': 'suite-1' } })
    const used = await run(['--session', 'suite-1'])
    expect([used.code, used.stderr]).toEqual([0, ''])
    expect(used.stdout).toMatch(/^demo {2}\d+% of outcomes seen/)
  })

  it('never warns about the default session', async () => {
    expect((await run([])).stderr).toBe('')
  })
})
