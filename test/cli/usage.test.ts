/**
 * The CLI as a new user meets it (issue 15), through the real binary: flow and run, names, colour,
 * summaries, mistakes named, rules and subscription commands.
 */
import { execFile } from 'node:child_process'
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/index.js'
import { startClient, tempDir, useSandbox } from '../helpers.js'
import { BIN, dcb } from './run.js'

// One server for the file, reset before each test (helpers.ts useSandbox).
const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())

const run = (args: string[], extra: Record<string, string | undefined> = {}) => dcb(args, { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined, ...extra } })
const ESC = /\x1b\[/

describe('dcb flow builds numbers from the world the server describes', () => {
  it.each([
    ['gb', /Init 447700345201 STREAMPLUS gb/],
    ['bg', /Init 359873456201 STREAMPLUS bg/],
    ['my', /Init 60123456201 STREAMPLUS my/],
  ])('--scenario 201 --country %s: a valid number of that country reaches the first charge', async (country, init) => {
    const r = await run(['flow', '--scenario', '201', '--country', country])
    expect(r.stdout).toMatch(init)
    expect(r.stdout).not.toContain('INVALID_MSISDN')
    expect(r.stdout).toMatch(/3\. Verify[\s\S]*INSUFFICIENT_FUNDS/)
    expect(r.code).toBe(1)
  })

  it('--json prints a passing flow as one report: its steps with their answers, ok, the subscription id', async () => {
    const r = await run(['flow', '--country', 'gb', '--json'])
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report).toMatchObject({ msisdn: '447700345001', service: 'STREAMPLUS', country: 'gb', ok: true })
    expect(report.steps.map((s: { step: string }) => s.step)).toEqual(['init', 'otp', 'verify', 'status'])
    expect(report.steps[3].envelope.payload).toMatchObject({ status: 'ACTIVE', subscription_id: report.subscription_id })
  })

  it('--json reports a failed flow as not ok, ending at the failed step (exit 1)', async () => {
    const failed = await run(['flow', '--scenario', '101', '--json'])
    expect(failed.code).toBe(1)
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, steps: [{ step: 'init', envelope: { message: 'INVALID_MSISDN' } }] })
  })

  describe('with a world loaded with --fixtures (a country the default world does not have)', () => {
    let de: Awaited<ReturnType<typeof startClient>>
    beforeAll(async () => {
      const file = join(tmp.dir, 'de.json')
      writeFileSync(
        file,
        JSON.stringify({
          countries: [{ code: 'de', calling_code: '49', lengths: [13] }],
          carriers: [{ code: 'sbx-de-otp', country: 'de', prefixes: ['49151'], flow: 'otp' }],
          services: [{ code: 'DETEST', merchant: 'demo', name: 'DE Test', period: 'P1W', integrations: [{ country: 'de' }] }],
        }),
      )
      de = await startClient({ fixtures: [file] })
    })
    afterAll(() => de?.close())

    it('runs a flow in that country', async () => {
      const r = await dcb(['flow', '--country', 'de', '--base-url', de.url])
      expect(r.stdout).toMatch(/1\. Init 4915134567001 DETEST de/)
      expect(r.stdout).toMatch(/4\. Status[\s\S]*ACTIVE/)
      expect(r.code).toBe(0)
    })

    it('names the valid countries of that world for one it lacks', async () => {
      const bad = await dcb(['flow', '--country', 'fr', '--base-url', de.url])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toBe('dcb: --country "fr" is not in the sandbox world; valid: my, gb, bg, de\n')
    })
  })
})

