/** `dcb logs -f` through the real binary: it follows the live stream of a real server. */
import { spawn, type ChildProcess } from 'node:child_process'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { startClient, type Client } from '../helpers.js'
import { nextLiveStream, outputShows } from '../wait.js'
import { BIN } from './run.js'

interface Follower {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Resolves once the text shows on stdout (or stderr; `times`: on that many lines). */
  waitFor(text: string | RegExp, on?: 'stdout' | 'stderr', times?: number): Promise<void>
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
  const waitFor = (text: string | RegExp, on: 'stdout' | 'stderr' = 'stdout', times = 1) =>
    outputShows(child, () => (on === 'stdout' ? stdout : stderr), text, times).catch((e: Error) => {
      throw new Error(`${e.message}\nstderr: ${stderr}`)
    })
  return { child, stdout: () => stdout, stderr: () => stderr, waitFor, exited }
}

const status = (c: Client, id: string, headers: Record<string, string> = {}) => c.api('/subscriptions/status', { subscription_id: id }, { headers })

describe('dcb logs -f follows the live stream', () => {
  it('shows a merchant call made after it started, oldest first', async () => {
    const c = await server()
    await status(c, 'before')
    const connected = nextLiveStream(c.sandbox.server)
    const f = follow(c.url)
    await f.waitFor('POST /subscriptions/status 404 SUBSCRIPTION_NOT_FOUND')
    await connected
    await status(c, 'first')
    await status(c, 'second')
    await f.waitFor('SUBSCRIPTION_NOT_FOUND', 'stdout', 3)
    const lines = f
      .stdout()
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('    why:'))
    expect(lines).toHaveLength(3)
    expect(lines.every((l) => /POST \/subscriptions\/status 404 SUBSCRIPTION_NOT_FOUND demo/.test(l))).toBe(true)
    const times = lines.map((l) => l.split(' ')[0])
    expect([...times].sort()).toEqual(times)
  })

  it('exits 0 on Ctrl-C, with nothing on stderr', async () => {
    const c = await server()
    const connected = nextLiveStream(c.sandbox.server)
    const f = follow(c.url)
    await connected
    // Stopped while following: once a call has shown.
    await status(c, 'shown')
    await f.waitFor('POST /subscriptions/status 404 SUBSCRIPTION_NOT_FOUND')
    f.child.kill('SIGINT')
    expect(await f.exited).toBe(0)
    expect(f.stderr()).toBe('')
  })

  it('--msisdn --json: only that MSISDN, one JSON entry a line, oldest first', async () => {
    const c = await server()
    const connected = nextLiveStream(c.sandbox.server)
    const f = follow(c.url, ['--msisdn', '60123456001', '--json'])
    await connected
    const init = (msisdn: string) => c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
    for (const msisdn of ['60123456002', '60123456001', '60123456002', '60123456001']) await init(msisdn)
    await f.waitFor('"msisdn":"60123456001"', 'stdout', 2)
    await status(c, 'later')
    // Entries print in order: once a later one of that MSISDN shows, 'later' would have shown before it.
    await init('60123456001')
    await f.waitFor('"msisdn":"60123456001"', 'stdout', 3)
    const entries = f
      .stdout()
      .trim()
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l))
    expect(entries.map((e) => e.msisdn)).toEqual(['60123456001', '60123456001'])
    expect(entries[0].id).toBeLessThan(entries[1].id)
    expect(entries[0].path).toBe('/subscriptions/init')
  })

  it('prints every entry once, in order, when a batch left some out (skipped)', async () => {
    const c = await server()
    const connected = nextLiveStream(c.sandbox.server)
    const f = follow(c.url, ['--json'])
    await connected
    // More than a batch carries (20) within one batch: the stream sends the newest and counts the rest.
    await Promise.all(Array.from({ length: 45 }, (_, i) => status(c, `gap-${i}`)))
    await f.waitFor('SUBSCRIPTION_NOT_FOUND', 'stdout', 45)
    // One more, printed after anything the burst could still print twice.
    await status(c, 'last')
    await f.waitFor('"subscription_id":"last"')
    const ids = f
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id)
    expect(ids.pop()).toBe(46)
    expect(ids).toEqual(Array.from({ length: 45 }, (_, i) => i + 1))
  })

  it('fills a gap whole while requests keep coming (newer entries do not push older ones out of the catch-up)', async () => {
    const c = await server()
    // The server handles the first request to each of these paths only after `before` ran.
    const handlers = c.sandbox.server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[]
    c.sandbox.server.removeAllListeners('request')
    const held = new Map<string, () => Promise<unknown>>()
    c.sandbox.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const path = [...held.keys()].find((p) => req.url?.startsWith(p))
      const before = path === undefined ? undefined : held.get(path)
      if (path !== undefined) held.delete(path)
      void (before ?? (async () => {}))().then(() => handlers.forEach((h) => h(req, res)))
    })
    const burst = (from: number, n: number) => Promise.all(Array.from({ length: n }, (_, i) => status(c, `gap-${from + i}`)))
    // 30 entries before the stream's hello (it names 30 as the newest), 5 more before the catch-up is answered.
    held.set('/_sandbox/events', () => burst(0, 30))
    held.set('/_sandbox/requests?since=0&limit=30', () => burst(30, 5))
    const f = follow(c.url, ['--json'])
    // A first line: the catch-up was answered, after both bursts.
    await f.waitFor('SUBSCRIPTION_NOT_FOUND')
    await status(c, 'last')
    await f.waitFor('"subscription_id":"last"')
    const ids = f
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id)
    expect(ids).toEqual(Array.from({ length: 36 }, (_, i) => i + 1))
  })

  it("--session follows that session's stream only", async () => {
    const c = await server()
    const connected = nextLiveStream(c.sandbox.server)
    const f = follow(c.url, ['--session', 'team-a', '--json'])
    await connected
    await status(c, 'in-default')
    await status(c, 'in-team-a', { 'x-dcb-session': 'team-a' })
    await f.waitFor('SUBSCRIPTION_NOT_FOUND')
    await status(c, 'in-default-again')
    // A later call in team-a shows after anything before it would have.
    await status(c, 'team-a-last', { 'x-dcb-session': 'team-a' })
    await f.waitFor('team-a-last')
    expect(
      f
        .stdout()
        .trim()
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l).request.subscription_id),
    ).toEqual(['in-team-a'])
  })

  it('follows a server that went away once it is back, waiting with progress on stderr', async () => {
    const c = await server()
    const port = Number(new URL(c.url).port)
    const connected = nextLiveStream(c.sandbox.server)
    const f = follow(c.url)
    await connected
    await status(c, 'one')
    await f.waitFor('SUBSCRIPTION_NOT_FOUND')
    await c.close()
    servers.delete(c)
    await f.waitFor(/lost the stream from .*; reconnecting/, 'stderr')
    const again = await server(port)
    await f.waitFor(/reconnected to /, 'stderr')
    await status(again, 'two')
    await again.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    await f.waitFor('POST /subscriptions/init 200 SUCCESS')
    expect(f.stdout().match(/SUBSCRIPTION_NOT_FOUND/g)).toHaveLength(2)
    expect(f.stderr()).toMatch(/started a new request log/)
    f.child.kill()
    expect(await f.exited).toBe(0)
  })
})
