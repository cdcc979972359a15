import { execFile } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createSandbox, type Sandbox } from '../../src/index.js'
import { sandboxHandlers } from '../../src/msw.js'
import { tempDir } from '../helpers.js'

const BASE = 'https://gw.carrier.test/dcb/v1'
const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }

describe('dcb-sandbox/msw: sandboxHandlers', () => {
  let sandbox: Sandbox
  let other: Server
  let otherUrl = ''
  const server = setupServer()

  beforeAll(async () => {
    sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
    server.use(...sandboxHandlers(sandbox, { baseUrl: BASE }))
    server.listen({ onUnhandledRequest: 'bypass' })
    other = createServer((_req, res) => res.end('not the sandbox'))
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
    otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.close()
    await new Promise((r) => other.close(r))
  })
  beforeEach(() => sandbox.reset())

  it('answers the OTP flow under a base URL with a path prefix (global fetch, as merchant code calls it)', async () => {
    const started = await fetch(`${BASE}/subscriptions/init`, {
      method: 'POST',
      headers: H,
      body: JSON.stringify({ msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' }),
    })
    expect(started.status).toBe(200)
    const { payload } = (await started.json()) as { payload: { verif_request_id: string } }
    const { otp } = await sandbox.otp('60123456011')
    const verified = await fetch(`${BASE}/subscriptions/verify`, {
      method: 'POST',
      headers: H,
      body: JSON.stringify({ verif_request_id: payload.verif_request_id, otp }),
    })
    expect(await verified.json()).toMatchObject({ status: 'SUCCESS', payload: { subscription_id: expect.any(String) } })
  })

  it('answers a GET on a merchant path with its 405', async () => {
    const get = await fetch(`${BASE}/subscriptions/init`)
    expect(get.status).toBe(405)
    expect(await get.text()).toBe('{"status":"FAIL","message":"METHOD_NOT_ALLOWED","status_code":405,"payload":null}')
  })

  it('answers an unknown path under the base URL with its 404', async () => {
    expect((await fetch(`${BASE}/nope?x=1`, { method: 'DELETE' })).status).toBe(404)
  })

  it('answers the control API under the base URL', async () => {
    expect(((await (await fetch(`${BASE}/_sandbox/clock`)).json()) as { now: string }).now).toBe('2026-01-31T00:00:00.000000')
  })

  it('matches the base URL as a path segment, not as a string start', async () => {
    expect((await fetch('https://gw.carrier.test/dcb/v10/subscriptions/init').catch((e: Error) => e)) instanceof Error).toBe(true)
  })

  it('makes consent links under the base URL, so the redirect flow stays in the handlers', async () => {
    const started = await fetch(`${BASE}/subscriptions/init`, {
      method: 'POST',
      headers: H,
      body: JSON.stringify({ msisdn: '359881234011', service_code: 'STREAMPLUS', country_code: 'bg' }),
    })
    const { payload } = (await started.json()) as { payload: { redirect_url: string } }
    expect(payload.redirect_url.startsWith(`${BASE}/consent/`)).toBe(true)
    expect((await fetch(payload.redirect_url)).status).toBe(200)
  })

  it('answers node:http clients too (as axios, got send)', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const req = https.request('https://gw.carrier.test/dcb/v1/subscriptions/status', { method: 'POST', headers: { ...H } }, (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => resolve(`${res.statusCode} ${text}`))
      })
      req.on('error', reject)
      req.end(JSON.stringify({ subscription_id: 'nope' }))
    })
    expect(body).toBe('404 {"status":"FAIL","message":"SUBSCRIPTION_NOT_FOUND","status_code":404,"payload":null}')
  })

  it('leaves everything outside the base URL alone', async () => {
    expect(await (await fetch(`${otherUrl}/subscriptions/init`, { method: 'POST' })).text()).toBe('not the sandbox')
  })

  it('answers from the session given (a request may name another with its own header)', async () => {
    server.use(...sandboxHandlers(sandbox, { baseUrl: 'https://scoped.test', session: 'w1' }))
    try {
      await fetch('https://scoped.test/subscriptions/init', {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' }),
      })
      expect((await sandbox.session('w1').otp('60123456011')).otp).toMatch(/^\d{4}$/)
      await expect(sandbox.otp('60123456011')).rejects.toMatchObject({ code: 'NO_OTP' })
      const other = await fetch('https://scoped.test/_sandbox/clock', { headers: { 'x-dcb-session': 'w2' } })
      expect(other.status).toBe(200)
    } finally {
      server.resetHandlers(...sandboxHandlers(sandbox, { baseUrl: BASE }))
    }
  })

  it('refuses a base URL that is not an absolute http(s) URL', () => {
    expect(() => sandboxHandlers(sandbox, { baseUrl: '/api' })).toThrow(/not an absolute URL/)
    expect(() => sandboxHandlers(sandbox, { baseUrl: 'ftp://x.test' })).toThrow(/http\(s\)/)
  })
})

describe('loading', () => {
  const t = tempDir()
  afterAll(() => t.cleanup())
  /** The modules `entry` of the built package loads, traced. */
  const trace = (entry: string) =>
    new Promise<string>((resolve, reject) => {
      const file = join(t.dir, `${entry.replace(/\W/g, '_')}.txt`)
      const script = `const m = await import('${entry}'); if (m.createSandbox) { const s = await m.createSandbox(); await s.reset() }`
      execFile(
        process.execPath,
        ['--input-type=module', '-e', script],
        { env: { ...process.env, DCB_TRACE_FILE: file, NODE_OPTIONS: `--import=${join(import.meta.dirname, '..', 'cli', 'trace-loads.mjs')}` } },
        (err, _out, stderr) => (err ? reject(new Error(stderr)) : resolve(readFileSync(file, 'utf8'))),
      )
    })

  it('the main entry never loads msw (built package, modules traced)', async () => {
    const main = await trace('dcb-sandbox')
    expect(main).toContain('dist/index.js')
    for (const heavy of ['/msw/', '/commander/', '@inquirer', '/chalk/', '/listhen/']) expect(main).not.toContain(heavy)
  })

  it('the msw entry loads msw (built package, modules traced)', async () => {
    expect(await trace('dcb-sandbox/msw')).toContain('/msw/')
  })
})