describe('dcb run', () => {
  /** A run file that reads a subscription made before the run; answers its path. */
  const keepFile = async (name: string) => {
    const id = await c.subscribe('60123456001')
    const file = join(tmp.dir, name)
    writeFileSync(file, JSON.stringify({ steps: [{ subscription: id }, { expect: { 'subscription.status': 'ACTIVE' } }] }))
    return file
  }

  it('--no-reset keeps the state', async () => {
    const kept = await run(['run', await keepFile('keep.run.json'), '--no-reset'])
    expect(kept.stdout).not.toMatch(/resetting/)
    expect(kept.code).toBe(0)
  })

  it('--json prints the report', async () => {
    const json = await run(['run', await keepFile('json.run.json'), '--no-reset', '--json'])
    expect(json.code).toBe(0)
    const report = JSON.parse(json.stdout)
    expect(report).toMatchObject({ passed: true, reset: false })
    expect(report.steps.map((s: { action: string }) => s.action)).toEqual(['subscription', 'expect'])
    expect(report.steps[1].expect).toEqual([{ path: 'subscription.status', expected: 'ACTIVE', got: 'ACTIVE', pass: true }])
  })

  it('resets the sandbox first, saying so', async () => {
    const reset = await run(['run', await keepFile('reset.run.json')])
    expect(reset.stdout).toMatch(/^resetting the sandbox first \(back to the loaded fixtures; --no-reset keeps its state\)/m)
    expect(reset.stderr).toMatch(/^dcb: SUBSCRIPTION_NOT_FOUND: /)
    expect(reset.code).toBe(1)
  })
})

describe('the name the user typed', () => {
  it('dcb-sandbox is a second bin name', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'))
    expect(pkg.bin).toEqual({ dcb: 'bin/dcb.js', 'dcb-sandbox': 'bin/dcb.js' })
  })

  it('run as dcb-sandbox, its usage with hints print dcb-sandbox', async () => {
    const link = join(tmp.dir, 'dcb-sandbox')
    symlinkSync(BIN, link)
    const exec = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(process.execPath, [link, ...args], { env: { ...process.env, NO_COLOR: '1', DCB_BASE_URL: c.url } }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      )
    const init = await exec(['init', '--msisdn', '60123456001', '--service', 'STREAMPLUS', '--country', 'my'])
    expect(init.code).toBe(0)
    expect(init.stdout).toMatch(/next: dcb-sandbox verify --id \S+ --otp "\$\(dcb-sandbox otp 60123456001\)"/)
    expect((await exec(['--help'])).stdout).toMatch(/^Usage: dcb-sandbox /)
    expect((await exec(['nope'])).stderr).toBe("dcb: unknown command 'nope' (see dcb-sandbox --help)\n")
  })

  it('run as dcb, its hints print dcb', async () => {
    expect((await run(['init', '--msisdn', '60123456002', '--service', 'STREAMPLUS', '--country', 'my'])).stdout).toMatch(/next: dcb verify/)
  })

  it('linked under any other name, its usage, errors, hints print that name', async () => {
    const link = join(tmp.dir, 'billing-sandbox')
    symlinkSync(BIN, link)
    const exec = (args: string[], env: Record<string, string> = {}) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(process.execPath, [link, ...args], { env: { ...process.env, NO_COLOR: '1', DCB_BASE_URL: c.url, ...env } }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      )
    expect((await exec(['--help'])).stdout).toMatch(/^Usage: billing-sandbox /)
    expect((await exec(['nope'])).stderr).toBe("dcb: unknown command 'nope' (see billing-sandbox --help)\n")
    const init = await exec(['init', '--msisdn', '60123456005', '--service', 'STREAMPLUS', '--country', 'my'])
    expect(init.stdout).toMatch(/next: billing-sandbox verify --id \S+ --otp "\$\(billing-sandbox otp 60123456005\)"/)
    expect((await exec(['flow', '--scenario', '2'])).stderr).toBe(
      'dcb: --scenario takes a magic ending of three digits, e.g. 201 (see billing-sandbox scenarios)\n',
    )
    expect((await exec(['clock', 'now'])).stderr).toBe(
      'dcb: usage: billing-sandbox clock [advance DURATION | set TIME] (e.g. advance P1M, advance 36h, set 2026-01-31T00:00:00)\n',
    )
    expect((await exec(['replay', '--help'])).stdout).toContain('replay a recorded session (billing-sandbox logs --json --all)')
    // Nothing listens on port 1: the hint names the command that starts a server.
    expect((await exec(['clock'], { DCB_BASE_URL: 'http://127.0.0.1:1' })).stderr).toBe(
      'dcb: cannot reach http://127.0.0.1:1: connection refused (is `billing-sandbox serve` running?)\n',
    )
  })

  it('run as a script by node, its usage names dcb', async () => {
    expect((await run(['nope'])).stderr).toBe("dcb: unknown command 'nope' (see dcb --help)\n")
  })

  it('run by npx, hints say npx dcb: the bare name is not on PATH there (or is iproute2 dcb)', async () => {
    // What npm exec sets for `npx dcb init …`; a tool run by npx that runs dcb in turn (npx vitest) names itself.
    const byNpx = (script: string) => ({ npm_lifecycle_event: 'npx', npm_lifecycle_script: script })
    const init = await run(['init', '--msisdn', '60123456003', '--service', 'STREAMPLUS', '--country', 'my'], byNpx("'dcb'"))
    expect(init.stdout).toMatch(/next: npx dcb verify --id \S+ --otp "\$\(npx dcb otp 60123456003\)"/)
    expect((await run(['nope'], byNpx('dcb'))).stderr).toBe("dcb: unknown command 'nope' (see npx dcb --help)\n")
    const nested = await run(['init', '--msisdn', '60123456004', '--service', 'STREAMPLUS', '--country', 'my'], byNpx('vitest'))
    expect(nested.stdout).toMatch(/next: dcb verify --id \S+ --otp "\$\(dcb otp 60123456004\)"/)
  })
})

