/**
 * What a user writes takes effect or is refused by name: a `verify` rule on carriers with no OTP; a
 * PSMS service without a keyword that its integration gives a PSMS carrier by default; `dcb seed`
 * numbers of another country (or running into another carrier); an MO for an inactive merchant's
 * service, and the rules such a service could never reach. Over loopback and through the binary.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, tempFolderPerTest, writeJson, type Client } from './helpers.js'
import { dcb, serve, type Result } from './cli/run.js'

const tmp = tempFolderPerTest()
const write = tmp.json

/** Runs `fn` against a sandbox of its own, closed after it. */
async function withClient(fn: (c: Client) => Promise<void>, opts: Parameters<typeof startClient>[0] = {}): Promise<void> {
  const c = await startClient(opts)
  try {
    await fn(c)
  } finally {
    await c.close()
  }
}

describe('a verify rule', () => {
  describe('on carriers with no OTP', () => {
    it('is refused by name over loopback', () =>
      withClient(async (c) => {
        for (const [rule, message] of [
          [
            { match: { carrier: 'sbx-my-psms' }, step: 'verify', effect: { error: 'BARRED' } },
            'step: step "verify" happens only on otp carriers and carrier sbx-my-psms is a psms carrier: the rule would decide nothing',
          ],
          [
            { match: { carrier: 'sbx-bg-redirect' }, step: ['init', 'verify'], effect: { delay_ms: 100 } },
            'step.1: step "verify" happens only on otp carriers and carrier sbx-bg-redirect is a redirect carrier: the rule would never decide it (leave it out of "step")',
          ],
          [
            { match: { prefix: '6013' }, step: 'verify', effect: { error: 'BARRED' } },
            'step: step "verify" happens only on otp carriers and no carrier with numbers starting with 6013 is an otp carrier: the rule would decide nothing',
          ],
        ] as const) {
          const r = await c.control('/rules', rule)
          expect(r, JSON.stringify(rule)).toEqual({ status: 400, body: { error: 'BAD_RULE', message } })
        }
      }))

    it('has nothing to decide: Verify answers a redirect request INVALID_PIN first', () =>
      withClient(async (c) => {
        // What such a rule would have met: Verify refuses a redirect request before any verify rule.
        const init = await c.api('/subscriptions/init', { msisdn: '359881230001', service_code: 'STREAMPLUS', country_code: 'bg' })
        expect(init.body.status).toBe('SUCCESS')
        const id = init.body.payload.redirect_url.split('/').pop()
        const verify = await c.api('/subscriptions/verify', { verif_request_id: id, otp: '1234' })
        expect(verify.body.message).toBe('INVALID_PIN')
      }))
  })

  describe('in a country with OTP carriers', () => {
    const RULE = { id: 'bg-verify', match: { country: 'bg' }, step: 'verify', effect: { error: 'BARRED' } }

    it('is taken', () =>
      withClient(async (c) => {
        expect((await c.control('/rules', RULE)).status).toBe(200)
      }))

    it('decides Verify', () =>
      withClient(async (c) => {
        expect((await c.control('/rules', RULE)).status).toBe(200)
        const otpInit = await c.api('/subscriptions/init', { msisdn: '359871230001', service_code: 'STREAMPLUS', country_code: 'bg' })
        const otp = await c.control('/otp?msisdn=359871230001')
        const answer = await c.api('/subscriptions/verify', { verif_request_id: otpInit.body.payload.verif_request_id, otp: otp.body.otp })
        expect(answer.body.message).toBe('BARRED')
      }))
  })
})

