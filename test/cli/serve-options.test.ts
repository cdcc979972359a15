/**
 * `dcb serve` options of issue 15 through the real binary: the banner, --allow-ip, and listhen's
 * --https, --open and --lan (loaded only with those flags).
 */
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, readdirSync, readFileSync, watch, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { connect } from 'node:net'
import { networkInterfaces } from 'node:os'
import { basename, join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { BIN, dcb, serve, type Served } from './run.js'
import { outputShows } from '../wait.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

/** This machine's first non-loopback IPv4 address (the LAN). */
const lanAddress = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)!.address

const init = (base: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/subscriptions/init`, {
    method: 'POST',
    headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }),
  }).then(async (r) => ({ http: r.status, body: (await r.json()) as { status: string; message: string } }))

describe('dcb serve banner and --allow-ip', () => {
  it('lists the fixture files, each with the rules it brought', async () => {
    const s = await serve(['--in-memory', '--fixtures', 'fixtures/scenarios/barred.json'])
    try {
      expect(s.output()).toMatch(/fixtures: fixtures\/world\.json \(41 rules: ok-000-099, init-101, init-102, init-103, … delay-5NN\)\n/)
      expect(s.output()).toMatch(/^ {12}fixtures\/scenarios\/barred\.json \(1 rule: \S+\)$/m)
      expect(s.output()).toMatch(/rules: {4}42 in force/)
    } finally {
      await s.stop()
    }
  })

  describe('--allow-ip', () => {
    it('without it another address gets 403 with the demo keys', async () => {
      const lan = lanAddress()
      const plain = await serve(['--in-memory', '--host', '0.0.0.0'])
      try {
        const port = new URL(plain.url).port
        expect(await init(`http://${lan}:${port}`)).toMatchObject({ http: 403, body: { message: 'UNAUTHORIZED' } })
      } finally {
        await plain.stop()
      }
    })

    it('lets the address it names use the demo keys, saying so in the banner', async () => {
      const lan = lanAddress()
      const allowed = await serve(['--in-memory', '--host', '0.0.0.0', '--allow-ip', `${lan}/32`])
      try {
        expect(allowed.output()).toContain(`allow-ip: ${lan}/32 added to the allowlists of demo, other, inactive`)
        const port = new URL(allowed.url).port
        expect(await init(`http://${lan}:${port}`)).toMatchObject({ http: 200, body: { status: 'SUCCESS' } })
      } finally {
        await allowed.stop()
      }
    })

    it('refuses a value that is no IP address or CIDR range with exit 2', async () => {
      const bad = await dcb(['serve', '--in-memory', '--allow-ip', '10.0.0.0/33'])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toBe('dcb: --allow-ip "10.0.0.0/33" is not an IP address or CIDR range (e.g. 192.168.1.0/24, 10.0.0.7, fd00::/8)\n')
    })
  })
})

describe('dcb serve on every interface', () => {
  for (const [host, loopback, bound] of [
    ['0.0.0.0', '127.0.0.1', '0.0.0.0'],
    ['::', '[::1]', '[::]'],
  ] as const) {
    it(`--host ${host} prints the loopback URL to open (the line scripts read), then the LAN one`, async () => {
      const lan = lanAddress()
      const s = await serve(['--in-memory', '--host', host])
      try {
        const port = new URL(s.url).port
        expect(s.url).toBe(`http://${loopback}:${port}`)
        expect(s.output()).toContain(`listening on http://${loopback}:${port}  (bound to ${bound}: every interface)\n`)
        expect(s.output()).toContain(`  LAN:      http://${lan}:${port}  (for other machines; the warning on stderr says what they reach)\n`)
        expect(s.output()).toContain(`  control:  http://${loopback}:${port}/_sandbox/health\n`)
        expect(s.output()).not.toMatch(/http:\/\/(0\.0\.0\.0|\[::\]):/)
        expect((await fetch(`${s.url}/_sandbox/health`)).status).toBe(200)
      } finally {
        await s.stop()
      }
    })
  }

  it('--quiet with --host 0.0.0.0 prints only the loopback URL', async () => {
    const quiet = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--in-memory', '--quiet', '--host', '0.0.0.0'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      })
      let out = ''
      child.stdout.on('data', (d) => {
        out += d
        if (out.includes('\n')) child.kill('SIGTERM')
      })
      child.on('error', reject)
      child.on('close', () => resolve(out))
    })
    expect(quiet).toMatch(/^http:\/\/127\.0\.0\.1:\d+\n$/)
  })
})

