/**
 * A run file names its fixtures (a path or a list, relative to the run file's folder) and its clock
 * start: the file alone runs as `dcb run --fixtures … --clock …` would (a ticket handed over in one
 * file). A flag comes before the file's key and says so; a bad key is refused by its JSON path before
 * anything runs; against a server the keys are refused as the flags are. Through the binary.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir, useSandbox, writeJson } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())
const ticket = join(tmp.dir, 'ticket')
mkdirSync(join(ticket, 'fix'), { recursive: true })
const BARRED = '601234000017'
writeJson(join(ticket, 'fix'), 'barred.json', {
  rules: [{ id: 'ticket-barred', match: { msisdn: BARRED }, step: 'charge', effect: { error: 'BARRED' } }],
})
// GAMECLUB left with no integration: every Init for it answers 403 (and the loader warns of it).
writeJson(join(ticket, 'fix'), 'gameclub.json', { services: [{ code: 'GAMECLUB', integrations: [] }] })
const STEPS = [
  { clock: { advance: 'PT1H' } },
  { init: { msisdn: BARRED, service_code: 'STREAMPLUS', country_code: 'my' } },
  { otp: BARRED },
  { verify: { verif_request_id: '${init.payload.verif_request_id}', otp: '${otp.otp}' } },
]
const runFile = (name: string, keys: Record<string, unknown>, steps: unknown[] = STEPS) => writeJson(ticket, name, { ...keys, steps })
// Run from the folder above the ticket's: the file's paths are read from its own folder, not the working one.
const run = (args: string[]) =>
  dcb(['run', ...args], { cwd: tmp.dir, env: { DCB_BASE_URL: c.url, DCB_SESSION: undefined, DCB_ADMIN_TOKEN: undefined, DCB_API_KEY: undefined } })
const results = (stdout: string) => Object.fromEntries(JSON.parse(stdout).steps.map((s: any) => [s.name, s.result]))

describe('a run file with fixtures and clock', () => {
  it('runs in process with the world the keys name, as the flags of the same names would', async () => {
    const file = runFile('t.run.json', { fixtures: 'fix/barred.json', clock: '2026-01-31T00:00:00' })
    const r = await run(['ticket/t.run.json'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toMatch(/^a fresh in-process sandbox with ticket\/fix\/barred.json, clock 2026-01-31T00:00:00 \(frozen\)\n/)
    const json = await run([file, '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ in_process: true, passed: true })
    const got = results(json.stdout)
    expect(got.clock.clock.now).toBe('2026-01-31T01:00:00.000000')
    expect(got.verify).toMatchObject({ status: 'FAIL', message: 'BARRED' })
    // A list of paths; the clock alone (the default world).
    runFile('list.run.json', { fixtures: ['fix/gameclub.json', 'fix/barred.json'] }, [
      { init: { msisdn: '60123456001', service_code: 'GAMECLUB', country_code: 'my' } },
      { expect: { 'init.http': 403 } },
    ])
    const list = await run(['ticket/list.run.json'])
    expect(list.code).toBe(0)
    expect(list.stderr).toMatch(/^dcb: warning: .*ticket\/fix\/gameclub.json: \$\.services\[0\]\.integrations: /)
    runFile('clock.run.json', { clock: '2025-06-01T12:00:00' }, [
      { clock: { advance: 'PT1M' } },
      { expect: { 'clock.clock.now': '2025-06-01T12:01:00.000000' } },
    ])
    expect((await run(['ticket/clock.run.json'])).code).toBe(0)
  })

  it('a flag wins over the key it replaces, saying so on stderr', async () => {
    const file = runFile('t.run.json', { fixtures: 'fix/barred.json', clock: '2026-01-31T00:00:00' })
    const r = await run([file, '--json', '--clock', '2027-03-01T00:00:00', '--fixtures', join(ticket, 'fix', 'gameclub.json')])
    expect(r.code).toBe(0)
    expect(
      r.stderr.startsWith(`dcb: ${file}: $.fixtures is not used: --fixtures comes before it\ndcb: ${file}: $.clock is not used: --clock comes before it\n`),
    ).toBe(true)
    const got = results(r.stdout)
    expect(got.clock.clock.now).toBe('2027-03-01T01:00:00.000000')
    expect(got.verify).toMatchObject({ status: 'SUCCESS' })
    // One flag replaces its key alone: the file's fixtures still apply.
    const clockOnly = await run([file, '--json', '--clock', '2027-03-01T00:00:00'])
    expect(clockOnly.stderr).toBe(`dcb: ${file}: $.clock is not used: --clock comes before it\n`)
    expect(results(clockOnly.stdout).verify).toMatchObject({ status: 'FAIL', message: 'BARRED' })
  })

  it('a bad value is refused by its JSON path before anything runs (exit 2)', async () => {
    const bad: [Record<string, unknown>, string[], string][] = [
      [{ fixtures: 5 }, [], "$.fixtures: must be a fixture file or folder, or a list of them (paths relative to the run file's folder), not 5"],
      [{ fixtures: [] }, [], "$.fixtures: must be a fixture file or folder, or a list of them (paths relative to the run file's folder), not []"],
      [{ fixtures: ['fix/barred.json', 3] }, [], '$.fixtures[1]: must be a path, not 3'],
      [{ fixtures: ['fix/barred.json', 'fix/nope.json'] }, [], `$.fixtures[1]: no such file or folder: ${join(ticket, 'fix', 'nope.json')}`],
      [{ fixtures: 'nope.json' }, [], `$.fixtures: no such file or folder: ${join(ticket, 'nope.json')}`],
      [{ clock: 'soon' }, [], '$.clock: "soon" is not a time: use ISO-8601, e.g. 2026-01-31T00:00:00'],
      [{ clock: 20260131 }, [], '$.clock: must be a time such as "2026-01-31T00:00:00", not 20260131'],
      // Replaced by a flag, a bad value is still a bad file.
      [{ clock: 'soon' }, ['--clock', '2026-01-31T00:00:00'], '$.clock: "soon" is not a time: use ISO-8601, e.g. 2026-01-31T00:00:00'],
      [
        { fixtures: 'fix/barred.json', base_url: c.url },
        [],
        '$.base_url: is not used by a run file with "fixtures", which runs a fresh in-process sandbox: drop one of them',
      ],
    ]
    for (const [keys, flags, problem] of bad) {
      const file = runFile('bad.run.json', keys)
      const r = await run([file, ...flags])
      expect([keys, r.code, r.stdout, r.stderr]).toEqual([keys, 2, '', `dcb: ${file}: ${problem}\n`])
    }
  })

  it('with --base-url (or another flag for a server) the keys are refused before the server is touched', async () => {
    const id = await c.subscribe('60123456021')
    const file = runFile('t.run.json', { fixtures: 'fix/barred.json', clock: '2026-01-31T00:00:00' })
    const r = await run([file, '--base-url', c.url])
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      '',
      `dcb: ${file} (with "fixtures" and "clock") runs a fresh in-process sandbox: --base-url is for a running server\n`,
    ])
    const session = await run([runFile('c.run.json', { clock: '2026-01-31T00:00:00' }), '--session', 's1', '--no-reset'])
    expect(session.stderr).toBe(
      `dcb: ${join(ticket, 'c.run.json')} (with "clock") runs a fresh in-process sandbox: --session, --no-reset are for a running server\n`,
    )
    expect((await c.control(`/subscriptions/${id}`)).status).toBe(200)
  })
})