describe('a PSMS service with no keyword', () => {
  describe('whose integration takes a PSMS carrier by default', () => {
    const message =
      'service "NOKEY" uses PSMS carrier "sbx-gb-psms" (its integration in "gb" lists no carriers, so it takes every provisioned carrier there) and needs a keyword, or a carriers list without "sbx-gb-psms"'
    let folder: ReturnType<typeof tempDir>
    let f: string
    let v: Result
    let s: Result
    beforeAll(async () => {
      folder = tempDir()
      f = writeJson(folder.dir, 'nokeyword.json', {
        services: [{ code: 'NOKEY', merchant: 'demo', name: 'No Key', period: 'P1M', integrations: [{ country: 'gb' }] }],
      })
      v = await dcb(['fixtures', 'validate', f])
      s = await dcb(['serve', '--in-memory', '--port', '0', '--fixtures', f])
    })
    afterAll(() => folder?.cleanup())

    it('fails dcb fixtures validate with exit 1', () => {
      expect(v.code).toBe(1)
    })

    it('is named by dcb fixtures validate at its JSON path in the file', () => {
      expect(v.stderr).toContain(`${f}: $.services[0].keyword: ${message}`)
    })

    it('fails dcb serve with exit 1', () => {
      expect(s.code).toBe(1)
    })

    it('is named by dcb serve as a fixture error', () => {
      expect(s.stderr).toContain(`dcb: fixture error: ${f}: $.services[0].keyword: ${message}`)
    })
  })

  it('passes dcb fixtures validate with a carriers list without a PSMS carrier', async () => {
    const listed = write('listed.json', {
      services: [{ code: 'NOKEY', merchant: 'demo', name: 'No Key', period: 'P1M', integrations: [{ country: 'gb', carriers: ['sbx-gb-otp'] }] }],
    })
    const ok = await dcb(['fixtures', 'validate', listed])
    expect(ok.stderr).not.toContain('keyword')
    expect(ok.code).toBe(0)
  })

  it('passes dcb fixtures validate in a country whose PSMS carrier is not provisioned', async () => {
    // A country whose PSMS carrier is not provisioned gives it none by default.
    const bare = write('unprovisioned.json', {
      carriers: [{ code: 'sbx-gb-psms', provisioned: false }],
      services: [{ code: 'NOKEY', merchant: 'demo', name: 'No Key', period: 'P1M', integrations: [{ country: 'gb' }] }],
    })
    const quiet = await dcb(['fixtures', 'validate', bare])
    expect(quiet.stderr).not.toContain('keyword')
    expect(quiet.code).toBe(0)
  })
})

describe('dcb seed: the numbers are of a carrier of the country', () => {
  describe('numbers it cannot seed', () => {
    let folder: ReturnType<typeof tempDir>
    let data: string
    let gb: Result
    let across: Result
    let landline: Result
    beforeAll(async () => {
      folder = tempDir()
      data = join(folder.dir, 'untouched.json')
      gb = await dcb(['seed', '--subscriptions', '5', '--country', 'my', '--first-msisdn', '447700900000', '--data', data])
      across = await dcb(['seed', '--subscriptions', '200', '--first-msisdn', '601299999000', '--data', data])
      landline = await dcb(['seed', '--subscriptions', '5', '--first-msisdn', '6030000000', '--data', data])
    })
    afterAll(() => folder?.cleanup())

    it('refuses a first number of another country with exit 2, in one line naming its country', () => {
      expect(gb.stderr.trim().split('\n')).toEqual([
        "dcb: the first MSISDN 447700900000 is of carrier sbx-gb-otp, in gb, not in my: a subscription's carrier is in its country (seed gb numbers with country gb)",
      ])
      expect(gb.code).toBe(2)
    })

    it('refuses numbers counting into another carrier with exit 2, in one line naming the first of them', () => {
      expect(across.stderr.trim().split('\n')).toEqual([
        'dcb: MSISDN 601300000000 (number 101 counting up from 601299999000) is of carrier sbx-my-psms, not sbx-my-otp: seed fewer, or from another first MSISDN',
      ])
      expect(across.code).toBe(2)
    })

    it('refuses a landline first number with exit 2, in one line naming its prefix', () => {
      expect(landline.stderr.trim()).toBe('dcb: the first MSISDN 6030000000 cannot be seeded: msisdn "6030000000" is a landline number (prefix 603)')
      expect(landline.code).toBe(2)
    })

    it('leaves the data file untouched when it refuses', () => {
      expect(existsSync(data)).toBe(false)
    })
  })

  describe('numbers it seeds', () => {
    let folder: ReturnType<typeof tempDir>
    let gb: Result
    let legacy: Result
    let seen: string[]
    beforeAll(async () => {
      folder = tempDir()
      const data = join(folder.dir, 'seeded.json')
      gb = await dcb(['seed', '--subscriptions', '2', '--country', 'gb', '--first-msisdn', '447700900000', '--data', data])
      legacy = await dcb(['seed', '--subscriptions', '1', '--first-msisdn', '601900000000', '--data', data])
      const s = await serve(['--data', data])
      try {
        const subs = (await (await fetch(`${s.url}/_sandbox/subscriptions`)).json()).subscriptions
        seen = subs.map((x: any) => `${x.msisdn} ${x.country_code} ${x.carrier_code}`).sort()
      } finally {
        await s.stop()
      }
    })
    afterAll(() => folder?.cleanup())

    it('seeds gb numbers with country gb', () => {
      expect(gb.code).toBe(0)
      expect(seen.filter((x) => x.startsWith('44'))).toEqual(['447700900000 gb sbx-gb-otp', '447700900001 gb sbx-gb-otp'])
    })

    it('seeds (on purpose) numbers of a carrier that is not provisioned', () => {
      expect(legacy.code).toBe(0)
      expect(seen.filter((x) => !x.startsWith('44'))).toEqual(['601900000000 my sbx-my-legacy'])
    })
  })
})

