/**
 * `dcb coverage` gating CI through the binary: a policy (file or flags), merged sessions (--session
 * repeated, --sessions GLOB, and the control API's ?sessions=), --min holding only merchants with a
 * call past authentication, and bad policies refused by name.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir, useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())

const run = (args: string[]) => dcb(['coverage', ...args], { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined, DCB_SESSION: undefined } })
const init = (msisdn: string, session?: string, key?: string) =>
  c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, { key, headers: session ? { 'x-dcb-session': session } : {} })
const policyFile = (name: string, text: string) => {
  const f = join(tmp.dir, name)
  writeFileSync(f, text)
  return f
}

describe('dcb coverage: a policy', () => {
  /** A subscription, a finding (INIT_WHILE_ACTIVE) and a refused body (INVALID_REQUEST). */
  const policyTraffic = async () => {
    await c.subscribe('60123456001')
    await init('60123456001') // INIT_WHILE_ACTIVE
    await c.api('/subscriptions/init', {}, { raw: '{' }) // INVALID_REQUEST
  }

  it('exits 0 when every outcome required was seen', async () => {
    await policyTraffic()
    const pass = await run(['--require', 'init.otp', '--require', 'verify.SUCCESS'])
    expect(pass.code).toBe(0)
  })

  it('exits 1 with one line per reason: each required outcome unseen (all a glob matches), each finding not allowed', async () => {
    await policyTraffic()
    const fail = await run(['--require', 'init.otp', '--require', 'status.*', '--allow', 'INVALID_REQUEST'])
    expect(fail.code).toBe(1)
    const lines = fail.stderr.trim().split('\n')
    const unseen: { id: string; how: string }[] = (await c.control('/coverage?merchant=demo')).body.coverage[0].outcomes.filter((o: any) =>
      o.id.startsWith('status.'),
    )
    // Each with how to produce it, as the report says it.
    expect(unseen.every((o) => o.how)).toBe(true)
    expect(lines).toEqual([
      ...unseen.map((o, i) => `${i ? '' : 'dcb: '}demo: required outcome ${o.id} was never seen; ${o.how}`),
      expect.stringMatching(/^demo: finding INIT_WHILE_ACTIVE x1 is not allowed: /),
    ])
  })

  describe('from a policy file, with min', () => {
    // One run, shared: the tests read its stderr and its report.
    let r: Awaited<ReturnType<typeof run>>
    let xml: string
    beforeAll(async () => {
      await c.control('/reset', {})
      await policyTraffic()
      const f = policyFile('p.json', JSON.stringify({ require: ['init.*'], allow: ['INVALID_REQUEST', 'INIT_WHILE_ACTIVE'], min: 99 }))
      r = await run(['--policy', f, '--junit', join(tmp.dir, 'p.xml')])
      xml = readFileSync(join(tmp.dir, 'p.xml'), 'utf8')
    })

    it('exits 1 with a line per reason, none for a finding allowed', () => {
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('demo: required outcome init.psms was never seen')
      expect(r.stderr).toMatch(/demo: coverage \d+% is below min 99%/)
      expect(r.stderr).not.toContain('finding')
    })

    it('writes a report failing each required outcome unseen, skipping the others, passing what was seen', () => {
      expect(xml).toContain('name="init.psms"><failure message="never seen"')
      expect(xml).toContain('name="verify.INVALID_PIN"><skipped message="never seen, not required" />')
      expect(xml).toContain('name="finding INIT_WHILE_ACTIVE"><system-out>')
      expect(xml).toContain('name="init.otp"><system-out>')
    })
  })

  it('--fail-on-findings fails on any finding', async () => {
    await c.api('/subscriptions/init', {}, { raw: '{' })
    const r = await run(['--fail-on-findings'])
    expect(r).toMatchObject({ code: 1, stderr: expect.stringMatching(/^dcb: demo: finding INVALID_REQUEST x1 is not allowed: Validate the body/) })
  })

  it('without a policy, findings never change the exit code', async () => {
    await c.api('/subscriptions/init', {}, { raw: '{' })
    expect((await run([])).code).toBe(0)
  })

  it('--min holds only merchants with a call past authentication: a refused key is listed, not held', async () => {
    await c.subscribe('60123456001')
    await init('60123456001', undefined, 'sandbox-inactive-key')
    await init('60123456001', undefined, 'sandbox-offsite-key')
    const json = JSON.parse((await run(['--json'])).stdout)
    expect(json.coverage.map((m: any) => m.merchant)).toEqual(['demo', 'inactive', 'offsite'])
    const demo = json.coverage[0].percent
    expect((await run(['--min', String(demo)])).code).toBe(0)
    // The refused merchants (33%: one of their three outcomes) are below 50 too, and not named.
    expect(json.coverage.slice(1).map((m: any) => m.percent)).toEqual([33, 33])
    const below = await run(['--min', '50'])
    expect(below.stderr).toBe(`dcb: coverage below --min 50%: demo ${demo}%\n`)
    const policy = await run(['--min', '50', '--require', 'init.otp'])
    expect(policy.stderr).toBe(`dcb: demo: coverage ${demo}% is below min 50%\n`)
  })

  it('refuses bad input by name (exit 2): an unknown outcome, a glob matching none, an unknown finding, a policy not JSON or with unknown keys', async () => {
    await init('60123456001')
    const cases: [string[], string][] = [
      [['--require', 'verify.SUCESS'], 'require: "verify.SUCESS" is not an outcome id'],
      [['--require', 'nope.*'], 'require: the glob "nope.*" matches no outcome'],
      [['--allow', 'FAST'], 'allow: "FAST" is not a finding code'],
      [['--policy', policyFile('bad.json', '{ require: [] }')], 'is not JSON'],
      [['--policy', policyFile('keys.json', '{ "requires": [] }')], 'has unknown key "requires"'],
      [['--policy', policyFile('min.json', '{ "min": "80" }')], '"min" must be a whole number from 0 to 100'],
      [['--policy', policyFile('array.json', '["verify.*"]')], 'must be a JSON object with require, allow and min'],
      [['--policy', policyFile('globs.json', '{ "require": ["nope.*"] }')], 'require: the glob "nope.*" matches no outcome'],
      [['--policy', join(tmp.dir, 'none.json')], 'cannot read the policy'],
    ]
    for (const [args, text] of cases) {
      const r = await run(args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1)
      expect(r.stderr).toContain(text)
    }
  })
})