describe('--allow-ip in what is in force', () => {
  it('dcb world names --allow-ip beside the files of the merchants it changed', async () => {
    const s = await serve(['--in-memory', '--allow-ip', '10.0.0.0/8'])
    try {
      const w = await dcb(['world'], { env: { DCB_BASE_URL: s.url } })
      expect(w.code).toBe(0)
      expect(w.stdout).toContain('  demo: 2 API keys; allowlist 127.0.0.0/8, ::1, 10.0.0.0/8  (fixtures/world.json + --allow-ip)\n')
      expect(w.stdout).toContain('  offsite: 1 API key; allowlist 203.0.113.0/24  (fixtures/world.json)\n')
    } finally {
      await s.stop()
    }
  })
})

describe('dcb serve through listhen', () => {
  describe('--https on loopback', () => {
    let s: Served
    beforeAll(async () => {
      s = await serve(['--in-memory', '--https'])
    })
    afterAll(async () => {
      await s.stop()
    })

    it('serves HTTPS on loopback with a self-signed certificate', async () => {
      expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      const health = await new Promise<string>((resolve, reject) =>
        request(`${s.url}/_sandbox/health`, { rejectUnauthorized: false }, (res) => {
          let text = ''
          res.on('data', (d) => (text += d))
          res.on('end', () => resolve(text))
        })
          .on('error', reject)
          .end(),
      )
      expect(JSON.parse(health).ok).toBe(true)
    })

    it('gives a consent link on https, as the request came', async () => {
      const init = await new Promise<string>((resolve, reject) =>
        request(
          `${s.url}/subscriptions/init`,
          { method: 'POST', rejectUnauthorized: false, headers: { 'API-KEY': 'sandbox-demo-key', 'Content-Type': 'application/json' } },
          (res) => {
            let text = ''
            res.on('data', (d) => (text += d))
            res.on('end', () => resolve(text))
          },
        )
          .on('error', reject)
          .end(JSON.stringify({ msisdn: '359881234001', service_code: 'STREAMPLUS', country_code: 'bg' })),
      )
      expect(JSON.parse(init).payload.redirect_url).toMatch(new RegExp(`^${s.url.replace(/\./g, '\\.')}/consent/[0-9a-f-]{36}$`))
    })

    it('fails with exit 1 on a busy port, naming it', async () => {
      const busy = await dcb(['serve', '--in-memory', '--https', '--port', new URL(s.url).port])
      expect(busy.code).toBe(1)
      expect(busy.stderr).toBe(`dcb: port ${new URL(s.url).port} on 127.0.0.1 is already in use; stop what runs there or pick another --port\n`)
    })

    it('exits 0 on SIGTERM', async () => {
      expect(await s.stop()).toBe(0)
    })
  })

  it('--https: the console sign-in cookie is Secure (a browser never sends it in clear)', async () => {
    const s = await serve(['--in-memory', '--https', '--admin-token', 'sesame'])
    try {
      const cookie = await new Promise<string | undefined>((resolve, reject) =>
        request(`${s.url}/_console/login`, { method: 'POST', rejectUnauthorized: false, headers: { 'Content-Type': 'application/json' } }, (res) => {
          res.resume()
          resolve(res.statusCode === 200 ? res.headers['set-cookie']?.[0] : `status ${res.statusCode}`)
        })
          .on('error', reject)
          .end(JSON.stringify({ token: 'sesame' })),
      )
      expect(cookie).toMatch(/^dcb_console=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Secure$/)
    } finally {
      expect(await s.stop()).toBe(0)
    }
  })

  it('--open opens the console ($BROWSER gets the URL)', async () => {
    const seen = join(tmp.dir, 'opened.txt')
    const browser = join(tmp.dir, 'browser.sh')
    // Written whole, then renamed into place: the file shows up with its content.
    writeFileSync(browser, `#!/bin/sh\necho "$1" > '${seen}.part' && mv '${seen}.part' '${seen}'\n`)
    chmodSync(browser, 0o755)
    const watcher = watch(tmp.dir)
    const shown = new Promise<void>((resolve) => watcher.on('change', (_, name) => name === basename(seen) && existsSync(seen) && resolve()))
    const s = await serve(['--in-memory', '--open'], { env: { BROWSER: browser } })
    try {
      await shown
      const opened = readFileSync(seen, 'utf8')
      expect(opened).toBe(`${s.url}/\n`)
      expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:/)
    } finally {
      watcher.close()
      await s.stop()
    }
  })

  describe('--lan', () => {
    let s: Served
    let lan: string
    beforeAll(async () => {
      lan = lanAddress()
      s = await serve(['--in-memory', '--lan'])
      // The QR code comes last, after the banner, with the URL it holds.
      await outputShows(s.child, s.output, /\[QR code\]/)
    })
    afterAll(async () => {
      await s.stop()
    })

    it('listens on the LAN, printing its URL with a QR code of it', async () => {
      const out = s.output()
      const port = new URL(s.url).port
      expect(s.url).toBe(`http://127.0.0.1:${port}`)
      expect(out).toContain(`LAN:      http://${lan}:${port}`)
      expect(out).toMatch(/[▀▄█]{10}/)
      expect(out).toMatch(new RegExp(`➜ Network: +http://${lan.replaceAll('.', '\\.')}:${port}/ \\[QR code\\]`))
      // Every address printed is one a client can open: not listhen's `Local: http://0.0.0.0:PORT/`.
      expect(out).not.toMatch(/\/\/0\.0\.0\.0|Local:/)
    })

    it('prints an admin token, which the control API then needs', async () => {
      const port = new URL(s.url).port
      const token = /admin: +token (\S+)/.exec(s.output())![1]!
      const health = (headers: Record<string, string> = {}) => fetch(`http://${lan}:${port}/_sandbox/health`, { headers }).then((r) => r.status)
      expect(await health()).toBe(403)
      expect(await health({ authorization: `Bearer ${token}` })).toBe(200)
    })

    it('is refused with --host 127.0.0.1 (exit 2)', async () => {
      const refused = await dcb(['serve', '--in-memory', '--lan', '--host', '127.0.0.1'])
      expect(refused.code).toBe(2)
    })
  })
})