/** Runs dcb on a pseudo-terminal (no prompts to answer). */
function onTerminal(args: string[], env: Record<string, string | undefined>): Promise<string> {
  return new Promise((resolve) =>
    execFile(
      'python3',
      [join(import.meta.dirname, 'pty_drive.py'), '[]', '--', process.execPath, BIN, ...args],
      { env: { ...process.env, DCB_BASE_URL: c.url, TERM: 'xterm-256color', CI: undefined, NO_COLOR: undefined, FORCE_COLOR: undefined, ...env } },
      (_err, stdout) => resolve(stdout),
    ),
  )
}

describe('colour', () => {
  it('colours a terminal', async () => {
    expect(await onTerminal(['status', 'nope'], {})).toMatch(ESC)
  })

  it('NO_COLOR turns colour off on a terminal too', async () => {
    expect(await onTerminal(['status', 'nope'], { NO_COLOR: '1' })).not.toMatch(ESC)
  })

  it('--no-color turns colour off, over FORCE_COLOR too', async () => {
    expect(await onTerminal(['status', 'nope', '--no-color'], {})).not.toMatch(ESC)
    expect((await run(['status', 'nope', '--no-color'], { NO_COLOR: undefined, FORCE_COLOR: '1' })).stdout).not.toMatch(ESC)
  })

  it('leaves a pipe uncoloured', async () => {
    expect((await run(['status', 'nope'], { NO_COLOR: undefined })).stdout).not.toMatch(ESC)
  })

  it('FORCE_COLOR colours a pipe', async () => {
    expect((await run(['status', 'nope'], { NO_COLOR: undefined, FORCE_COLOR: '1' })).stdout).toMatch(ESC)
  })
})

