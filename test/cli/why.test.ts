import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir, useSandbox } from '../helpers.js'
import { BIN, dcb, serve } from './run.js'
import { outputShows } from '../wait.js'

// One server for the file, reset before each test (helpers.ts useSandbox).
const c = useSandbox({ clock: '2026-01-31T09:00:00' })
const tmp = tempDir()
afterAll(() => tmp.cleanup())
const run = (args: string[]) => dcb(args, { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined } })

describe('the CLI says why', () => {
  it('dcb init prints the reason on its failure line', async () => {
    const r = await run(['init', '--msisdn', '359871234001', '--service', 'GAMECLUB', '--country', 'bg'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('✘ FAIL init: MERCHANT_SERVICE_NOT_CONFIGURED (HTTP 403): service GAMECLUB has no integration in bg\n')
    const upper = await run(['init', '--msisdn', '60123456001', '--service', 'STREAMPLUS', '--country', 'MY'])
    expect(upper.stdout).toBe('✘ FAIL init: BAD_REQUEST (HTTP 400): country_code: must be lower case (got "MY")\n')
  })

  it('a failed redirect dcb flow ends with the failure line (exit 1)', async () => {
    const r = await run(['flow', '--msisdn', '359881234001', '--deny'])
    expect(r.code).toBe(1)
    expect(r.stdout.trim().split('\n').at(-1)).toBe('  ✘ FAIL FAILED_INIT_SUB (redirect, HTTP 303): the subscriber denied consent')
    const charge = await run(['flow', '--msisdn', '359881234201'])
    expect(charge.stdout.trim().split('\n').at(-1)).toBe(
      '  ✘ FAIL INSUFFICIENT_FUNDS (redirect, HTTP 303): rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS',
    )
  })

  describe('dcb logs --msisdn after two flows', () => {
    let r: Awaited<ReturnType<typeof run>>, lines: string[]
    beforeAll(async () => {
      await c.control('/reset', {})
      await run(['flow', '--scenario', '201'])
      await run(['flow', '--msisdn', '60123456002'])
      r = await run(['logs', '--msisdn', '60123456201'])
      lines = r.stdout.trim().split('\n')
    })

    it('shows sandbox time, the MSISDN, why', () => {
      expect(r.code).toBe(0)
      expect(lines[0]).toMatch(/^2026-01-31T09:00:00\.000000 POST \/subscriptions\/init 200 SUCCESS demo 60123456201 /)
      expect(lines[1]).toMatch(/^2026-01-31T09:00:00\.000000 POST \/subscriptions\/verify 200 INSUFFICIENT_FUNDS demo 60123456201 /)
      expect(lines[2]).toBe('    why: rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS')
    })

    it('--msisdn filters out the other MSISDN', () => {
      expect(lines).toHaveLength(3)
    })
  })

  it('dcb run counts the steps, expectations it checked', async () => {
    const file = join(tmp.dir, 'two.run.json')
    writeFileSync(
      file,
      JSON.stringify({
        steps: [
          { init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } },
          { verify: { verif_request_id: '${init.payload.verif_request_id}', otp: 'nope' } },
          { expect: { 'init.status': 'SUCCESS', 'verify.message': 'INVALID_PIN' } },
        ],
      }),
    )
    const r = await run(['run', file])
    expect(r.code).toBe(0)
    expect(r.stdout.trim().split('\n').at(-1)).toBe('✔ 3 steps, 2 expectations passed')
  })
})

describe("the CLI's reports carry the reasons (issues 15 and 18 together)", () => {
  it('dcb flow --json keeps the reason of a failed step: Verify, MO, consent', async () => {
    const otp = await run(['flow', '--scenario', '201', '--json'])
    expect(otp.code).toBe(1)
    const verify = JSON.parse(otp.stdout).steps.at(-1)
    expect(verify).toMatchObject({ step: 'verify', http: 200, envelope: { status: 'FAIL', message: 'INSUFFICIENT_FUNDS' } })
    expect(verify.reason).toBe('rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS')
    const psms = await run(['flow', '--msisdn', '60133456202', '--json'])
    expect(psms.code).toBe(1)
    expect(JSON.parse(psms.stdout).steps.at(-1)).toEqual({
      step: 'mo',
      action: 'charge_failed',
      code: 'BLACKLISTED',
      reason: 'rule charge-202 (ending 202): first charge BLACKLISTED',
    })
    const human = await run(['flow', '--msisdn', '60133456201'])
    expect(human.stdout.trim().split('\n').at(-1)).toBe('  ✘ FAIL INSUFFICIENT_FUNDS (MO): rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS')
    const denied = await run(['flow', '--msisdn', '359881234001', '--deny', '--json'])
    expect(denied.code).toBe(1)
    const consent = JSON.parse(denied.stdout).steps.at(-1)
    expect(consent).toMatchObject({ step: 'consent', action: 'deny', status: 303, reason: 'the subscriber denied consent' })
    expect(consent.query).toMatchObject({ status: 'FAIL', message: 'FAILED_INIT_SUB' })
  })

  it('dcb run --json reports the counts the human line prints', async () => {
    const file = join(tmp.dir, 'counted.run.json')
    writeFileSync(
      file,
      JSON.stringify({
        steps: [
          { init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } },
          { expect: { 'init.status': 'SUCCESS', 'init.http': 200, 'init.payload.carrier_code': 'sbx-my-otp' } },
        ],
      }),
    )
    const human = await run(['run', file])
    expect(human.stdout).toMatch(/^resetting the sandbox first/m)
    expect(human.stdout.trim().split('\n').at(-1)).toBe('✔ 2 steps, 3 expectations passed')
    const json = await run(['run', file, '--json'])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({ passed: true, reset: true, step_count: 2, expectations_passed: 3 })
  })

  it('dcb logs: --msisdn with no entry says so, --limit is checked, --all lists every entry (not with --limit)', async () => {
    await run(['flow', '--scenario', '201'])
    const none = await run(['logs', '--msisdn', '60123456999'])
    expect(none).toMatchObject({ code: 0, stdout: 'no request about 60123456999 in the request log\n' })
    const bad = await run(['logs', '--limit', '0'])
    expect(bad).toMatchObject({ code: 2, stderr: 'dcb: --limit "0" must be a whole number from 1 to 100000\n' })
    const both = await run(['logs', '--all', '--limit', '1'])
    expect(both).toMatchObject({ code: 2, stderr: 'dcb: --all shows every entry the request log holds: it cannot go with --limit (drop one of them)\n' })
    const all = await run(['logs', '--all', '--json'])
    expect(all.code).toBe(0)
    expect(
      all.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).path),
    ).toEqual(['/subscriptions/init', '/subscriptions/verify'])
  })

  it('dcb serve --quiet prints only the URL with the banner options too', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--port', '0', '--in-memory', '--quiet', '--allow-ip', '10.0.0.0/8', '--fixtures', 'fixtures/scenarios/barred.json'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', () => out.includes('\n') && resolve(out.trim()))
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)))
    })
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect((await fetch(`${url}/_sandbox/health`)).status).toBe(200)
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await exited
    expect(out).toBe(`${url}\n`)
    expect(err).toBe('')
  })

  it('dcb serve --lan --quiet needs a token', async () => {
    const lan = await dcb(['serve', '--port', '0', '--in-memory', '--quiet', '--lan'], { env: { DCB_ADMIN_TOKEN: undefined } })
    expect(lan).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'dcb: --lan --quiet needs --admin-token (or DCB_ADMIN_TOKEN): a made-up token would not be printed\n',
    })
  })
})