describe('the server listhen makes keeps the guards of our own', () => {
  it('a malformed request gets the 400 envelope, with --open as without', async () => {
    const sendRaw = (url: string, text: string) =>
      new Promise<string>((resolve, reject) => {
        const s = connect(Number(new URL(url).port), '127.0.0.1')
        let out = ''
        s.on('data', (d) => (out += d))
        s.on('close', () => resolve(out))
        s.on('error', reject)
        s.write(text)
      })
    for (const args of [[], ['--open']]) {
      const s = await serve(['--in-memory', ...args], { env: { BROWSER: 'true' } })
      try {
        const bad = await sendRaw(s.url, 'NOT HTTP AT ALL\r\n\r\n')
        expect(bad, args.join(' ')).toMatch(/^HTTP\/1\.1 400 /)
        expect(JSON.parse(bad.slice(bad.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 'FAIL', message: 'BAD_REQUEST', status_code: 400 })
      } finally {
        await s.stop()
      }
    }
  })
})

describe('start-up stays light', () => {
  it('listhen is loaded by serve only with --https, --open or --lan', async () => {
    const plain = await serve(['--in-memory'])
    try {
      const port = new URL(plain.url).port
      for (const args of [['--help'], ['status', 'x'], ['serve', '--in-memory', '--port', port]]) {
        const trace = join(tmp.dir, `${args[0]}.txt`)
        await dcb(args, { env: { DCB_BASE_URL: plain.url, DCB_TRACE_FILE: trace, NODE_OPTIONS: `--import=${join(import.meta.dirname, 'trace-loads.mjs')}` } })
        expect(readFileSync(trace, 'utf8')).not.toContain('listhen')
      }
      const trace = join(tmp.dir, 'https.txt')
      const https = await serve(['--in-memory', '--https'], {
        env: { DCB_TRACE_FILE: trace, NODE_OPTIONS: `--import=${join(import.meta.dirname, 'trace-loads.mjs')}` },
      })
      await https.stop()
      expect(readFileSync(trace, 'utf8')).toContain('/listhen/')
    } finally {
      await plain.stop()
    }
  })
})

describe('a store URL that is not one', () => {
  it('is refused naming where it came from: --store, or DCB_STORE (exit 2, nothing connected)', async () => {
    const flag = await dcb(['serve', '--store', 'mysql://root@127.0.0.1/db'], { cwd: tmp.dir })
    expect(flag.code).toBe(2)
    expect(flag.stderr).toBe('dcb: --store takes a PostgreSQL URL (postgres:// or postgresql://), not mysql://\n')
    const env = await dcb(['serve'], { cwd: tmp.dir, env: { DCB_STORE: 'mysql://root:secret@127.0.0.1/db' } })
    expect(env.code).toBe(2)
    expect(env.stderr).toBe('dcb: DCB_STORE takes a PostgreSQL URL (postgres:// or postgresql://), not mysql://\n')
    const noHost = await dcb(['serve'], { cwd: tmp.dir, env: { DCB_STORE: 'postgres://' } })
    expect(noHost.stderr).toBe('dcb: DCB_STORE "postgres://" names no host: use postgres://USER:PASSWORD@HOST:PORT/DATABASE\n')
  })
})

describe('--in-memory with --data', () => {
  it('is refused naming both (exit 2, nothing written): one of them would be dropped without a word', async () => {
    const r = await dcb(['serve', '--in-memory', '--data', join(tmp.dir, 'kept.json'), '--port', '0'], { cwd: tmp.dir })
    expect([r.code, r.stderr]).toEqual([2, 'dcb: --in-memory keeps nothing on disk: it cannot go with --data (drop one of them)\n'])
    expect(readdirSync(tmp.dir)).toEqual([])
  })
})