describe("a policy file is read as a user's file", () => {
  it('a FIFO, a device, a file past 16 MiB, bytes not UTF-8: refused by what they are, unread (exit 2)', async () => {
    const fifo = join(tmp.dir, 'pipe.json')
    execFileSync('mkfifo', [fifo])
    const zero = join(tmp.dir, 'zero.json')
    symlinkSync('/dev/zero', zero)
    // Sparse: 20 GiB on the file system's word, no block written.
    const huge = policyFile('huge.json', '')
    truncateSync(huge, 20 * 1024 * 2 ** 20)
    const prefix = '{ "require": ["init.otp"], "allow": ["Caf'
    const latin1 = join(tmp.dir, 'latin1.json')
    writeFileSync(latin1, Buffer.concat([Buffer.from(prefix), Buffer.from([0xe9]), Buffer.from('"] }')]))
    const cases: [string, string][] = [
      [fifo, `dcb: cannot read the policy ${fifo}: is a FIFO (a named pipe), not a regular file\n`],
      [zero, `dcb: cannot read the policy ${zero}: is a character device, not a regular file\n`],
      [huge, `dcb: cannot read the policy ${huge}: is 20480 MiB, over the 16 MiB a policy file may be\n`],
      [latin1, `dcb: cannot read the policy ${latin1}: is not valid UTF-8: the byte at offset ${prefix.length} (counting from 0)\n`],
    ]
    for (const [file, stderr] of cases) {
      const r = await dcb(['coverage', '--policy', file], { env: { DCB_BASE_URL: c.url }, timeoutMs: 10_000 })
      expect([file, r.code, r.stderr]).toEqual([file, 2, stderr])
    }
  })

  it('a file that is not a policy is refused without its content', async () => {
    const secret = policyFile('secret.txt', 'password=hunter2 and more\n')
    const keyFile = policyFile('key.json', JSON.stringify({ password: 'hunter2', token: 'hunter2' }))
    const refused = [
      [
        secret,
        `dcb: the policy ${secret} is not JSON: invalid JSON: line 1, column 1: a value (an object, array, string, number, true, false or null) was expected\n`,
      ],
      [keyFile, `dcb: the policy ${keyFile} is not a policy: a JSON object with require, allow and min was expected\n`],
    ]
    for (const [file, stderr] of refused) {
      const r = await run(['--policy', file!])
      expect([r.code, r.stderr]).toEqual([2, stderr])
      expect(r.stderr).not.toMatch(/hunter2|password/)
    }
  })
})

