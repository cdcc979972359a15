import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { BIN, dcb, serve } from './run.js'

let c: Client
const tmp = tempDir()
beforeAll(async () => {
  c = await startClient({ clock: '2026-01-31T09:00:00' })
})
afterAll(async () => {
  await c.close()
  tmp.cleanup()
})
beforeEach(async () => {
  await c.control('/reset', {})
})
const run = (args: string[]) => dcb(args, { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined } })

describe('the CLI says why', () => {
  it('dcb init prints the reason on its failure line', async () => {
    const r = await run(['init', '--msisdn', '359871234001', '--service', 'GAMECLUB', '--country', 'bg'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('✘ FAIL init: MERCHANT_SERVICE_NOT_CONFIGURED (HTTP 403): service GAMECLUB has no integration in bg\n')
    const upper = await run(['init', '--msisdn', '60123456001', '--service', 'STREAMPLUS', '--country', 'MY'])
    expect(upper.stdout).toBe('✘ FAIL init: BAD_REQUEST (HTTP 400): country_code: must be lower case (got "MY")\n')
  })

  it('a failed redirect dcb flow ends with the failure line and exits 1', async () => {
    const r = await run(['flow', '--msisdn', '359881234001', '--deny'])
    expect(r.code).toBe(1)
    expect(r.stdout.trim().split('\n').at(-1)).toBe('  ✘ FAIL FAILED_INIT_SUB (redirect, HTTP 303): the subscriber denied consent')
    const charge = await run(['flow', '--msisdn', '359881234201'])
    expect(charge.stdout.trim().split('\n').at(-1)).toBe(
      '  ✘ FAIL INSUFFICIENT_FUNDS (redirect, HTTP 303): rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS',
    )
  })

  it('dcb logs shows sandbox time, the MSISDN and why; --msisdn filters', async () => {
    await run(['flow', '--scenario', '201'])
    await run(['flow', '--msisdn', '60123456002'])
    const r = await run(['logs', '--msisdn', '60123456201'])
    expect(r.code).toBe(0)
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^2026-01-31T09:00:00\.000000 POST \/subscriptions\/init 200 SUCCESS demo 60123456201 /)
    expect(lines[1]).toMatch(/^2026-01-31T09:00:00\.000000 POST \/subscriptions\/verify 200 INSUFFICIENT_FUNDS demo 60123456201 /)
    expect(lines[2]).toBe('    why: rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS')
    expect(lines).toHaveLength(3)
  })

  it('dcb run says how many steps and expectations it checked', async () => {
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

  it('--clock on a data file that keeps its own clock prints the kept time and how to start over', async () => {
    const data = join(tmp.dir, 'kept.json')
    const first = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    await first.stop()
    const again = await serve(['--data', data, '--clock', '2027-06-01T00:00:00'])
    try {
      for (let i = 0; i < 100 && !again.output().includes('keeps its own clock'); i++) await new Promise((r) => setTimeout(r, 20))
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