describe('dcb serve', () => {
  it('--quiet prints exactly one line, the URL, so --port 0 works from scripts', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--in-memory', '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', () => out.includes('\n') && resolve(out.trim()))
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)))
    })
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const health = await fetch(`${url}/_sandbox/health`)
    expect(health.status).toBe(200)
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await exited
    expect(out).toBe(`${url}\n`)
    expect(err).toBe('')
  })

  it('--clock on a data file that keeps its own clock prints the kept time with how to start over', async () => {
    const data = join(tmp.dir, 'kept.json')
    const first = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    await first.stop()
    const again = await serve(['--data', data, '--clock', '2027-06-01T00:00:00'])
    try {
      await outputShows(again.child, again.output, 'keeps its own clock')
      expect(again.output()).toContain(
        `dcb: ${data} keeps its own clock (now 2026-01-31T00:00:00.000000); --clock 2027-06-01T00:00:00 was not applied. To start over at that time: dcb reset --clock 2027-06-01T00:00:00`,
      )
      const reset = await dcb(['reset', '--clock', '2027-06-01T00:00:00'], { env: { DCB_BASE_URL: again.url } })
      expect(reset.code).toBe(0)
      const clock = await dcb(['clock'], { env: { DCB_BASE_URL: again.url } })
      expect(clock.stdout).toMatch(/^2027-06-01T00:00:00\.000000 \(frozen\)/)
    } finally {
      await again.stop()
    }
  })

  it('--clock on a data file that was used with its clock never set (running real time) keeps that clock: no time moves back', async () => {
    const data = join(tmp.dir, 'used.json')
    const first = await serve(['--data', data])
    const init = await dcb(['init', '--msisdn', '60123456001', '--service', 'STREAMPLUS', '--country', 'my'], { env: { DCB_BASE_URL: first.url } })
    expect(init.code).toBe(0)
    await first.stop()
    const again = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    try {
      await outputShows(again.child, again.output, 'keeps its own clock')
      expect(again.output()).toContain('--clock 2026-01-31T00:00:00 was not applied')
      const clock = await (await fetch(`${again.url}/_sandbox/clock`)).json()
      expect(clock).toMatchObject({ frozen: false, offset_ms: 0 })
      expect(Date.parse(`${clock.now.slice(0, 23)}Z`)).toBeGreaterThan(Date.parse('2026-02-01T00:00:00Z'))
    } finally {
      await again.stop()
    }
  })

  it('--no-reasons: no X-DCB-Reason header from dcb serve', async () => {
    const s = await serve(['--in-memory', '--no-reasons'])
    const on = await serve(['--in-memory'])
    try {
      const call = (url: string) =>
        fetch(`${url}/subscriptions/init`, { method: 'POST', headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }, body: '{}' })
      const without = await call(s.url)
      const withIt = await call(on.url)
      expect(without.status).toBe(400)
      expect(without.headers.has('x-dcb-reason')).toBe(false)
      expect(withIt.headers.get('x-dcb-reason')).toBe('msisdn: required')
      expect(await without.text()).toBe(await withIt.text())
    } finally {
      await s.stop()
      await on.stop()
    }
  })
})
