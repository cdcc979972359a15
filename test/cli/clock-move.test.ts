/**
 * Issue 14 through the real binary: a long clock move (an hourly subscription moved to the year
 * 9999, some 70 million renewals) does not freeze the server. Health answers while it runs, SIGTERM
 * stops it at a batch boundary and exits cleanly, and a restart finds the clock at that boundary
 * with every renewal up to it run exactly once.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { serve, type Served } from './run.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

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

/** A hang detector: the promise, or a rejection naming what did not happen within `ms`. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)))
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

const parse = (t: string) => Date.parse(t.slice(0, 23) + 'Z')

describe('a long clock move', () => {
  it('leaves health answering and SIGTERM exiting at once; a restart finds the clock at a batch boundary, every renewal up to it run once', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const s = await serve(['--data', data, '--clock', '2026-01-01T00:00:00'])
    let again: Served | undefined
    try {
      const id = await subscribeHourly(s)
      // Some 70 million hourly renewals: minutes of work for the engine.
      const move = post(`${s.url}/_sandbox/clock/set`, { to: '9999-12-01T00:00:00' }).then(
        async (r) => ({ status: r.status, body: (await r.json()) as any }),
        (e: Error) => ({ status: 0, body: { error: e.message } }),
      )
      // While it runs, health answers (each time within a second) and the clock reads at a batch boundary
      // (reads do not wait); asked until the move is seen under way.
      let during: { now: string } | undefined
      for (let i = 0; i < 50 && !during; i++) {
        const health = await within(1000, 'GET /_sandbox/health during the move', fetch(`${s.url}/_sandbox/health`))
        expect(health.status).toBe(200)
        expect(((await health.json()) as any).ok).toBe(true)
        const clock = (await (await within(1000, 'GET /_sandbox/clock during the move', fetch(`${s.url}/_sandbox/clock`))).json()) as any
        if (parse(clock.now) > parse('2026-01-01T00:00:00')) during = clock
        else await new Promise((r) => setTimeout(r, 100))
      }
      if (!during) throw new Error('the move never got under way')
      expect(parse(during.now)).toBeLessThan(parse('9999-12-01T00:00:00'))

      expect(await within(1000, 'exit after SIGTERM during the move', s.stop('SIGTERM'))).toBe(0)
      expect(existsSync(`${data}.lock`)).toBe(false)
      // The move's call hears why it stopped, and where.
      const answered = await move
      expect(answered.status).toBe(503)
      expect(answered.body.error).toBe('SHUTTING_DOWN')
      expect(answered.body.message).toMatch(/^the server is shutting down: the clock move stopped at \d{4}-/)

      again = await serve(['--data', data])
      const clock = (await (await fetch(`${again.url}/_sandbox/clock`)).json()) as any
      const at = parse(clock.now)
      // Not resumed: the clock stays where the move stopped, between the start and the target.
      expect(at).toBeGreaterThanOrEqual(parse(during.now))
      expect(at).toBeLessThan(parse('9999-12-01T00:00:00'))
      expect(clock.frozen).toBe(true)
      const sub = (await (await fetch(`${again.url}/_sandbox/subscriptions/${id}`)).json()) as any
      const subscribed = parse(sub.subscribed_dt)
      // Every hourly renewal up to the clock ran once (plus the first charge), none after it.
      const renewals = Math.floor((at - subscribed) / HOUR)
      expect(sub.charge_count).toBe(renewals + 1)
      expect(parse(sub.expiry_dt)).toBe(subscribed + (renewals + 1) * HOUR)
      expect(parse(sub.expiry_dt)).toBeGreaterThan(at)
      expect(parse(clock.next_event_dt)).toBe(parse(sub.expiry_dt))
      // The kept history is consecutive hours, the last one at or before the clock.
      const times = sub.charges.map((c: { at: string }) => parse(c.at))
      for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBe(HOUR)
      expect(times.at(-1)).toBe(subscribed + renewals * HOUR)
      expect(sub.charges.every((c: { outcome: string }) => c.outcome === 'SUCCESS')).toBe(true)
    } finally {
      await s.stop('SIGKILL')
      await again?.stop('SIGKILL')
    }
  }, 60_000)
})
