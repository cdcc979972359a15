/**
 * The single executable (`npm run build:binary` → dist/dcb-linux-x64; `npm test` and CI build it
 * before the suite): run as a subprocess from another folder, with a PATH on which there is no
 * `node`, it serves and runs a whole OTP flow. A missing executable fails here: it is never skipped.
 */
import { execFile, spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_BASE_URL } from '../src/contract/defaults.js'
import { PAGE_CALLS } from '../src/http/console.js'

const EXE = resolve('dist', 'dcb-linux-x64')
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version

describe('the single executable (dist/dcb-linux-x64)', () => {
  let dir: string
  let env: Record<string, string>
  let server: ReturnType<typeof spawn> | undefined
  let url: string

  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
      execFile(EXE, args, { cwd: dir, env, timeout: 20_000 }, (err, stdout, stderr) => done({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr })),
    )

  beforeAll(async () => {
    expect(existsSync(EXE), `${EXE} is missing: npm run build:binary writes it`).toBe(true)
    dir = mkdtempSync(join(tmpdir(), 'dcb-exe-'))
    // PATH is one empty folder: no node, no npm, nothing the executable could lean on.
    const bin = join(dir, 'bin')
    mkdirSync(bin)
    env = { PATH: bin, HOME: dir, NO_COLOR: '1' }
    server = spawn(EXE, ['serve', '--port', '0', '--quiet', '--clock', '2026-01-31T00:00:00'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
    url = await new Promise<string>((ready, fail) => {
      let out = ''
      let err = ''
      server!.stdout!.on('data', (d) => {
        out += d
        if (out.includes('\n')) ready(out.trim())
      })
      server!.stderr!.on('data', (d) => (err += d))
      server!.on('exit', (code) => fail(new Error(`dcb-linux-x64 serve exited ${code}: ${err}`)))
    })
    env.DCB_BASE_URL = url
  })

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r))
      server.kill('SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('has no node on its PATH', () => {
    for (const folder of env.PATH!.split(':')) expect(existsSync(join(folder, 'node'))).toBe(false)
  })

  it('runs from a folder that is not the package', () => {
    expect(existsSync(join(dir, 'package.json'))).toBe(false)
  })

  it('serves on the loopback address it prints on start', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  })

  describe('a whole OTP flow: init, otp, verify, status', () => {
    let init: { code: number; stdout: string; stderr: string }
    let otp: { code: number; stdout: string; stderr: string }
    let verify: { code: number; stdout: string; stderr: string }
    let status: { code: number; stdout: string; stderr: string }
    let id: string

    beforeAll(async () => {
      init = await run(['init', '--msisdn', '60123456001', '--service', 'STREAMPLUS', '--country', 'my', '--json'])
      otp = await run(['otp', '60123456001'])
      verify = await run(['verify', '--id', JSON.parse(init.stdout).payload.verif_request_id, '--otp', otp.stdout.trim(), '--json'])
      id = JSON.parse(verify.stdout).payload.subscription_id
      status = await run(['status', id, '--json'])
    })

    it('init writes nothing to stderr', () => {
      expect(init.stderr).toBe('')
    })

    it('init answers SUCCESS from the OTP carrier', () => {
      expect(JSON.parse(init.stdout)).toMatchObject({ status: 'SUCCESS', payload: { carrier_code: 'sbx-my-otp' } })
    })

    it('otp prints the four-digit code', () => {
      expect(otp.stdout).toMatch(/^\d{4}\n$/)
    })

    it('verify with that code answers SUCCESS', () => {
      expect(JSON.parse(verify.stdout)).toMatchObject({ status: 'SUCCESS' })
    })

    it('status shows the subscription ACTIVE until a month on', () => {
      expect(JSON.parse(status.stdout).payload).toMatchObject({
        subscription_id: id,
        status: 'ACTIVE',
        msisdn: '60123456001',
        expiry_dt: '2026-02-28T00:00:00.000000',
      })
    })

    it('keeps its data file in the folder it was started from', () => {
      // The data file is where the executable was started, as with dcb serve from the package.
      expect(existsSync(join(dir, '.dcb', 'sandbox.json.lock'))).toBe(true)
    })
  })

  it('carries the version of the package', async () => {
    expect((await run(['--version'])).stdout.trim()).toBe(VERSION)
  })

  it('carries the default world', async () => {
    const world = await run(['world'])
    expect(world.stdout).toContain('(fixtures/world.json)')
  })

  it('serves the console page as shipped', async () => {
    const page = await fetch(url + '/')
    expect(page.status).toBe(200)
    // The page as shipped, with the CLI's default base URL and the declared calls filled in as it is served.
    expect(await page.text()).toBe(
      readFileSync('src/console/index.html', 'utf8')
        .replace('content="DEFAULT_BASE_URL"', `content="${DEFAULT_BASE_URL}"`)
        .replace('PAGE_CALLS', () => PAGE_CALLS),
    )
  })

  it('serves the console script as shipped', async () => {
    const script = await fetch(url + '/_console/app.js')
    expect(await script.text()).toBe(readFileSync('src/console/app.js', 'utf8'))
  })

  describe('a copy under another name', () => {
    let copy: string
    const exec = (args: string[], extra: Record<string, string> = {}) =>
      new Promise<{ stdout: string; stderr: string }>((done) =>
        execFile(copy, args, { cwd: dir, env: { ...env, ...extra }, timeout: 20_000 }, (_err, stdout, stderr) => done({ stdout, stderr })),
      )

    beforeAll(() => {
      copy = join(dir, 'billing-sandbox')
      copyFileSync(EXE, copy)
    })

    it('prints that name in its usage', async () => {
      expect((await exec(['--help'])).stdout).toMatch(/^Usage: billing-sandbox /)
    })

    it('prints that name in the hint for an unknown command', async () => {
      expect((await exec(['nope'])).stderr).toBe("dcb: unknown command 'nope' (see billing-sandbox --help)\n")
    })

    it('prints that name in the hint for a server it cannot reach', async () => {
      expect((await exec(['clock'], { DCB_BASE_URL: 'http://127.0.0.1:1' })).stderr).toBe(
        'dcb: cannot reach http://127.0.0.1:1: connection refused (is `billing-sandbox serve` running?)\n',
      )
    })

    it('leaves the original printing its own name in its usage', async () => {
      expect((await run(['--help'])).stdout).toMatch(/^Usage: dcb-linux-x64 /)
    })
  })

  describe('bad input, refused as the CLI does', () => {
    let bad: { code: number; stdout: string; stderr: string }
    beforeAll(async () => {
      bad = await run(['clock', 'advance', '1M'])
    })

    it('exits 2', () => {
      expect(bad.code).toBe(2)
    })

    it('says why on one line of stderr', () => {
      expect(bad.stderr).toMatch(/^dcb: .*\n$/)
    })
  })
})
