/**
 * What a file handed over can make dcb do: a run file's fixtures stay in its folder (links followed)
 * unless --fixtures names them; a file that is not what it was given as (a run file, a recording,
 * a rules file) is refused without a byte of it in the error; a run file is judged whole before
 * the sandbox is reset. Through the binary.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir, useSandbox, writeJson } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())
const SECRET = 'TOPSECRET-4242'
const secret = join(tmp.dir, 'secret')
writeFileSync(secret, `${SECRET} is the password\n`)
const jsonSecret = writeJson(tmp.dir, 'credentials.json', { password: SECRET, user: 'admin' })
const ticket = join(tmp.dir, 'ticket')
mkdirSync(join(ticket, 'fix'), { recursive: true })
const BARRED = '601234000017'
const barred = { rules: [{ id: 'ticket-barred', match: { msisdn: BARRED }, step: 'init', effect: { error: 'BARRED' } }] }
writeJson(join(ticket, 'fix'), 'barred.json', barred)
const outsideFixture = writeJson(tmp.dir, 'barred-outside.json', barred)
const STEPS = [{ init: { msisdn: BARRED, service_code: 'STREAMPLUS', country_code: 'my' } }, { expect: { 'init.message': 'BARRED' } }]
const runFile = (name: string, keys: Record<string, unknown>, steps: unknown[] = STEPS) => writeJson(ticket, name, { ...keys, steps })
const env = { DCB_BASE_URL: 'http://127.0.0.1:9', DCB_SESSION: undefined, DCB_ADMIN_TOKEN: undefined, DCB_API_KEY: undefined }
const run = (args: string[], base = env.DCB_BASE_URL) => dcb(['run', ...args], { cwd: tmp.dir, env: { ...env, DCB_BASE_URL: base } })
const elsewhere = `a run file's fixtures are in its folder (${ticket}) or below it; give others with --fixtures`

describe("a run file's fixtures", () => {
  it('outside its folder (.., an absolute path) are refused by their JSON path before any of them is read', async () => {
    const cases: [unknown, string][] = [
      ['../secret', `$.fixtures: "../secret" is outside the run file's folder: ${elsewhere}`],
      [['fix/barred.json', secret], `$.fixtures[1]: ${JSON.stringify(secret)} is outside the run file's folder: ${elsewhere}`],
      // Not there either: refused for where it is, not probed.
      ['../../nope.json', `$.fixtures: "../../nope.json" is outside the run file's folder: ${elsewhere}`],
    ]
    for (const [fixtures, problem] of cases) {
      const file = runFile('out.run.json', { fixtures })
      const r = await run([file])
      expect([fixtures, r.code, r.stdout, r.stderr]).toEqual([fixtures, 2, '', `dcb: ${file}: ${problem}\n`])
    }
  })

  it('through a link, or a folder holding a link, that leads outside are refused too', async () => {
    symlinkSync(secret, join(ticket, 'fix', 'looks-inside.json'))
    const viaLink = runFile('link.run.json', { fixtures: 'fix/looks-inside.json' })
    const r = await run([viaLink])
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      '',
      `dcb: ${viaLink}: $.fixtures: "fix/looks-inside.json" leads outside the run file's folder, to ${secret}: ${elsewhere}\n`,
    ])
    const viaFolder = runFile('folder.run.json', { fixtures: ['fix'] })
    const f = await run([viaFolder])
    expect([f.code, f.stdout, f.stderr]).toEqual([
      2,
      '',
      `dcb: ${viaFolder}: $.fixtures[0]: "fix" leads outside the run file's folder (its file looks-inside.json), to ${secret}: ${elsewhere}\n`,
    ])
    expect(f.stderr + r.stderr).not.toContain(SECRET)
  })

  it('inside it run', async () => {
    const inside = await run([runFile('in.run.json', { fixtures: 'fix/barred.json' })])
    expect([inside.code, inside.stderr]).toEqual([0, ''])
  })

  it('outside it run when given with --fixtures', async () => {
    const flag = await run([runFile('plain.run.json', {}), '--fixtures', outsideFixture])
    expect([flag.code, flag.stderr]).toEqual([0, ''])
  })
})

describe('a file that is not what it was given as', () => {
  it('is refused without its content: a run file, a recording, a rules file', async () => {
    for (const args of [
      ['run', secret],
      ['replay', secret],
      ['rules', 'add', secret],
      ['run', jsonSecret],
      ['replay', jsonSecret],
    ]) {
      const r = await dcb(args, { env })
      expect([args, r.code, r.stdout]).toEqual([args, 2, ''])
      expect(r.stderr.split('\n')).toHaveLength(2)
      expect(r.stderr).not.toContain(SECRET)
      expect(r.stderr).not.toContain('password')
    }
    expect((await dcb(['run', secret], { env })).stderr).toBe(
      `dcb: ${secret}: invalid JSON: line 1, column 1: a value (an object, array, string, number, true, false or null) was expected\n`,
    )
    expect((await dcb(['run', jsonSecret], { env })).stderr).toBe(
      `dcb: ${jsonSecret}: is not a run file: a JSON object with "steps" (a list of steps) was expected\n`,
    )
    expect((await dcb(['replay', secret], { env })).stderr).toBe(
      `dcb: ${secret}: line 1 is not JSON (column 1: a value (an object, array, string, number, true, false or null) was expected)\n`,
    )
  })
})

describe('a run file is judged whole before the sandbox is reset', () => {
  it('a step sending an empty or non-string value, a duration or time that is none: exit 2, the server untouched', async () => {
    const id = await c.subscribe('60123456021')
    const cases: [unknown, string][] = [
      [{ clock: { advance: 'soon' } }, '$.steps[1].clock: clock "advance": "soon" is not a duration such as P1M, PT6M or 36h'],
      [{ clock: { advance: '1M' } }, '$.steps[1].clock: clock "advance": "1M" is ambiguous: write PT1M or 1m for minutes, P1M or 1mo for months'],
      [{ clock: { advance: 30 } }, '$.steps[1].clock: clock "advance" must be a non-empty string, not 30'],
      [{ clock: { set: '2026-02-30T00:00:00' } }, '$.steps[1].clock: clock "set": "2026-02-30T00:00:00" is not a time: use ISO-8601, e.g. 2026-01-31T00:00:00'],
      [{ reset: { clock: 'tomorrow' } }, '$.steps[1].reset: reset "clock": "tomorrow" is not a time: use ISO-8601, e.g. 2026-01-31T00:00:00'],
      [{ mo: { msisdn: 60123456001, short_code: '2000', text: 'SUB' } }, '$.steps[1].mo: mo "msisdn" must be a non-empty string, not 60123456001'],
      [{ consent: { url: '' } }, '$.steps[1].consent: consent "url" must be a non-empty string, not ""'],
      [{ otp: '' }, '$.steps[1].otp: otp takes a non-empty string, not ""'],
      [{ cancel: { subscription_id: null } }, '$.steps[1].cancel: cancel "subscription_id" must be a non-empty string, not null'],
    ]
    for (const [step, problem] of cases) {
      const file = runFile('late.run.json', {}, [{ status: 'x' }, step])
      const r = await run([file], c.url)
      expect([step, r.code, r.stdout, r.stderr]).toEqual([step, 2, '', `dcb: ${file}: ${problem}\n`])
    }
    expect((await c.control(`/subscriptions/${id}`)).status).toBe(200)
    // A reference is judged once it resolves: taken here.
    const refs = runFile('refs.run.json', {}, [{ clock: { advance: 'PT1M' } }, { reset: { clock: '${clock.clock.now}' } }])
    const ok = await run([refs, '--clock', '2026-01-31T00:00:00'])
    expect([ok.code, ok.stderr]).toEqual([0, ''])
  })
})