describe('merged sessions', () => {
  // One traffic for these tests (named sessions outlive the reset before each test); the merge read once.
  let a: any
  let b: any
  let both: any
  beforeAll(async () => {
    await init('60123456001', 'ci-a')
    await init('60123456101', 'ci-b')
    await init('60123456001', 'ci-b')
    const one = (s: string) => run(['--session', s, '--json']).then((r) => JSON.parse(r.stdout))
    ;[a, b] = [await one('ci-a'), await one('ci-b')]
    both = JSON.parse((await run(['--session', 'ci-a', '--session', 'ci-b', '--json'])).stdout)
  })
  afterAll(async () => {
    for (const s of ['ci-a', 'ci-b']) await c.control(`/sessions/${s}`, undefined, { method: 'DELETE' })
  })

  it('--session repeated sums counts per merchant, since the earliest', () => {
    expect(a.coverage[0].covered + b.coverage[0].covered).toBe(3)
    const counts = (x: any) => Object.fromEntries(x.coverage[0].outcomes.filter((o: any) => o.count).map((o: any) => [o.id, o.count]))
    expect(counts(both)).toEqual({ 'init.otp': 2, 'init.INVALID_MSISDN': 1 })
    expect(both.coverage[0].covered).toBe(2)
    expect(both.coverage[0].since).toBe([a.coverage[0].since, b.coverage[0].since].sort()[0])
  })

  it('--sessions GLOB sums the same', async () => {
    const glob = JSON.parse((await run(['--sessions', 'ci-*', '--json'])).stdout)
    expect(glob).toEqual(both)
  })

  it('GET /_sandbox/coverage?sessions= sums the same, by a list or a glob', async () => {
    const http = await c.control('/coverage?sessions=ci-a,ci-b')
    expect(http.status).toBe(200)
    expect(http.body).toEqual(both)
    expect((await c.control('/coverage?sessions=ci-*')).body).toEqual(both)
  })

  it('GET /_sandbox/coverage?sessions= answers 404 for a session not there, or a glob matching none', async () => {
    expect(await c.control('/coverage?sessions=ci-a,nope')).toMatchObject({ status: 404, body: { error: 'SESSION_NOT_FOUND' } })
    expect(await c.control('/coverage?sessions=zz-*')).toMatchObject({ status: 404, body: { error: 'SESSION_NOT_FOUND' } })
  })

  it('--sessions GLOB matching no session exits 1 saying so', async () => {
    const none = await run(['--sessions', 'zz-*'])
    expect(none.code).toBe(1)
    expect(none.stderr).toMatch(/^dcb: --sessions "zz-\*" matches no session/)
  })

  it('refuses to merge a session that is not there, without making it', async () => {
    const typo = await run(['--session', 'ci-a', '--session', 'ci-c'])
    expect([typo.code, typo.stderr]).toEqual([1, expect.stringMatching(/^dcb: --session: no session "ci-c" to merge \(there are: .*ci-a, ci-b.*\)\n$/)])
    expect((await c.control('/sessions')).body.sessions.map((x: any) => x.name)).not.toContain('ci-c')
  })
})

describe("examples/merchant's policy against dcb serve, one session per test file", () => {
  // The two tests are the two files of one suite: they run in order, the second after the first.
  const policy = join(import.meta.dirname, '..', '..', 'examples', 'merchant', 'coverage-policy.json')
  const headers = (s: string) => ({ 'x-dcb-session': s })
  const flow = async (msisdn: string, s: string) => {
    const i = await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, { headers: headers(s) })
    const otp = (await c.control(`/otp?msisdn=${msisdn}`, undefined, { headers: headers(s) })).body.otp
    const v = await c.api('/subscriptions/verify', { verif_request_id: i.body.payload.verif_request_id, otp }, { headers: headers(s) })
    return v.body.payload?.subscription_id as string | undefined
  }
  afterAll(async () => {
    for (const s of ['file-1', 'file-2']) await c.control(`/sessions/${s}`, undefined, { method: 'DELETE' })
  })

  it('fails while a file of the suite has not run', async () => {
    // File one: a subscription, its Status, a failed first charge.
    const ok = await flow('60123456011', 'file-1')
    await c.api('/subscriptions/status', { subscription_id: ok }, { headers: headers('file-1') })
    expect(await flow('60123456201', 'file-1')).toBeUndefined()
    const first = await run(['--sessions', 'file-*', '--policy', policy])
    expect(first.code).toBe(1)
    expect(first.stderr).toContain('demo: required outcome status.EXPIRED was never seen')
  })

  it('passes once both sessions are merged', async () => {
    // File two: a renewal that succeeds and one that fails, each reconciled with Status.
    const renewed = await flow('60123456012', 'file-2')
    const lapsed = await flow('60123456301', 'file-2')
    await c.control('/clock/advance', { by: 'P1M' }, { headers: headers('file-2') })
    for (const id of [renewed, lapsed]) await c.api('/subscriptions/status', { subscription_id: id }, { headers: headers('file-2') })
    const both = await run(['--sessions', 'file-*', '--policy', policy, '--junit', join(tmp.dir, 'merged.xml')])
    expect(both).toMatchObject({ code: 0, stderr: '' })
    expect(readFileSync(join(tmp.dir, 'merged.xml'), 'utf8')).toMatch(/<testsuites name="dcb coverage" tests="\d+" failures="0"/)
  })
})
