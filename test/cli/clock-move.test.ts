/**
 * Issue 14 through the real binary: a long clock move (an hourly subscription moved to the year
 * 9999, some 70 million renewals) does not freeze the server. Health answers while it runs, SIGTERM
 * stops it at a batch boundary and exits cleanly, and a restart finds the clock at that boundary
 * with every renewal up to it run exactly once.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { serve, type Served } from './run.js'

// One data directory for the file: its tests are the steps of one move.
const tmp = tempDir()
afterAll(() => tmp.cleanup())

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const post = (url: string, body: unknown, signal?: AbortSignal) => fetch(url, { method: 'POST', headers: H, body: JSON.stringify(body), signal })
const HOUR = 3600_000

/** An hourly subscription (QUICKTEST) through init, the OTP and verify; answers its id. */
async function subscribeHourly(s: Served): Promise<string> {
  const init = (await (await post(`${s.url}/subscriptions/init`, { msisdn: '60123456001', service_code: 'QUICKTEST', country_code: 'my' })).json()) as any
  const otp = (await (await fetch(`${s.url}/_sandbox/otp?msisdn=60123456001`)).json()) as any
  const v = (await (await post(`${s.url}/subscriptions/verify`, { verif_request_id: init.payload.verif_request_id, otp: otp.otp })).json()) as any
  expect(v.status).toBe('SUCCESS')
  return v.payload.subscription_id
}

/** `p`, which must settle while `running` has not: a rejection naming `what` when `running` settles first. */
function during<T>(running: Promise<unknown>, what: string, p: Promise<T>): Promise<T> {
  const ended = running.then(() => Promise.reject(new Error(`${what}: the move ended first`)))
  ended.catch(() => {})
  return Promise.race([p, ended])
}

const parse = (t: string) => Date.parse(t.slice(0, 23) + 'Z')

describe('a long clock move, stopped by SIGTERM, then a restart', () => {
  // The tests are the steps of one flow on one data file: they run in order, each after the last.
  const data = join(tmp.dir, 'sandbox.json')
  let s: Served
  let again: Served | undefined
  let id: string
  let move: Promise<{ status: number; body: any }>
  let seen: { now: string } | undefined
  let clock: any
  let at: number
  let sub: any
  let subscribed: number
  let renewals: number
  beforeAll(async () => {
    s = await serve(['--data', data, '--clock', '2026-01-01T00:00:00'])
    id = await subscribeHourly(s)
  })
  afterAll(async () => {
    await s?.stop('SIGKILL')
    await again?.stop('SIGKILL')
  })

  it('leaves health answering while it runs', async () => {
    // Some 70 million hourly renewals: minutes of work for the engine.
    move = post(`${s.url}/_sandbox/clock/set`, { to: '9999-12-01T00:00:00' }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as any }),
      (e: Error) => ({ status: 0, body: { error: e.message } }),
    )
    // While it runs, health answers and the clock reads at a batch boundary (reads do not wait);
    // asked until the move is seen under way (its first batch committed).
    while (!seen) {
      const health = await during(move, 'GET /_sandbox/health', fetch(`${s.url}/_sandbox/health`))
      expect(health.status).toBe(200)
      expect(((await health.json()) as any).ok).toBe(true)
      const clock = (await (await during(move, 'GET /_sandbox/clock', fetch(`${s.url}/_sandbox/clock`))).json()) as any
      if (parse(clock.now) > parse('2026-01-01T00:00:00')) seen = clock
    }
    expect(parse(seen.now)).toBeLessThan(parse('9999-12-01T00:00:00'))
  }, 60_000)

  it('exits 0 on SIGTERM, leaving no lock', async () => {
    // The move stops at its next batch boundary (its call answers 503, below) rather than running to its end (minutes).
    expect(await s.stop('SIGTERM')).toBe(0)
    expect(existsSync(`${data}.lock`)).toBe(false)
  })

  it("answers the move's call 503, saying where the move stopped", async () => {
    const answered = await move
    expect(answered.status).toBe(503)
    expect(answered.body.error).toBe('SHUTTING_DOWN')
    expect(answered.body.message).toMatch(/^the server is shutting down: the clock move stopped at \d{4}-/)
  })

  it('after a restart, the clock stays where the move stopped, not resumed', async () => {
    again = await serve(['--data', data])
    clock = (await (await fetch(`${again.url}/_sandbox/clock`)).json()) as any
    at = parse(clock.now)
    // Between the start and the target.
    expect(at).toBeGreaterThanOrEqual(parse(seen!.now))
    expect(at).toBeLessThan(parse('9999-12-01T00:00:00'))
    expect(clock.frozen).toBe(true)
  })

  it('after a restart, every hourly renewal up to the clock has run once, none after it', async () => {
    sub = (await (await fetch(`${again!.url}/_sandbox/subscriptions/${id}`)).json()) as any
    subscribed = parse(sub.subscribed_dt)
    // Plus the first charge.
    renewals = Math.floor((at - subscribed) / HOUR)
    expect(sub.charge_count).toBe(renewals + 1)
    expect(parse(sub.expiry_dt)).toBe(subscribed + (renewals + 1) * HOUR)
    expect(parse(sub.expiry_dt)).toBeGreaterThan(at)
    expect(parse(clock.next_event_dt)).toBe(parse(sub.expiry_dt))
  })

  it('after a restart, the kept history is consecutive hours, the last at or before the clock', () => {
    const times = sub.charges.map((c: { at: string }) => parse(c.at))
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBe(HOUR)
    expect(times.at(-1)).toBe(subscribed + renewals * HOUR)
    expect(sub.charges.every((c: { outcome: string }) => c.outcome === 'SUCCESS')).toBe(true)
  })
})
