/**
 * Issue 41 through the real binary: a clock move that takes long. Its summary's counts add up and its
 * last lines are the move's last events (past the answer's size bound too); on a terminal a line
 * says where the move is; the client does not give up on it at the default time-out (--timeout still
 * works); and `dcb clock` during the move shows the time reached, with the next event after it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { BIN, dcb, serve, type Served } from './run.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: H, body: JSON.stringify(body) })
const parse = (t: string) => Date.parse(t.slice(0, 23) + 'Z')
const HOUR = 3600_000

/** A QUICKTEST (hourly) subscription through init, the OTP and verify; answers its id. */
async function subscribeHourly(s: Served, msisdn: string): Promise<string> {
  const init = (await (await post(`${s.url}/subscriptions/init`, { msisdn, service_code: 'QUICKTEST', country_code: 'my' })).json()) as any
  const otp = (await (await fetch(`${s.url}/_sandbox/otp?msisdn=${msisdn}`)).json()) as any
  const v = (await (await post(`${s.url}/subscriptions/verify`, { verif_request_id: init.payload.verif_request_id, otp: otp.otp })).json()) as any
  expect(v.status).toBe('SUCCESS')
  return v.payload.subscription_id
}

interface Running {
  child: ChildProcess
  output: () => string
  code: Promise<number | null>
}

/** Starts a process, collecting stdout and stderr together as they come. */
function start(cmd: string, args: string[], env: Record<string, string | undefined>): Running {
  const child = spawn(cmd, args, { env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, CI: undefined, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const code = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)))
  return { child, output: () => out, code }
}

/** Resolves once `seen(output)` holds; rejects if the process ends first. */
function until(r: Running, seen: (out: string) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (seen(r.output())) {
        r.child.stdout!.off('data', check)
        r.child.stderr!.off('data', check)
        resolve()
      }
    }
    r.child.stdout!.on('data', check)
    r.child.stderr!.on('data', check)
    r.code.then(() => (seen(r.output()) ? resolve() : reject(new Error(`ended before it showed what was waited for:\n${r.output()}`))))
    check()
  })
}

/** The time-outs of one path a thousand times shorter (see trace-timeouts.mjs). */
const HOOK = { NODE_OPTIONS: `--import=${join(import.meta.dirname, 'trace-timeouts.mjs')}`, DCB_TEST_TIMEOUT_SCALE: '0.001' }

const PROGRESS = /dcb: moving the clock: reached (\S+) of (\S+), (\d+) events run \(\d+ s\)/g
const progressLines = (out: string) => [...out.matchAll(PROGRESS)]

