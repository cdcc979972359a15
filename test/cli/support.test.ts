/**
 * What support engineers hit reproducing tickets from the README (issue 23), through the real binary
 * against a real server: references that do not resolve, JSON reports, malformed MSISDNs refused,
 * reasons that agree in number, help that says what a command does.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, useSandbox, writeJson } from '../helpers.js'
import { dcb, serve } from './run.js'

// One server for the file, reset before each test (helpers.ts useSandbox).
const c = useSandbox({ clock: '2026-01-31T09:00:00' })
const tmp = tempDir()
afterAll(() => tmp.cleanup())

const run = (args: string[]) => dcb(args, { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined } })
const write = (name: string, doc: unknown): string => writeJson(tmp.dir, name, doc)

describe('dcb run: a field an action does not take', () => {
  it('refuses the file before anything is sent or reset, naming the step, the field, what the action takes (exit 2)', async () => {
    const id = await c.subscribe('60123456001')
    const cases: [unknown, string][] = [
      [{ consent: { url: 'x', acton: 'deny' } }, '$.steps[1].consent: consent takes {"url", "action"}: no field "acton"'],
      [{ otp: { msisdn: '60123456001', wiat: 30 } }, '$.steps[1].otp: otp takes {"msisdn", "wait"} or a string: no field "wiat"'],
      [{ clock: { advance: 'P1D', set: '2030-01-01T00:00:00' } }, '$.steps[1].clock: clock takes one of {"advance": "P1M"} or {"set": "2026-01-31T00:00:00"}'],
      [{ clock: {} }, '$.steps[1].clock: clock takes one of {"advance": "P1M"} or {"set": "2026-01-31T00:00:00"}'],
      [{ mo: { msisdn: '60123456001', short_code: '32123' } }, '$.steps[1].mo: mo needs "text"'],
      [{ cancel: 5 }, '$.steps[1].cancel: cancel takes {"subscription_id"} or a string, not 5'],
      // A value of the wrong kind is refused with the file too, not after the reset and the steps before it.
      [{ otp: { msisdn: '60123456001', wait: 'soon' } }, '$.steps[1].otp: otp "wait" must be a number of seconds, not "soon"'],
      [{ consent: { url: 'x', action: 'maybe' } }, '$.steps[1].consent: consent "action" must be "approve" or "deny", not "maybe"'],
      [{ reset: { frozen: 'yes' } }, '$.steps[1].reset: reset "frozen" must be true or false, not "yes"'],
      [{ expect: 'init.status' }, '$.steps[1].expect: expect takes an object of path: value, not "init.status"'],
      [{ rule: [] }, '$.steps[1].rule: rule takes a rule object (the body of POST /_sandbox/rules), not []'],
    ]
    for (const [step, message] of cases) {
      const f = write('typo.run.json', { steps: [{ init: { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' } }, step] })
      const r = await run(['run', f])
      expect(r.stderr, JSON.stringify(step)).toBe(`dcb: ${f}: ${message}\n`)
      expect(r.code).toBe(2)
    }
    const top = write('top.run.json', { descripton: 'x', steps: [{ clock: { advance: 'P1D' } }] })
    expect((await run(['run', top])).stderr).toBe(`dcb: ${top}: $: Unrecognized key: "descripton" (did you mean description?)\n`)
    // Nothing ran: no reset (the subscription is there), no Init sent, no clock move.
    expect((await c.control(`/subscriptions/${id}`)).status).toBe(200)
    expect((await c.control('/requests?msisdn=60123456002')).body.requests).toEqual([])
    expect((await c.control('/clock')).body.now).toBe('2026-01-31T09:00:00.000000')
  })
})

describe('dcb run: an expect on a step that has not run', () => {
  it('names the step (one later in the file too) instead of comparing with nothing (exit 1)', async () => {
    const f = write('early-expect.json', {
      steps: [
        { init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } },
        { expect: { 'init.status': 'SUCCESS', 'verify.status': 'SUCCESS' } },
        { verify: { verif_request_id: '${init.payload.verif_request_id}', otp: '0000' } },
      ],
    })
    const r = await run(['run', f])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(
      'dcb: expectation failed at step 2: verify.status: no step named "verify" has run before it (step 3 is named so, later; named so far: init)\n',
    )
    const typo = write('expect-typo.json', { steps: [{ expect: { 'int.status': 'SUCCESS' } }] })
    const t = await run(['run', typo])
    expect(t.code).toBe(1)
    expect(t.stderr).toBe('dcb: expectation failed at step 1: int.status: no step named "int" has run before it (no step has run yet)\n')
  })
})

describe('dcb run: a reference that does not resolve', () => {
  it('stops before sending the step, naming the reference with what is missing (exit 1)', async () => {
    // A repro that copies a field name wrong: Init answers verif_request_id, not verification_id.
    const f = write('ticket.json', {
      steps: [
        { init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } },
        { verify: { verif_request_id: '${init.payload.verification_id}', otp: '0000' } },
      ],
    })
    const r = await run(['run', f])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(
      `dcb: ${f}: step 2 (verify): \${init.payload.verification_id} does not resolve: init.payload has no "verification_id"; the step was not sent\n`,
    )
    // Nothing was sent for step 2: the request log holds the Init alone.
    expect((await c.control('/requests')).body.requests.map((e: { path: string }) => e.path)).toEqual(['/subscriptions/init'])
  })

  it('names a reference to a step that does not exist', async () => {
    const typo = write('typo.json', { steps: [{ init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } }, { status: '${int.x}' }] })
    const r1 = await run(['run', typo, '--json'])
    expect(r1.code).toBe(1)
    expect(r1.stderr).toContain('${int.x} does not resolve: no earlier step is named "int" (named so far: init)')
    expect(JSON.parse(r1.stdout)).toMatchObject({ passed: false, step_count: 2 })
  })

  it('names a null value under a reference inside a longer text', async () => {
    // 401 (a wrong key): the envelope's payload is null, so nothing under it resolves.
    const failed = write('failed.json', {
      steps: [
        { init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }, api_key: 'wrong-key' },
        { sms: 'x${init.payload.verif_request_id}' },
      ],
    })
    const r2 = await run(['run', failed])
    expect(r2.code).toBe(1)
    expect(r2.stderr).toContain('step 2 (sms): ${init.payload.verif_request_id} does not resolve: init.payload is null; the step was not sent')
  })
})

describe('dcb replay --json', () => {
  type R = Awaited<ReturnType<typeof run>>
  let file: string, r: R, differs: R
  beforeAll(async () => {
    await c.control('/reset', {})
    const init = await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    await c.api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp: 'nope' })
    const logs = await run(['logs', '--json', '--all'])
    file = join(tmp.dir, 'recording.jsonl')
    writeFileSync(file, logs.stdout)
    r = await run(['replay', file, '--json'])
    // A recording whose answer differs.
    const lines = logs.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    lines[1].message = 'PIN_EXPIRED'
    const changed = join(tmp.dir, 'recording-changed.jsonl')
    writeFileSync(changed, lines.map((l) => JSON.stringify(l)).join('\n'))
    differs = await run(['replay', changed, '--json'])
  })

  it('prints one JSON report: every answer beside the recorded one, passed, the count that differ', () => {
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report).toMatchObject({ file, merchant: 'demo', from: '2026-01-31T09:00:00.000000', passed: true, count: 2, differ: 0 })
    expect(report.answers.map((a: any) => [a.path, a.same, a.recorded.message, a.replay.message])).toEqual([
      ['/subscriptions/init', true, '', ''],
      ['/subscriptions/verify', true, 'INVALID_PIN', 'INVALID_PIN'],
    ])
  })

  it('a recording whose answer differs is not passed (exit 1), the report still printed', () => {
    expect(differs.code).toBe(1)
    expect(JSON.parse(differs.stdout)).toMatchObject({ passed: false, differ: 1 })
  })
})

describe('a malformed MSISDN', () => {
  it('GET /_sandbox/sms, /_sandbox/otp refuse it with 400 naming the field', async () => {
    for (const path of ['/sms?msisdn=abc', '/otp?msisdn=%2B60123456001', '/otp?msisdn=6012-3&wait=1']) {
      const bad = await c.control(path)
      expect(bad.status).toBe(400)
      expect(bad.body).toEqual({ error: 'BAD_REQUEST', message: 'msisdn: expected an MSISDN (digits only, calling code first)' })
    }
  })

  it('dcb sms, dcb otp fail on it naming the field', async () => {
    const sms = await run(['sms', 'abc'])
    expect(sms.code).toBe(1)
    expect(sms.stdout).toBe('')
    expect(sms.stderr).toBe('dcb: BAD_REQUEST: msisdn: expected an MSISDN (digits only, calling code first)\n')
    expect((await run(['otp', 'abc'])).stderr).toBe('dcb: BAD_REQUEST: msisdn: expected an MSISDN (digits only, calling code first)\n')
  })

  it('a well-formed MSISDN with nothing sent still answers as before', async () => {
    // A well-formed one with nothing sent still answers as before.
    expect((await run(['sms', '60123456001'])).stdout).toBe('no messages for 60123456001\n')
  })
})

describe('dcb reset --help', () => {
  it('says it also empties the request log', async () => {
    const r = await dcb(['reset', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('back to the loaded fixtures (drops subscriptions, messages, runtime rules) and empties the request log')
  })
})

describe('reasons agree in number', () => {
  it('a carrier allowing 1 attempt: "1 wrong OTP was given already (at most 1 attempt)"', async () => {
    const f = write('one-attempt.json', { carriers: [{ code: 'sbx-my-otp', otp: { max_attempts: 1 } }] })
    const one = await startClient({ fixtures: [f], clock: '2026-01-31T09:00:00' })
    try {
      const init = await one.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
      const id = init.body.payload.verif_request_id
      const wrong = await one.api('/subscriptions/verify', { verif_request_id: id, otp: 'nope' })
      expect(wrong.headers.get('x-dcb-reason')).toBe('otp "nope" is not the OTP sent to 60123456001 (wrong attempt 1 of 1)')
      const again = await one.api('/subscriptions/verify', { verif_request_id: id, otp: 'nope' })
      expect(again.body.message).toBe('MAX_PIN_RETRIES')
      expect(again.headers.get('x-dcb-reason')).toBe('1 wrong OTP was given already (at most 1 attempt)')
      const world = await dcb(['world'], { env: { DCB_BASE_URL: one.url } })
      expect(world.stdout).toContain('OTP 4 digits, valid PT5M, 1 attempt;')
    } finally {
      await one.close()
    }
  })

  it('the default carrier: "3 wrong OTPs were given already (at most 3 attempts)"', async () => {
    const init = await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    const id = init.body.payload.verif_request_id
    for (let i = 0; i < 3; i++) await c.api('/subscriptions/verify', { verif_request_id: id, otp: 'nope' })
    const again = await c.api('/subscriptions/verify', { verif_request_id: id, otp: 'nope' })
    expect(again.headers.get('x-dcb-reason')).toBe('3 wrong OTPs were given already (at most 3 attempts)')
  })
})

describe('dcb fixtures validate and dcb rules add name every problem in one run', () => {
  it('schema, layering, cross-check problems of several files are named together', async () => {
    // Ticket: three files, three kinds of mistake. Before, the schema problem alone was reported.
    const schema = write('a-schema.json', { rules: [{ id: 'slow', match: { country: 'MY' }, step: 'verify', effect: { delay_ms: 100 } }] })
    const typo = write('b-typo.json', { carriers: [{ code: 'sbx-my-otpp', otp: { max_attempts: 1 } }] })
    const cross = write('c-cross.json', {
      services: [{ code: 'STREAMPLUS', integrations: [{ country: 'fr' }] }],
      rules: [{ id: 'barred', match: { service: 'STREAMPLUSS' }, step: 'init', effect: { error: 'BARRED' } }],
    })
    const r = await dcb(['fixtures', 'validate', schema, typo, cross])
    expect(r.code).toBe(1)
    const lines = r.stderr.trim().split('\n')
    expect(lines).toEqual([
      `${schema}: $.rules[0].match.country: a lower-case country code such as "my" (got "MY")`,
      `${typo}: $.carriers[0].code: no carrier sbx-my-otpp; did you mean sbx-my-otp? (a record changes the one with its code; a new carrier needs every field)`,
      expect.stringMatching(
        new RegExp(`^${cross.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: \\$\\.services\\[0\\]\\.integrations\\[0\\]\\.country: unknown country "fr"`),
      ),
      expect.stringMatching(/\$\.rules\[0\]\.match\.service: unknown service "STREAMPLUSS" \(services: .*\); did you mean STREAMPLUS\?$/),
      'dcb: 4 problems found',
    ])
    const json = JSON.parse((await dcb(['fixtures', 'validate', schema, typo, cross, '--json'])).stdout)
    expect(json).toMatchObject({ ok: false, problems: lines.slice(0, 4) })
    // An unreadable file is named, and the others are still checked.
    const g = await dcb(['fixtures', 'validate', join(tmp.dir, 'missing.json'), typo])
    expect(g.stderr).toMatch(/missing\.json: no such file or directory/)
  })

  it('a new record whose key is near nothing has its missing fields named', async () => {
    // A new record whose key is near nothing is a new record: its missing fields are named.
    const fresh = write('fresh.json', { carriers: [{ code: 'acme-fr', otp: { max_attempts: 1 } }] })
    const f = await dcb(['fixtures', 'validate', fresh])
    expect(f.stderr).toContain(`${fresh}: $.carriers[0].country:`)
    expect(f.stderr).not.toContain('did you mean')
  })

  it('a mistyped field of a record or a rule names the nearest field it takes', async () => {
    // A mistyped field of a record or a rule names the nearest field it takes.
    const fields = write('fields.json', { carriers: [{ code: 'sbx-my-otp', flw: 'otp' }], rules: [{ id: 'x', step: 'init', efect: { error: 'BARRED' } }] })
    expect((await dcb(['fixtures', 'validate', fields])).stderr.trim().split('\n')).toEqual([
      `${fields}: $.carriers[0]: Unrecognized key: "flw" (did you mean flow?)`,
      `${fields}: $.rules[0]: Unrecognized key: "efect" (did you mean effect?)`,
      'dcb: 2 problems found',
    ])
  })

  it('dcb rules add checks every rule before adding any: every problem named, nothing added', async () => {
    const f = write('rules.json', {
      rules: [
        { id: 'ok-one', match: { msisdn: '60123456001' }, step: 'init', effect: { error: 'BARRED' } },
        { id: 'two', match: { carrier: 'sbx-my-otpp' }, step: 'nowhere', effect: {} },
        { id: 'ok-one', match: { country: 'my' }, step: 'init', effect: { error: 'BARRED' } },
      ],
    })
    const r = await run(['rules', 'add', f])
    expect(r.code).toBe(1)
    const lines = r.stderr.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(
      /^dcb: BAD_RULE: rule 2 \(two\): step: must be one of api, init.*; match\.carrier: unknown carrier "sbx-my-otpp" \(carriers: .*\); did you mean sbx-my-otp\?$/,
    )
    expect(lines[1]).toBe(
      'dcb: RULE_EXISTS: rule 3 (ok-one): a runtime rule "ok-one" exists already (rule 1 of this list) (no rule was added: 2 of 3 have problems)',
    )
    expect((await c.control('/rules')).body.runtime).toEqual([])
    // One rule alone: its problems on one line, as the server says them.
    const one = await run(['rules', 'add', '{"step":"nowhere","match":{"service":"GAMECLUBB"}}'])
    expect(one.stderr).toMatch(
      /^dcb: BAD_RULE: step: must be one of api, init.*; match\.service: unknown service "GAMECLUBB" \(services: .*\); did you mean GAMECLUB\?\n$/,
    )
    // The control API answers the same problems together.
    const http = await c.control('/rules', { step: 'nowhere', match: { service: 'GAMECLUBB' } })
    expect(http.status).toBe(400)
    expect(http.body.message).toMatch(/^step: must be one of api, init.*; match\.service: unknown service "GAMECLUBB" .*did you mean GAMECLUB\?$/)
  })
})

describe("the default world's rule sources", () => {
  it('read fixtures/world.json whatever the working directory of dcb serve', async () => {
    const elsewhere = await serve(['--in-memory'], { cwd: tmp.dir })
    try {
      const w = await dcb(['rules', 'list', '--json'], { env: { DCB_BASE_URL: elsewhere.url }, cwd: tmp.dir })
      expect(w.code).toBe(0)
      const { rules } = JSON.parse(w.stdout)
      expect(new Set(rules.map((r: { source: string }) => r.source))).toEqual(new Set(['fixtures/world.json']))
      const human = await dcb(['world'], { env: { DCB_BASE_URL: elsewhere.url }, cwd: tmp.dir })
      expect(human.stdout).toContain('demo: 2 API keys; allowlist 127.0.0.0/8, ::1  (fixtures/world.json)')
      // The banner counts the default world's rules there too (it said 0 outside the package folder).
      const line = elsewhere
        .output()
        .split('\n')
        .find((l) => l.includes('fixtures: '))!
      expect(line).toMatch(new RegExp(`fixtures: .*world\\.json \\(${rules.length} rules: ok-000-099, `))
      // The human list counts them in words that agree with the count.
      const listed = await dcb(['rules', 'list'], { env: { DCB_BASE_URL: elsewhere.url, NO_COLOR: '1' }, cwd: tmp.dir })
      expect(listed.stdout).toContain(`no runtime rules\n${rules.length} fixture rules after them (dcb world lists every rule`)
    } finally {
      await elsewhere.stop()
    }
  })
})

describe('dcb logs --subscription ID', () => {
  it('lists the requests about that subscription, the ones that created it included (OTP flow, a renewal, a cancel)', async () => {
    const init = await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    const verif = init.body.payload.verif_request_id
    // Noise: another number's flow, and a Status of nothing.
    await c.api('/subscriptions/init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' })
    await c.api('/subscriptions/verify', { verif_request_id: verif, otp: 'nope' })
    const otp = (await c.control('/otp?msisdn=60123456001')).body.otp
    const id = (await c.api('/subscriptions/verify', { verif_request_id: verif, otp })).body.payload.subscription_id
    await c.api('/subscriptions/status', { subscription_id: 'nope' })
    await c.api('/subscriptions/status', { subscription_id: id })
    await c.control('/clock/advance', { by: 'P1M' })
    await c.control(`/subscriptions/${id}/cancel`, {})
    const r = await run(['logs', '--subscription', id, '--json', '--all'])
    expect(r.code).toBe(0)
    const entries = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(entries.map((e) => [e.path, e.message])).toEqual([
      ['/subscriptions/init', ''],
      ['/subscriptions/verify', 'INVALID_PIN'],
      ['/subscriptions/verify', ''],
      ['/subscriptions/status', ''],
      ['/_sandbox/clock/advance', ''],
      [`/_sandbox/subscriptions/${id}/cancel`, ''],
    ])
    const human = await run(['logs', '--subscription', id])
    expect(
      human.stdout
        .trim()
        .split('\n')
        .filter((l) => /^\d{4}-/.test(l)),
    ).toHaveLength(6)
  })

  it('a PSMS subscription: the Init that gave the short code, then the MO', async () => {
    await c.api('/subscriptions/init', { msisdn: '60133456001', service_code: 'GAMECLUB', country_code: 'my' })
    const mo = await c.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'GAME' })
    const r = await run(['logs', '--subscription', mo.body.subscription_id, '--json', '--all'])
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).path),
    ).toEqual(['/subscriptions/init', '/_sandbox/mo'])
  })

  it('an unknown id is SUBSCRIPTION_NOT_FOUND', async () => {
    const none = await run(['logs', '--subscription', 'nope'])
    expect(none.code).toBe(1)
    expect(none.stderr).toMatch(/^dcb: SUBSCRIPTION_NOT_FOUND: /)
  })

  it('--subscription with --follow is a usage error', async () => {
    expect((await run(['logs', '--subscription', 'x', '-f'])).code).toBe(2)
  })
})

describe('dcb run FILE --fixtures F --clock T', () => {
  it('runs against a fresh in-process sandbox with those fixtures, no server (its resets taking frozen as the control API does)', async () => {
    const fixture = write('ticket-barred.json', { rules: [{ id: 'barred-001', match: { msisdn: '60123456001' }, step: 'init', effect: { error: 'BARRED' } }] })
    const f = write('repro.json', {
      steps: [
        { init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } },
        { expect: { 'init.message': 'BARRED', 'init.status': 'FAIL' } },
        { as: 'ok', init: { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' } },
        { otp: '60123456002' },
        { verify: { verif_request_id: '${ok.payload.verif_request_id}', otp: '${otp.otp}' } },
        { expect: { 'verify.status': 'SUCCESS', 'otp.sent_dt': '2026-01-31T09:00:00.000000' } },
        { reset: { clock: '2025-12-01T00:00:00', frozen: false } },
        { as: 'running', clock: { advance: 'P1D' } },
        { expect: { 'running.clock.frozen': false } },
        { reset: { clock: '2025-12-01T00:00:00', frozen: true } },
        { as: 'frozen', clock: { advance: 'P1D' } },
        { expect: { 'frozen.clock.frozen': true, 'frozen.clock.now': '2025-12-02T00:00:00.000000' } },
      ],
    })
    // No server anywhere: the base URL points at a closed port.
    const env = { DCB_BASE_URL: 'http://127.0.0.1:9', DCB_API_KEY: undefined }
    const r = await dcb(['run', f, '--fixtures', fixture, '--clock', '2026-01-31T09:00:00'], { env })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`a fresh in-process sandbox with ${fixture}, clock 2026-01-31T09:00:00 (frozen)`)
    expect(r.stdout).toContain('✔ 12 steps, 7 expectations passed')
    const json = JSON.parse((await dcb(['run', f, '--fixtures', fixture, '--clock', '2026-01-31T09:00:00', '--json'], { env })).stdout)
    expect(json).toMatchObject({ passed: true, in_process: true, expectations_passed: 7 })
    // The server it did not use saw nothing: its request log is empty.
    expect((await c.control('/requests')).body.requests).toEqual([])
  })

  it("says that the file's base_url is not used by an in-process run", async () => {
    const f = write('with-base-url.json', { base_url: 'http://127.0.0.1:9', steps: [{ sms: '60123456001' }] })
    const r = await dcb(['run', f, '--clock', '2026-01-31T00:00:00'])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe(`dcb: ${f}: base_url http://127.0.0.1:9 is not used: --clock runs a fresh in-process sandbox (without it the run goes there)\n`)
  })

  const badBaseUrl = () =>
    write('bad-base-url.json', { base_url: 'localhost:7700', steps: [{ as: 'inbox', sms: '60123456001' }, { expect: { 'inbox.messages': [] } }] })

  it('runs in process a file whose base_url is no URL (it is not used there), saying so', async () => {
    const f = badBaseUrl()
    const local = await dcb(['run', f, '--fixtures', 'fixtures/scenarios/barred.json'])
    expect(local.stderr).toBe(
      `dcb: ${f}: base_url "localhost:7700" is not used: --fixtures runs a fresh in-process sandbox (without it the run is refused: it is not an http(s) URL)\n`,
    )
    expect(local.stdout).toContain('✔ 2 steps, 1 expectation passed')
    expect(local.code).toBe(0)
  })

  it("given --base-url, a file's base_url that is no URL is not used either", async () => {
    const f = badBaseUrl()
    const flag = await dcb(['run', f, '--base-url', c.url])
    expect([flag.code, flag.stderr]).toEqual([0, ''])
  })

  it('a run that would go to a base_url that is no URL refuses it', async () => {
    const f = badBaseUrl()
    const served = await dcb(['run', f])
    expect([served.code, served.stderr]).toEqual([2, `dcb: ${f}: $.base_url: is not an http(s) URL (e.g. http://127.0.0.1:7700)\n`])
  })

  const one = () => write('one.json', { steps: [{ sms: '60123456001' }] })

  it('names a fixture problem', async () => {
    const f = one()
    const bad = write('bad-fixture.json', { carriers: [{ code: 'sbx-my-otpp', otp: { max_attempts: 1 } }] })
    const r = await dcb(['run', f, '--fixtures', bad])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`dcb: fixture error: ${bad}: $.carriers[0].code: no carrier sbx-my-otpp; did you mean sbx-my-otp?`)
  })

  it('names a bad clock', async () => {
    const f = one()
    const clock = await dcb(['run', f, '--clock', 'tomorrow'])
    expect(clock.code).toBe(2)
    expect(clock.stderr).toMatch(/^dcb: --clock "tomorrow" is not a time/)
  })

  it('refuses --clock with an option meant for a server', async () => {
    const f = one()
    const both = await dcb(['run', f, '--clock', '2026-01-31T00:00:00', '--base-url', c.url])
    expect(both.code).toBe(2)
  })

  it('runs with --clock alone in process, in the default world', async () => {
    const f = one()
    // --clock alone: the default world, in process.
    const alone = await dcb(['run', f, '--clock', '2026-01-31T00:00:00'], { env: { DCB_BASE_URL: 'http://127.0.0.1:9' } })
    expect(alone.code).toBe(0)
  })
})