describe('big answers summarised for people', () => {
  it('a clock move over many events is summarised: counts per kind, the first few, the last few', async () => {
    await c.subscribe('60123456001', 'QUICKTEST')
    const r = await run(['clock', 'advance', 'P3D'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^\S+ {2}72 events$/m)
    expect(r.stdout).toMatch(/^ +72 {2}renewed$/m)
    expect(r.stdout).toMatch(/first 5:[\s\S]*… 62 more …[\s\S]*last 5:/)
    expect(r.stdout.split('\n').length).toBeLessThan(25)
  })

  it('--all lists every event of a clock move', async () => {
    await c.subscribe('60123456001', 'QUICKTEST')
    const all = await run(['clock', 'advance', 'P3D', '--all'])
    expect(all.stdout.split('\n').filter((l) => /renewed/.test(l))).toHaveLength(72)
  })

  it('--json lists every event of a clock move', async () => {
    await c.subscribe('60123456001', 'QUICKTEST')
    const json = await run(['clock', 'advance', 'P3D', '--json'])
    expect(JSON.parse(json.stdout).events).toHaveLength(72)
  })

  it('a clock move over one event counts it in the singular', async () => {
    await c.subscribe('60123456001', 'QUICKTEST')
    const one = await run(['clock', 'advance', 'PT1H'])
    expect(one.stdout).toMatch(/^\S+ {2}1 event$/m)
  })

  it('dcb logs on an empty request log says so', async () => {
    const r = await run(['logs'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('the request log is empty (no merchant call since the server started or was reset)\n')
    expect((await run(['logs', '--json'])).stdout).toBe('')
  })
})

describe('mistakes are named', () => {
  it('subscriptions --status BOGUS lists the valid values', async () => {
    const r = await run(['subscriptions', '--status', 'BOGUS'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('dcb: --status "BOGUS" is not a subscription status; valid: ACTIVE, CANCELED, EXPIRED\n')
    expect((await run(['subscriptions', '--status', 'active'])).code).toBe(0)
  })

  it('a time finer than a millisecond is refused by name (it was cut silently): clock set, reset --clock, serve --clock, createSandbox', async () => {
    const finer = '2031-01-01T00:00:00.123456'
    const why = `"${finer}" is finer than a millisecond, and the sandbox keeps time to the millisecond: use .123 (or .123000)`
    const set = await run(['clock', 'set', finer])
    expect(set.code).not.toBe(0)
    expect(set.stderr).toBe(`dcb: BAD_TIME: ${why}\n`)
    expect(await c.control('/reset', { clock: finer })).toEqual({ status: 400, body: { error: 'BAD_TIME', message: `clock: ${why}` } })
    const serve = await dcb(['serve', '--in-memory', '--port', '0', '--clock', finer])
    expect(serve.code).toBe(2)
    expect(serve.stderr).toContain(`dcb: --clock ${why}`)
    await expect(createSandbox({ clock: finer })).rejects.toMatchObject({ code: 'BAD_TIME', message: `clock ${why}` })
    // As the sandbox writes its times (.123000), or with milliseconds alone, it is taken.
    for (const to of ['2031-01-01T00:00:00.123000', '2031-01-02T00:00:00.5']) expect((await run(['clock', 'set', to])).code).toBe(0)
    // (This sandbox's clock runs: a little past the time set.)
    expect((await c.control('/clock')).body.now >= '2031-01-02T00:00:00.500000').toBe(true)
  })

  it('dcb clock advance refuses 1M as ambiguous, saying so', async () => {
    const r = await run(['clock', 'advance', '1M'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('dcb: "1M" is ambiguous: write PT1M or 1m for minutes, P1M or 1mo for months\n')
  })

  it('the control API refuses a clock advance by 1M as ambiguous, saying so', async () => {
    const server = await c.control('/clock/advance', { by: '1M' })
    expect(server.status).toBe(400)
    expect(server.body).toEqual({ error: 'BAD_DURATION', message: '"1M" is ambiguous: write PT1M or 1m for minutes, P1M or 1mo for months' })
  })

  it('clock advance takes 1m, PT1M, P1M, 1mo, 36h, 2d', async () => {
    for (const by of ['1m', 'PT1M', 'P1M', '1mo', '36h', '2d']) expect((await run(['clock', 'advance', by])).code).toBe(0)
  })

  it('clock advance takes ISO-8601 with a fraction on its smallest part (PT1.5H, as 1.5h), not on another', async () => {
    expect((await c.control('/reset', { clock: '2026-01-31T00:00:00', frozen: true })).status).toBe(200)
    expect((await run(['clock', 'advance', 'PT1.5H'])).code).toBe(0)
    expect((await c.control('/clock')).body.now).toBe('2026-01-31T01:30:00.000000')
    const bad = await c.control('/clock/advance', { by: 'PT1.5H30M' })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toBe('BAD_DURATION')
  })

  it('the CLI refuses an empty subscription id or rule id by name (it reached the list, or no call)', async () => {
    for (const args of [
      ['subscription', ''],
      ['cancel', ''],
      ['rules', 'remove', ''],
    ]) {
      const r = await run(args)
      expect(r.stderr, args.join(' ')).toBe('dcb: BAD_REQUEST: id: must not be empty\n')
      expect(r.code).toBe(1)
    }
  })

  it('the library refuses an empty subscription id by name', async () => {
    // The library: subscription('') answered the list of subscriptions as if it were one.
    const sandbox = await createSandbox()
    try {
      await expect(sandbox.subscription('')).rejects.toMatchObject({ code: 'BAD_REQUEST', message: 'id: must not be empty' })
    } finally {
      await sandbox.close()
    }
  })

  it('usage errors are one line starting dcb:', async () => {
    for (const args of [['nope'], ['status', '--bogus'], ['serve', '--port', 'x'], ['rules', 'frob'], ['clock', 'backwards', '1h'], ['logs', '--limit', '0']]) {
      const r = await run(args)
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/^dcb: [^\n]+\n$/)
    }
  })

  it('fixtures validate lists the valid values of a wrong step or code', async () => {
    const r = await run(['fixtures', 'validate', 'test/fixtures/broken/bad-schema.json'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(
      '$.rules[0].step: must be one of api, init, verify, status, otp, charge, activate, renewal, retry, mo, consent, or a non-empty array of them (got "nowhere")',
    )
    expect(r.stderr).toMatch(/\$\.rules\[0\]\.effect\.error: .*"INSUFFICIENT_FUNDS".*"BARRED"/)
    const json = await run(['fixtures', 'validate', 'test/fixtures/broken/bad-schema.json', '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false })
  })

  it('a server that does not answer shows progress, then gives up at --timeout', async () => {
    const silent: Server = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`
      const r = await run(['status', 'x', '--base-url', url, '--timeout', '4'])
      expect(r.code).toBe(3)
      expect(r.stderr).toContain(`dcb: no answer from ${url} yet (2 s; giving up after 4 s, see --timeout)\n`)
      expect(r.stderr).toMatch(/dcb: cannot reach .*: no answer within 4 s\n$/)
    } finally {
      silent.close()
    }
  })
})

describe('dcb rules', () => {
  it('adds (JSON text, or a file with the {"rules": [...]} wrapper), lists, removes and clears runtime rules that take effect', async () => {
    const add = await run(['rules', 'add', '{"id":"t-barred","match":{"msisdn":"60123456001"},"step":"init","effect":{"error":"BARRED"}}'])
    expect(add.code).toBe(0)
    expect(add.stdout).toMatch(/✔ added t-barred/)
    const init = await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    expect(init.body.message).toBe('BARRED')
    const file = join(tmp.dir, 'rules.json')
    writeFileSync(
      file,
      JSON.stringify({
        rules: [
          { id: 't-a', step: 'init', match: { msisdn: '60123456002' }, effect: { error: 'BLACKLISTED' } },
          { step: 'otp', effect: { otp: '1234' } },
        ],
      }),
    )
    const fromFile = await run(['rules', 'add', file, '--json'])
    expect(fromFile.code).toBe(0)
    expect(JSON.parse(fromFile.stdout).added).toHaveLength(2)
    const list = await run(['rules', 'list'])
    // Newest first, the order in which they are tried.
    expect([...list.stdout.matchAll(/^(\S+) {2}used (\d+) /gm)].map((m) => [m[1], m[2]])).toEqual([
      [expect.stringMatching(/^rt-/), '0'],
      ['t-a', '0'],
      ['t-barred', '1'],
    ])
    // Counted as dcb world counts them: "used 1", no "x".
    expect((await run(['world'])).stdout).toMatch(/t-barred: MSISDN 60123456001 at init: BARRED; used 1 /)
    expect(list.stdout).toMatch(/41 fixture rules after them/)
    const json = JSON.parse((await run(['rules', '--json'])).stdout)
    expect(json.runtime).toHaveLength(3)
    // The control API answers one count per rule: the runtime record's `used` is the rule's in force (no `times` here).
    for (const rec of json.runtime) expect(rec.used).toBe(json.rules.find((r: { id: string }) => r.id === rec.id).used)
    expect(json.runtime.find((r: { id: string }) => r.id === 't-barred').used).toBe(1)
    expect((await run(['rules', 'remove', 't-barred'])).stdout).toMatch(/removed 1 runtime rule/)
    const gone = await run(['rules', 'remove', 't-barred'])
    expect(gone.code).toBe(1)
    expect(gone.stderr).toMatch(/^dcb: RULE_NOT_FOUND: /)
    expect((await run(['rules', 'clear'])).stdout).toMatch(/removed 2 runtime rule/)
    const bad = await run(['rules', 'add', '{"step":"nowhere"}'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^dcb: BAD_RULE: step: must be one of api, init/)
    expect((await run(['rules', 'add', join(tmp.dir, 'missing.json')])).stderr).toMatch(/missing\.json: no such file/)
    const notRules = await run(['rules', 'add', '[{"step":"init","effect":{"error":"BARRED"}}, 1, null]'])
    expect(notRules.code).toBe(1)
    expect(notRules.stderr).toBe(
      'dcb: BAD_REQUEST: item [1] of the list is 1, not a rule object (such as {"step": "init", "effect": {"error": "BARRED"}})\n' +
        'dcb: BAD_REQUEST: item [2] of the list is null, not a rule object (such as {"step": "init", "effect": {"error": "BARRED"}}) (no rule was added: 2 of 3 have problems)\n',
    )
    expect((await run(['rules', 'add'])).code).toBe(2)
  })
})

describe('dcb subscription', () => {
  it('shows one subscription with its timeline (charges, messages about it, ...)', async () => {
    const id = await c.subscribe('60123456001')
    await c.control('/clock/advance', { by: 'P1M' })
    const r = await run(['subscription', id])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`^${id} {2}ACTIVE`, 'm'))
    // One timeline, oldest first: the first charge, the welcome, then the renewal.
    expect(r.stdout).toMatch(
      /timeline \(oldest first[^\n]*\n(.*\n)*.*charge +first +SUCCESS.*9\.90 MYR\n(.*\n)*.*message +welcome +Welcome to Stream Plus(.*\n)*.*charge +renewal +SUCCESS/,
    )
  })

  it("--json prints the control API's answer as it is", async () => {
    const id = await c.subscribe('60123456001')
    await c.control('/clock/advance', { by: 'P1M' })
    const json = JSON.parse((await run(['subscription', id, '--json'])).stdout)
    expect(json).toEqual((await c.control(`/subscriptions/${id}`)).body)
    expect(json.charges).toHaveLength(2)
  })

  it('an unknown id exits 1 SUBSCRIPTION_NOT_FOUND', async () => {
    const none = await run(['subscription', 'nope'])
    expect(none.code).toBe(1)
    expect(none.stderr).toMatch(/^dcb: SUBSCRIPTION_NOT_FOUND: /)
  })
})

describe('the CLI reference', () => {
  it('documents every option of every command', async () => {
    const readme = readFileSync('docs/reference/cli.md', 'utf8')
    const top = await dcb(['--help'])
    const commands = [...top.stdout.split('Commands:')[1]!.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!).filter((n) => n !== 'help')
    expect(commands).toContain('rules')
    const missing: string[] = []
    for (const cmd of [[], ...commands.map((c) => [c]), ['fixtures', 'validate'], ['fixtures', 'schema']]) {
      const help = await dcb([...cmd, '--help'])
      for (const [, opt] of help.stdout.matchAll(/^\s+(?:-\w, )?(--[a-z][a-z-]*)/gm))
        if (!['--help', '--version'].includes(opt!) && !readme.includes(`\`${opt}`) && !readme.includes(` ${opt}`)) missing.push(`${cmd.join(' ')} ${opt}`)
    }
    expect(missing).toEqual([])
  }, 60_000)

  it('--help says what every option of every command is for', async () => {
    const top = await dcb(['--help'])
    const commands = [...top.stdout.split('Commands:')[1]!.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!).filter((n) => n !== 'help')
    const bare: string[] = []
    for (const cmd of [[], ...commands.map((c) => [c]), ['fixtures', 'validate'], ['fixtures', 'schema']]) {
      const options = (await dcb([...cmd, '--help'])).stdout.split('Options:')[1]?.split('Commands:')[0] ?? ''
      // An option line is its flags, then two spaces or more and what it does (wrapped lines do not start with -).
      for (const [line] of options.matchAll(/^ {2}-.*$/gm)) if (!/\S {2,}\S/.test(line)) bare.push(`${cmd.join(' ')} ${line.trim()}`)
    }
    expect(bare).toEqual([])
  }, 60_000)
})