describe('an inactive merchant', () => {
  const PAUSED = {
    services: [{ code: 'PAUSED', merchant: 'inactive', name: 'Paused Service', period: 'P1M', keyword: 'PAUSE', integrations: [{ country: 'my' }] }],
  }
  const PAUSE_MO = { msisdn: '601312000001', short_code: '32123', text: 'PAUSE' }
  /** Runs `fn` against a sandbox whose service PAUSED is of the inactive merchant. */
  const withPaused = (fn: (c: Client) => Promise<void>) => withClient(fn, { fixtures: [write('paused.json', PAUSED)] })

  describe('sells nothing by MO', () => {
    it('answers its API key 401', () =>
      withPaused(async (c) => {
        const key = await c.api('/subscriptions/init', { msisdn: '601312000001', service_code: 'PAUSED', country_code: 'my' }, { key: 'sandbox-inactive-key' })
        expect(key.status).toBe(401)
      }))

    it('rejects an MO for its service UNAUTHORIZED, saying why', () =>
      withPaused(async (c) => {
        const mo = await c.control('/mo', PAUSE_MO)
        expect(mo.status).toBe(200)
        expect(mo.body).toMatchObject({
          action: 'rejected',
          code: 'UNAUTHORIZED',
          reason: 'service PAUSED is of merchant inactive, which is inactive (its API calls answer 401 UNAUTHORIZED): an MO for it subscribes no one',
        })
      }))

    it('subscribes no one on an MO for its service', () =>
      withPaused(async (c) => {
        await c.control('/mo', PAUSE_MO)
        expect((await c.control('/subscriptions?msisdn=601312000001')).body.subscriptions).toEqual([])
      }))

    it('texts the sender that the request could not be completed', () =>
      withPaused(async (c) => {
        await c.control('/mo', PAUSE_MO)
        const sms = (await c.control('/sms?msisdn=601312000001')).body
        expect(JSON.stringify(sms)).toContain('Paused Service: your request could not be completed (UNAUTHORIZED).')
      }))

    it("leaves an active merchant's keyword on the same short code subscribing", () =>
      withPaused(async (c) => {
        await c.control('/mo', PAUSE_MO)
        // An active merchant's keyword on the same short code still subscribes.
        expect((await c.control('/mo', { msisdn: '601312000002', short_code: '32123', text: 'STREAM' })).body.action).toBe('subscribed')
      }))
  })

  it('refuses a rule of its service on every step, renewals too', () =>
    withPaused(async (c) => {
      const why =
        'match.service: service PAUSED is of merchant inactive, which is inactive: its API calls answer 401 UNAUTHORIZED, an MO for PAUSED is refused and its subscriptions are not renewed'
      for (const step of ['mo', 'charge', 'activate', 'init', 'status', 'api', 'renewal', 'retry', ['renewal', 'retry']] as const) {
        const effect = step === 'activate' ? { cancel_after: 'P1D' } : step === 'status' || step === 'api' ? { http: 500 } : { error: 'BARRED' }
        const r = await c.control('/rules', { match: { service: 'PAUSED' }, step, effect })
        expect(r, String(step)).toEqual({ status: 400, body: { error: 'BAD_RULE', message: `${why}, so the rule would decide nothing` } })
      }
    }))

  describe('renews nothing a data file kept for it', () => {
    let folder: ReturnType<typeof tempDir>
    let paused: string, retrying: string, stream: string
    let failed: { status: number; body: any }
    let moved: { status: number; body: any }
    let events: { id: string; type: string; status: string; code: string | undefined }[]
    let sub: any
    let retried: any
    let year: { status: number; body: any }
    beforeAll(async () => {
      folder = tempDir()
      const data = join(folder.dir, 'sandbox.json')
      // The merchant active when the subscriptions were made.
      const active = await startClient({
        data,
        clock: '2026-01-10T09:00:00',
        fixtures: [writeJson(folder.dir, 'active.json', { ...PAUSED, merchants: [{ id: 'inactive', active: true }] })],
      })
      try {
        paused = await active.subscribe('60123456001', 'PAUSED', 'my', 'sandbox-inactive-key')
        // 302: its first renewal fails and the carrier retries a day later.
        retrying = await active.subscribe('60123456302', 'PAUSED', 'my', 'sandbox-inactive-key')
        stream = await active.subscribe('60123456002')
        failed = await active.control('/clock/advance', { by: 'P1M' })
      } finally {
        await active.close()
      }
      // Inactive now: the same data file, the default world's merchant.
      const c = await startClient({ data, fixtures: [writeJson(folder.dir, 'paused.json', PAUSED)] })
      try {
        moved = await c.control('/clock/advance', { by: 'P1M' })
        events = moved.body.events.map((e: any) => ({ id: e.subscription_id, type: e.type, status: e.status, code: e.code }))
        sub = (await c.control(`/subscriptions/${paused}`)).body
        retried = (await c.control(`/subscriptions/${retrying}`)).body
        // Nothing falls due for them any more: a year on, only the active merchant's subscription renews.
        year = await c.control('/clock/advance', { by: 'P1Y' })
      } finally {
        await c.close()
      }
    })
    afterAll(() => folder?.cleanup())

    it('renews its subscriptions while active, the 302 number failing its first renewal', () => {
      expect(failed.body.events.map((e: any) => [e.subscription_id, e.type])).toEqual(
        expect.arrayContaining([
          [retrying, 'renewal_failed'],
          [paused, 'renewed'],
        ]),
      )
    })

    it('advances the clock over the data file it kept', () => {
      expect(moved.status).toBe(200)
    })

    it('skips the renewal at the expiry, the subscription lapsing EXPIRED with UNAUTHORIZED', () => {
      expect(events).toEqual(expect.arrayContaining([{ id: paused, type: 'renewal_skipped', status: 'EXPIRED', code: 'UNAUTHORIZED' }]))
    })

    it('skips the retry, the retrying subscription lapsing EXPIRED with UNAUTHORIZED', () => {
      expect(events).toEqual(expect.arrayContaining([{ id: retrying, type: 'retry_skipped', status: 'EXPIRED', code: 'UNAUTHORIZED' }]))
    })

    it("still renews the active merchant's subscription", () => {
      expect(events).toEqual(expect.arrayContaining([{ id: stream, type: 'renewed', status: 'ACTIVE', code: undefined }]))
    })

    it('gives no other event at the expiry', () => {
      // Before: the retry succeeded and the renewal was charged, as for an active merchant.
      expect(events).toHaveLength(3)
    })

    it('leaves the lapsed subscription EXPIRED at its expiry, not canceled', () => {
      expect(sub).toMatchObject({ status: 'EXPIRED', expiry_dt: '2026-03-10T09:00:00.000000', canceled_dt: null })
    })

    it('charges the lapsed subscription nothing at its expiry', () => {
      expect(sub.charges.map((x: any) => x.kind)).toEqual(['first', 'renewal'])
    })

    it('leaves the retrying subscription EXPIRED', () => {
      expect(retried.status).toBe('EXPIRED')
    })

    it('charges the retrying subscription no retry', () => {
      expect(retried.charges.map((x: any) => `${x.kind} ${x.outcome}`)).toEqual(['first SUCCESS', 'renewal INSUFFICIENT_FUNDS'])
    })

    it('lets nothing fall due for it a year on', () => {
      expect(new Set(year.body.events.map((e: any) => e.subscription_id))).toEqual(new Set([stream]))
    })
  })
})