describe('a long clock move through dcb', () => {
  it('past the size bound of its answer, the summary counts every event by kind, adding up to the total, and shows the last events of the move', async () => {
    const s = await serve(['--in-memory', '--clock', '2026-01-01T00:00:00'])
    try {
      const renewing = await subscribeHourly(s, '60123456001')
      // Ending 301: its renewal fails (INSUFFICIENT_FUNDS), then its retries: other kinds beside `renewed`.
      const failing = await subscribeHourly(s, '60123456301')
      // 40 years of hourly renewals: some 350,000 events, more than the answer lists (64 MiB, some 300,000).
      const r = await dcb(['clock', 'set', '2066-01-01T00:00:00'], { env: { DCB_BASE_URL: s.url }, timeoutMs: 120_000 })
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      const lines = r.stdout.split('\n')
      const total = Number(/^\S+ {2}(\d+) events$/.exec(lines[0]!)![1])
      const rows = lines
        .slice(
          1,
          lines.findIndex((l) => /first 5:/.test(l)),
        )
        .map((l) => /^ +(\d+) {2}(.*)$/.exec(l)!)
      const inAll = rows.pop()!
      expect(inAll[2]).toMatch(/^in all \((\d+) of them not listed in the answer, which lists the first (\d+) \(64 MiB\)\)$/)
      const [, omitted, listed] = /\((\d+) of them not listed in the answer, which lists the first (\d+)/.exec(inAll[2]!)!
      expect(Number(omitted)).toBeGreaterThan(0)
      expect(Number(omitted) + Number(listed)).toBe(total)
      expect(Number(inAll[1])).toBe(total)
      // Every kind is counted, listed or not: the rows add up to the total.
      expect(rows.reduce((n, row) => n + Number(row[1]), 0)).toBe(total)
      const kinds = Object.fromEntries(rows.map((row) => [row[2], Number(row[1])]))
      const sub = (await (await fetch(`${s.url}/_sandbox/subscriptions/${renewing}`)).json()) as any
      expect(kinds.renewed).toBe(sub.charge_count - 1)
      expect(kinds['renewal_failed INSUFFICIENT_FUNDS']).toBe(1)
      const failed = (await (await fetch(`${s.url}/_sandbox/subscriptions/${failing}`)).json()) as any
      const retries = failed.charges.filter((c: { kind: string }) => c.kind === 'retry').length
      expect(retries).toBeGreaterThan(0)
      expect(kinds['retry_failed INSUFFICIENT_FUNDS']).toBe(retries)
      // The last 5 are the move's last renewals (the last hours up to the clock), not the last listed.
      const last = lines.slice(lines.findIndex((l) => /last 5:/.test(l)) + 1, -2)
      expect(last).toHaveLength(5)
      const lastAt = parse(sub.charges.at(-1).at)
      expect(lastAt).toBe(parse('2066-01-01T00:00:00'))
      expect(last.map((l) => parse(l.trim().split(' ')[0]!))).toEqual([4, 3, 2, 1, 0].map((k) => lastAt - k * HOUR))
      expect(last.every((l) => l.includes(`renewed          ${renewing}`))).toBe(true)
      expect(lines).toContain(`  … ${total - 10} more …`)
    } finally {
      await s.stop('SIGKILL')
    }
  }, 120_000)

  it('shows its progress on a terminal; the client waits past the default time-out (--timeout still gives up); dcb clock meanwhile shows the time reached, the next event after it', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    // Monthly renewals dense in time (10,000 within a minute), on a running clock.
    const seeded = await dcb(['seed', '--subscriptions', '10000', '--data', data, '--spread', 'PT1M'], { timeoutMs: 60_000 })
    expect(seeded.code).toBe(0)
    const s = await serve(['--data', data])
    const env = { DCB_BASE_URL: s.url }
    // Scaled a thousandfold: the old default (30 s) would give up after 30 ms, --timeout 1 after 1 ms.
    const scaled = { ...env, ...HOOK, DCB_TEST_TIMEOUT_PATH: '/_sandbox/clock/advance' }
    const onTty = start('python3', [join(import.meta.dirname, 'pty_stream.py'), '--', process.execPath, BIN, 'clock', 'advance', 'P100Y'], env)
    let queued: Running | undefined
    try {
      // A century of 10,000 monthly renewals (12 million events): minutes of work. The line is rewritten as it goes.
      await until(onTty, (out) => progressLines(out).length >= 2 && new Set(progressLines(out).map((m) => m[3])).size >= 2)
      const [first] = progressLines(onTty.output())
      // Where it goes: a century on from the running clock's start; the time reached is on the way.
      expect(new Date(parse(first![2]!)).getUTCFullYear()).toBe(new Date().getUTCFullYear() + 100)
      expect(parse(first![1]!)).toBeLessThan(parse(first![2]!))

      // Mid-move, the clock reads the time the move reached, and the next event is after it.
      for (let i = 0; i < 3; i++) {
        const shown = await dcb(['clock', '--json'], { env })
        const view = JSON.parse(shown.stdout)
        expect(view.move.to).toBe(first![2])
        expect(view.move.events_run).toBeGreaterThan(0)
        expect(parse(view.next_event_dt)).toBeGreaterThanOrEqual(parse(view.now))
      }
      const line = await dcb(['clock'], { env })
      expect(line.stdout).toMatch(
        new RegExp(`^\\S+ {2}moving to ${first![2]!.replace(/\./g, '\\.')}: reached \\S+, \\d+ events run so far {2}next event \\S+\\n$`),
      )

      // Queued behind it, a move's call waits far longer than the (scaled) default time-out.
      queued = start(process.execPath, [BIN, 'clock', 'advance', 'P1D'], scaled)
      await until(queued, (out) => out.includes('trace: sent POST /_sandbox/clock/advance'))
      const seen = progressLines(onTty.output()).length
      // Two more progress lines (half a second apart): a second, a thousand times the scaled default.
      await until(onTty, (out) => progressLines(out).length >= seen + 2)
      expect(queued.child.exitCode).toBe(null)
      // With --timeout, it gives up, and says the move goes on.
      const impatient = await dcb(['clock', 'advance', 'P1D', '--timeout', '1'], { env: scaled })
      expect(impatient.code).toBe(3)
      expect(impatient.stderr).toMatch(/dcb: cannot reach .*: no answer within 1 s; the clock move goes on in the server \(dcb clock shows where it is\)\n$/)

      // The server stops both moves at a batch boundary: their calls hear why, no time-out.
      expect(await s.stop('SIGTERM')).toBe(0)
      expect(await onTty.code).toBe(1)
      expect(await queued.code).toBe(1)
      expect(queued.output()).toMatch(/dcb: SHUTTING_DOWN: the server is shutting down: the clock move stopped at \d{4}-/)
      // The progress line is wiped before the answer's line.
      expect(onTty.output()).toMatch(/events run \(\d+ s\)\r\x1b\[Kdcb: SHUTTING_DOWN: the server is shutting down/)
    } finally {
      onTty.child.kill('SIGKILL')
      queued?.child.kill('SIGKILL')
      await s.stop('SIGKILL')
    }
  }, 120_000)

  it("goes on waiting when a read of the clock is cut (a server shutting down stops listening first): the move's own answer ends it", async () => {
    // Holds the move; cuts the first read of the clock, unanswered; at the second read answers the move 503.
    let move: ServerResponse | undefined
    let reads = 0
    const server = createServer((req, res) => {
      if (req.method === 'POST') return void (move = res)
      if (++reads === 1) return void res.socket?.destroy()
      move
        ?.writeHead(503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'SHUTTING_DOWN', message: 'the server is shutting down: the clock move stopped at 2026-01-01' }))
      res.socket?.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const r = await dcb(['clock', 'advance', 'P1D'], { env: { DCB_BASE_URL: url } })
      expect(reads).toBe(2)
      expect(r.stderr).toBe('dcb: SHUTTING_DOWN: the server is shutting down: the clock move stopped at 2026-01-01\n')
      expect(r.code).toBe(1)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('on a terminal, keeps the last position shown when a read of the clock is cut, until the answer wipes the line', async () => {
    // Holds the move; answers the first read with the move on, cuts the second, answers the move 503 at the third.
    const view = { now: '2040-01-01T00:00:00.000', frozen: false, offset_ms: 0, next_event_dt: null, move: { to: '2126-01-01T00:00:00.000', events_run: 7 } }
    let move: ServerResponse | undefined
    let reads = 0
    const server = createServer((req, res) => {
      if (req.method === 'POST') return void (move = res)
      if (++reads === 1) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(view))
      if (reads === 2) return void res.socket?.destroy()
      move
        ?.writeHead(503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'SHUTTING_DOWN', message: 'the server is shutting down: the clock move stopped at 2040-01-01' }))
      res.socket?.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const onTty = start('python3', [join(import.meta.dirname, 'pty_stream.py'), '--', process.execPath, BIN, 'clock', 'advance', 'P100Y'], {
      DCB_BASE_URL: url,
    })
    try {
      expect(await onTty.code).toBe(1)
      expect(reads).toBeGreaterThanOrEqual(3)
      const out = onTty.output()
      // Both lines before the answer say where the move was last seen: the cut read does not blank it.
      expect(progressLines(out).length).toBeGreaterThanOrEqual(2)
      expect(out).not.toContain('under way')
      expect(out).toMatch(/reached 2040-01-01T00:00:00\.000 of 2126-01-01T00:00:00\.000, 7 events run \(\d+ s\)\r\x1b\[Kdcb: SHUTTING_DOWN: /)
    } finally {
      onTty.child.kill('SIGKILL')
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('does not wait forever on a server that answers nothing: the clock it reads meanwhile gets no answer either (exit 3)', async () => {
    // Takes every request and answers none.
    const held: ServerResponse[] = []
    const server = createServer((_req, res) => void held.push(res))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      // The read's 30 s time-out shortened a thousandfold; the move's call has none.
      const r = await dcb(['clock', 'advance', 'P1D'], { env: { DCB_BASE_URL: url, ...HOOK, DCB_TEST_TIMEOUT_PATH: '/_sandbox/clock' } })
      expect(r.code).toBe(3)
      expect(r.stderr).toMatch(/dcb: cannot reach .*: no answer within 30 s \(asked where the clock move is, while waiting for its answer\)\n$/)
      expect(r.stderr).toContain('trace: sent POST /_sandbox/clock/advance')
    } finally {
      for (const res of held) res.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
