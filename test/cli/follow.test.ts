/** `dcb logs -f` through the real binary: it follows the live stream of a real server. */
import { spawn, type ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { startClient, type Client } from '../helpers.js'
import { BIN } from './run.js'

interface Follower {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Resolves once the text shows on stdout (or stderr; `times`: on that many lines), rejects after `ms`. */
  waitFor(text: string | RegExp, ms: number, on?: 'stdout' | 'stderr', times?: number): Promise<void>
  exited: Promise<number | null>
}

const running = new Set<ChildProcess>()
const servers = new Set<Client>()
afterEach(async () => {
  for (const child of running) child.kill('SIGKILL')
  running.clear()
  for (const s of servers) await s.close()
  servers.clear()
})

async function server(port = 0): Promise<Client> {
  const c = await startClient({ port })
  servers.add(c)
  return c
}

function follow(url: string, args: string[] = []): Follower {
  const child = spawn(process.execPath, [BIN, 'logs', '-f', ...args], {
    env: { ...process.env, DCB_BASE_URL: url, DCB_SESSION: undefined, NO_COLOR: '1', FORCE_COLOR: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d) => (stdout += d))
  child.stderr!.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const waitFor = async (text: string | RegExp, ms: number, on: 'stdout' | 'stderr' = 'stdout', times = 1) => {
    const seen = () => {
      const lines = (on === 'stdout' ? stdout : stderr).split('\n')
      return lines.filter((l) => (typeof text === 'string' ? l.includes(text) : text.test(l))).length >= times
    }
    const deadline = Date.now() + ms
    while (!seen()) {
      if (Date.now() > deadline) throw new Error(`not seen within ${ms} ms: ${text}\nstdout: ${stdout}\nstderr: ${stderr}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  return { child, stdout: () => stdout, stderr: () => stderr, waitFor, exited }
}

const status = (c: Client, id: string, headers: Record<string, string> = {}) => c.api('/subscriptions/status', { subscription_id: id }, { headers })

describe('dcb logs -f follows the live stream', () => {
  it('shows a merchant call made after it started within 2 s, oldest first; Ctrl-C exits 0', async () => {
    const c = await server()
    await status(c, 'before')
    const f = follow(c.url)
    await f.waitFor('POST /subscriptions/status 404 SUBSCRIPTION_NOT_FOUND', 10_000)
    await status(c, 'first')
    await status(c, 'second')
    await f.waitFor('SUBSCRIPTION_NOT_FOUND', 2000, 'stdout', 3)
    const lines = f
      .stdout()
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('    why:'))
    expect(lines).toHaveLength(3)
    expect(lines.every((l) => /POST \/subscriptions\/status 404 SUBSCRIPTION_NOT_FOUND demo/.test(l))).toBe(true)
    const times = lines.map((l) => l.split(' ')[0])
    expect([...times].sort()).toEqual(times)
    f.child.kill('SIGINT')
    expect(await f.exited).toBe(0)
    expect(f.stderr()).toBe('')
  })

  it('--msisdn --json: only that MSISDN, one JSON entry a line, oldest first', async () => {
    const c = await server()
    const f = follow(c.url, ['--msisdn', '60123456001', '--json'])
    await new Promise((r) => setTimeout(r, 300))
    for (const msisdn of ['60123456002', '60123456001', '60123456002', '60123456001'])
      await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
    await f.waitFor('"msisdn":"60123456001"', 5000, 'stdout', 2)
    await status(c, 'later')
    await new Promise((r) => setTimeout(r, 700))
    const entries = f
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(entries.map((e) => e.msisdn)).toEqual(['60123456001', '60123456001'])
    expect(entries[0].id).toBeLessThan(entries[1].id)
    expect(entries[0].path).toBe('/subscriptions/init')
  })

  it('prints every entry once, in order, when a batch left some out (skipped)', async () => {
    const c = await server()
    const f = follow(c.url, ['--json'])
    await new Promise((r) => setTimeout(r, 300))
    // More than a batch carries (20) within one batch: the stream sends the newest and counts the rest.
    await Promise.all(Array.from({ length: 45 }, (_, i) => status(c, `gap-${i}`)))
    await f.waitFor('SUBSCRIPTION_NOT_FOUND', 5000, 'stdout', 45)
    await new Promise((r) => setTimeout(r, 500))
    const ids = f
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id)
    expect(ids).toEqual(Array.from({ length: 45 }, (_, i) => i + 1))
  })

  it("--session follows that session's stream only", async () => {
    const c = await server()
    const f = follow(c.url, ['--session', 'team-a', '--json'])
    await new Promise((r) => setTimeout(r, 300))
    await status(c, 'in-default')
    await status(c, 'in-team-a', { 'x-dcb-session': 'team-a' })
    await f.waitFor('SUBSCRIPTION_NOT_FOUND', 5000)
    await status(c, 'in-default-again')
    await new Promise((r) => setTimeout(r, 700))
    expect(
      f
        .stdout()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).request.subscription_id),
    ).toEqual(['in-team-a'])
  })

  it('waits for a server that went away (progress on stderr) and follows it again', async () => {
    const c = await server()
    const port = Number(new URL(c.url).port)
    const f = follow(c.url)
    await new Promise((r) => setTimeout(r, 300))
    await status(c, 'one')
    await f.waitFor('SUBSCRIPTION_NOT_FOUND', 5000)
    await c.close()
    servers.delete(c)
    await f.waitFor(/lost the stream from .*; reconnecting/, 5000, 'stderr')
    const again = await server(port)
    await f.waitFor(/reconnected to /, 5000, 'stderr')
    await status(again, 'two')
    await again.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    await f.waitFor('POST /subscriptions/init 200 SUCCESS', 5000)
    expect(f.stdout().match(/SUBSCRIPTION_NOT_FOUND/g)).toHaveLength(2)
    expect(f.stderr()).toMatch(/started a new request journal/)
    f.child.kill()
    expect(await f.exited).toBe(0)
  })
})
