/**
 * Fixture files and rules through the real binary: a typo is refused naming file and JSON path (at
 * validation and at start-up), a service left without integrations is warned about, `dcb world`
 * shows what is in force with its files, `dcb reset --clock` and run files with `rule` and
 * `reset {clock}` steps.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir, tempFolderPerTest } from '../helpers.js'
import { dcb, serve, type Served } from './run.js'

const tmp = tempFolderPerTest()
const write = tmp.json

describe('a fixture file with a typo', () => {
  const takenPrefix = () =>
    write('ticket-4711.json', {
      carriers: [{ code: 'sbx-my-opt', country: 'my', prefixes: ['6012'], flow: 'otp', otp: { ttl: 'PT1M' } }],
      rules: [{ id: 'slow', match: { carrier: 'sbx-my-opt' }, step: 'verify', effect: { delay_ms: 5000 } }],
    })

  it('is refused by dcb fixtures validate, naming the value by its file with its JSON path', async () => {
    const f = takenPrefix()
    const v = await dcb(['fixtures', 'validate', f])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain(
      `${f}: $.carriers[0].prefixes[0]: "6012" is already the prefix of carrier "sbx-my-otp" in "my" (to change that carrier, give its code "sbx-my-otp")`,
    )
  })

  it('is refused by dcb serve at start-up, naming the value by its file with its JSON path', async () => {
    const f = takenPrefix()
    const s = await dcb(['serve', '--in-memory', '--port', '0', '--fixtures', f])
    expect(s.code).toBe(1)
    expect(s.stderr).toContain(`dcb: fixture error: ${f}: $.carriers[0].prefixes[0]: "6012" is already the prefix of carrier "sbx-my-otp"`)
  })

  it('names every bad value of a rule, each by its JSON path', async () => {
    const rule = write('rule.json', { rules: [{ id: 'r', match: { country: 'MY' }, step: 'activate', effect: { error: 'BARRED' } }] })
    const r = await dcb(['fixtures', 'validate', rule])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${rule}: $.rules[0].match.country: a lower-case country code such as "my" (got "MY")`)
    expect(r.stderr).toContain(
      `${rule}: $.rules[0].effect.error: step activate does not take error (the steps that take it: init, verify, charge, renewal, retry, mo, consent)`,
    )
  })

  it('names each missing field as missing, telling a rule without an id that it needs one', async () => {
    const f = write('missing.json', {
      services: [{ code: 'NEWSVC', name: 'New' }],
      rules: [{ match: { ending: '044' }, step: 'charge', effect: { error: 'BARRED' } }],
    })
    const v = await dcb(['fixtures', 'validate', f])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain(`${f}: $.rules[0].id: missing: a rule in a fixture file needs an id, e.g. "ticket-4711"`)
    expect(v.stderr).toContain(`${f}: $.services[0].period: missing (expected string) (after merging the layers: ${f})`)
    expect(v.stderr).not.toContain('received undefined')
  })

  it('a rule for a step no carrier of its match has is refused by dcb fixtures validate, naming the step', async () => {
    const f = write('psms-otp.json', { rules: [{ id: 'fixed', match: { carrier: 'sbx-gb-psms' }, step: 'otp', effect: { otp: '4242' } }] })
    const v = await dcb(['fixtures', 'validate', f])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain(
      `${f}: $.rules[0].step: step "otp" happens only on otp carriers and carrier sbx-gb-psms is a psms carrier: the rule would decide nothing`,
    )
  })

  it('a rule for a step no carrier of its match has is refused by dcb rules add before adding', async () => {
    const s = await serve(['--in-memory'])
    try {
      const list = write('add.json', [{ match: { country: 'gb' }, step: 'consent', effect: { error: 'BARRED' } }])
      const r = await dcb(['rules', 'add', list, '--base-url', s.url])
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('step "consent" happens only on redirect carriers and no carrier in "gb" is a redirect carrier: the rule would decide nothing')
    } finally {
      await s.stop()
    }
  })

  it('a wrong extends is named once', async () => {
    const f = write('extends.json', { extends: 'bogus' })
    const v = await dcb(['fixtures', 'validate', f])
    expect(v.code).toBe(1)
    expect(v.stderr).toBe(`${f}: $.extends: must be "default" or "none" (got "bogus")\ndcb: 1 problem found\n`)
  })

  it('a service left with no integration loads with a warning', async () => {
    const f = write('no-integration.json', { services: [{ code: 'GAMECLUB', integrations: [] }] })
    const v = await dcb(['fixtures', 'validate', f])
    expect(v.code).toBe(0)
    expect(v.stderr).toBe(
      `warning: ${f}: $.services[0].integrations: service "GAMECLUB" has no integration: every Init for it answers 403 MERCHANT_SERVICE_NOT_CONFIGURED\n`,
    )
    // One file, layered on the default world (which is not one of the files given).
    expect(v.stdout).toMatch(/^ok: 1 file on the default world: /)
  })
})

describe('dcb world, dcb reset --clock, run files with rule and reset steps', () => {
  let s: Served
  let f: string
  let own: ReturnType<typeof tempDir>
  beforeAll(async () => {
    own = tempDir()
    f = join(own.dir, 'short-otp.json')
    writeFileSync(
      f,
      JSON.stringify({
        carriers: [{ code: 'sbx-my-otp', otp: { ttl: 'PT1M' } }],
        rules: [{ id: 'slow-verify', match: { ending: '042' }, step: 'verify', effect: { delay_ms: 300 } }],
      }),
    )
    s = await serve(['--in-memory', '--fixtures', f, '--clock', '2026-06-01T00:00:00'])
  })
  afterAll(async () => {
    await s?.stop()
    own?.cleanup()
  })

  it('dcb world shows the override in force with its file', async () => {
    const w = await dcb(['world', '--base-url', s.url])
    expect(w.code).toBe(0)
    expect(w.stdout).toContain(
      `sbx-my-otp my: OTP; prefixes 6012; OTP 4 digits, valid PT1M, 3 attempts; retry every P1D, at most 1  (fixtures/world.json + ${f})`,
    )
    expect(w.stdout).toContain(
      'STREAMPLUS of demo: "Stream Plus", every P1M, keyword STREAM; my 9.90 MYR, gb 4.99 GBP, bg 5.99 BGN; return_url /_sandbox/return  (fixtures/world.json)',
    )
    expect(w.stdout).toContain('demo: 2 API keys; allowlist 127.0.0.0/8, ::1  (fixtures/world.json)')
    expect(w.stdout).toMatch(
      new RegExp(`  1\\. slow-verify: ending 042 at verify: delay 300 ms; used 0  \\(${f.replace(/[.]/g, '\\.')}\\)\\n +2\\. ok-000-099: `),
    )
    const json = JSON.parse((await dcb(['world', '--json', '--base-url', s.url])).stdout)
    expect(json.extends).toBe('none')
  })

  it('dcb clock set to the past points to dcb reset --clock, which starts over there', async () => {
    const past = await dcb(['clock', 'set', '2026-01-01T00:00:00', '--base-url', s.url])
    expect(past.code).toBe(1)
    expect(past.stderr).toContain('dcb reset --clock 2026-01-01T00:00:00')
    const reset = await dcb(['reset', '--clock', '2026-01-01T00:00:00', '--base-url', s.url])
    expect(reset.stdout).toContain('back to the loaded fixtures at 2026-01-01T00:00:00')
    expect((await (await fetch(`${s.url}/_sandbox/clock`)).json()).now).toBe('2026-01-01T00:00:00.000000')
  })

  it('a run file starts over in the past, where its rule step decides the second Init', async () => {
    const run = write('ticket.run.json', {
      description: 'ticket 4711: the second Init of 60123456043 fails NOT_ELIGIBLE, in December 2025',
      steps: [
        { reset: { clock: '2025-12-01T00:00:00' } },
        { rule: { id: 'second-init', match: { msisdn: '60123456043' }, step: 'init', nth: 2, effect: { error: 'NOT_ELIGIBLE' } } },
        { init: { msisdn: '60123456043', service_code: 'STREAMPLUS', country_code: 'my' }, as: 'first' },
        { init: { msisdn: '60123456043', service_code: 'STREAMPLUS', country_code: 'my' }, as: 'second' },
        { expect: { 'first.status': 'SUCCESS', 'second.message': 'NOT_ELIGIBLE', 'rule.id': 'second-init' } },
      ],
    })
    const r = await dcb(['run', run, '--base-url', s.url])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect((await (await fetch(`${s.url}/_sandbox/clock`)).json()).now).toBe('2025-12-01T00:00:00.000000')
  })

  it('a run file with a rule step that does not fit fails naming the field', async () => {
    const bad = write('bad.run.json', { steps: [{ rule: { step: 'verify', effect: { cancel_after: 'P1D' } } }] })
    const b = await dcb(['run', bad, '--base-url', s.url])
    expect(b.code).toBe(1)
    expect(b.stderr).toContain('effect.cancel_after: step verify does not take cancel_after (the steps that take it: activate)')
  })
})
