/**
 * What a user writes takes effect or is refused by name: a `verify` rule on carriers with no OTP; a
 * PSMS service without a keyword that its integration gives a PSMS carrier by default; `dcb seed`
 * numbers of another country (or running into another carrier); an MO for an inactive merchant's
 * service, and the rules such a service could never reach. Over loopback and through the binary.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startClient, tempFolderPerTest } from './helpers.js'
import { dcb, serve } from './cli/run.js'

const tmp = tempFolderPerTest()
const write = tmp.json

describe('a verify rule on carriers with no OTP', () => {
  it('is refused by name over loopback; on an OTP carrier it is taken and decides Verify', async () => {
    const c = await startClient()
    try {
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
      // What such a rule would have met: Verify refuses a redirect request before any verify rule.
      const init = await c.api('/subscriptions/init', { msisdn: '359881230001', service_code: 'STREAMPLUS', country_code: 'bg' })
      expect(init.body.status).toBe('SUCCESS')
      const id = init.body.payload.redirect_url.split('/').pop()
      const verify = await c.api('/subscriptions/verify', { verif_request_id: id, otp: '1234' })
      expect(verify.body.message).toBe('INVALID_PIN')

      // In a country with OTP carriers, the rule is taken and decides.
      expect((await c.control('/rules', { id: 'bg-verify', match: { country: 'bg' }, step: 'verify', effect: { error: 'BARRED' } })).status).toBe(200)
      const otpInit = await c.api('/subscriptions/init', { msisdn: '359871230001', service_code: 'STREAMPLUS', country_code: 'bg' })
      const otp = await c.control('/otp?msisdn=359871230001')
      const answer = await c.api('/subscriptions/verify', { verif_request_id: otpInit.body.payload.verif_request_id, otp: otp.body.otp })
      expect(answer.body.message).toBe('BARRED')
    } finally {
      await c.close()
    }
  })
})

describe('a PSMS service with no keyword', () => {
  it('is refused when its integration takes a PSMS carrier by default; a carriers list without one loads', async () => {
    const f = write('nokeyword.json', {
      services: [{ code: 'NOKEY', merchant: 'demo', name: 'No Key', period: 'P1M', integrations: [{ country: 'gb' }] }],
    })
    const message =
      'service "NOKEY" uses PSMS carrier "sbx-gb-psms" (its integration in "gb" lists no carriers, so it takes every provisioned carrier there) and needs a keyword, or a carriers list without "sbx-gb-psms"'
    const v = await dcb(['fixtures', 'validate', f])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain(`${f}: $.services[0].keyword: ${message}`)
    const s = await dcb(['serve', '--in-memory', '--port', '0', '--fixtures', f])
    expect(s.code).toBe(1)
    expect(s.stderr).toContain(`dcb: fixture error: ${f}: $.services[0].keyword: ${message}`)

    const listed = write('listed.json', {
      services: [{ code: 'NOKEY', merchant: 'demo', name: 'No Key', period: 'P1M', integrations: [{ country: 'gb', carriers: ['sbx-gb-otp'] }] }],
    })
    const ok = await dcb(['fixtures', 'validate', listed])
    expect(ok.stderr).not.toContain('keyword')
    expect(ok.code).toBe(0)
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
  it('refuses numbers of another country, or counting into another carrier, in one line without touching the data file', async () => {
    const data = join(tmp.dir, 'untouched.json')
    const gb = await dcb(['seed', '--subscriptions', '5', '--country', 'my', '--first-msisdn', '447700900000', '--data', data])
    expect(gb.stderr.trim().split('\n')).toEqual([
      "dcb: the first MSISDN 447700900000 is of carrier sbx-gb-otp, in gb, not in my: a subscription's carrier is in its country (seed gb numbers with country gb)",
    ])
    expect(gb.code).toBe(2)
    const across = await dcb(['seed', '--subscriptions', '200', '--first-msisdn', '601299999000', '--data', data])
    expect(across.stderr.trim().split('\n')).toEqual([
      'dcb: MSISDN 601300000000 (number 101 counting up from 601299999000) is of carrier sbx-my-psms, not sbx-my-otp: seed fewer, or from another first MSISDN',
    ])
    expect(across.code).toBe(2)
    const landline = await dcb(['seed', '--subscriptions', '5', '--first-msisdn', '6030000000', '--data', data])
    expect(landline.stderr.trim()).toBe('dcb: the first MSISDN 6030000000 cannot be seeded: msisdn "6030000000" is a landline number (prefix 603)')
    expect(landline.code).toBe(2)
    expect(existsSync(data)).toBe(false)
  })

  it('seeds gb numbers with country gb, and (on purpose) numbers of a carrier that is not provisioned', async () => {
    const data = join(tmp.dir, 'seeded.json')
    expect((await dcb(['seed', '--subscriptions', '2', '--country', 'gb', '--first-msisdn', '447700900000', '--data', data])).code).toBe(0)
    expect((await dcb(['seed', '--subscriptions', '1', '--first-msisdn', '601900000000', '--data', data])).code).toBe(0)
    const s = await serve(['--data', data])
    try {
      const subs = (await (await fetch(`${s.url}/_sandbox/subscriptions`)).json()).subscriptions
      const seen = subs.map((x: any) => `${x.msisdn} ${x.country_code} ${x.carrier_code}`).sort()
      expect(seen).toEqual(['447700900000 gb sbx-gb-otp', '447700900001 gb sbx-gb-otp', '601900000000 my sbx-my-legacy'])
    } finally {
      await s.stop()
    }
  })
})

describe('an inactive merchant', () => {
  const PAUSED = {
    services: [{ code: 'PAUSED', merchant: 'inactive', name: 'Paused Service', period: 'P1M', keyword: 'PAUSE', integrations: [{ country: 'my' }] }],
  }

  it('sells nothing by MO: the MO is rejected UNAUTHORIZED, nothing is charged; its rules are refused, renewals too', async () => {
    const c = await startClient({ fixtures: [write('paused.json', PAUSED)] })
    try {
      const key = await c.api('/subscriptions/init', { msisdn: '601312000001', service_code: 'PAUSED', country_code: 'my' }, { key: 'sandbox-inactive-key' })
      expect(key.status).toBe(401)
      const mo = await c.control('/mo', { msisdn: '601312000001', short_code: '32123', text: 'PAUSE' })
      expect(mo.status).toBe(200)
      expect(mo.body).toMatchObject({
        action: 'rejected',
        code: 'UNAUTHORIZED',
        reason: 'service PAUSED is of merchant inactive, which is inactive (its API calls answer 401 UNAUTHORIZED): an MO for it subscribes no one',
      })
      expect((await c.control('/subscriptions?msisdn=601312000001')).body.subscriptions).toEqual([])
      const sms = (await c.control('/sms?msisdn=601312000001')).body
      expect(JSON.stringify(sms)).toContain('Paused Service: your request could not be completed (UNAUTHORIZED).')
      // An active merchant's keyword on the same short code still subscribes.
      expect((await c.control('/mo', { msisdn: '601312000002', short_code: '32123', text: 'STREAM' })).body.action).toBe('subscribed')

      const why =
        'match.service: service PAUSED is of merchant inactive, which is inactive: its API calls answer 401 UNAUTHORIZED, an MO for PAUSED is refused and its subscriptions are not renewed'
      for (const step of ['mo', 'charge', 'activate', 'init', 'status', 'api', 'renewal', 'retry', ['renewal', 'retry']] as const) {
        const effect = step === 'activate' ? { cancel_after: 'P1D' } : step === 'status' || step === 'api' ? { http: 500 } : { error: 'BARRED' }
        const r = await c.control('/rules', { match: { service: 'PAUSED' }, step, effect })
        expect(r, String(step)).toEqual({ status: 400, body: { error: 'BAD_RULE', message: `${why}, so the rule would decide nothing` } })
      }
    } finally {
      await c.close()
    }
  })

  it('renews nothing a data file kept for it: at the expiry the subscription lapses (EXPIRED), nothing charged, no retry', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    // The merchant active when the subscriptions were made.
    const active = await startClient({
      data,
      clock: '2026-01-10T09:00:00',
      fixtures: [write('active.json', { ...PAUSED, merchants: [{ id: 'inactive', active: true }] })],
    })
    let paused: string, retrying: string, stream: string
    try {
      paused = await active.subscribe('60123456001', 'PAUSED', 'my', 'sandbox-inactive-key')
      // 302: its first renewal fails and the carrier retries a day later.
      retrying = await active.subscribe('60123456302', 'PAUSED', 'my', 'sandbox-inactive-key')
      stream = await active.subscribe('60123456002')
      const failed = await active.control('/clock/advance', { by: 'P1M' })
      expect(failed.body.events.map((e: any) => [e.subscription_id, e.type])).toEqual(
        expect.arrayContaining([
          [retrying, 'renewal_failed'],
          [paused, 'renewed'],
        ]),
      )
    } finally {
      await active.close()
    }
    // Inactive now: the same data file, the default world's merchant.
    const c = await startClient({ data, fixtures: [write('paused.json', PAUSED)] })
    try {
      const moved = await c.control('/clock/advance', { by: 'P1M' })
      expect(moved.status).toBe(200)
      const events = moved.body.events.map((e: any) => ({ id: e.subscription_id, type: e.type, status: e.status, code: e.code }))
      // Before: the retry succeeded and the renewal was charged, as for an active merchant.
      expect(events).toHaveLength(3)
      expect(events).toEqual(
        expect.arrayContaining([
          { id: retrying, type: 'retry_skipped', status: 'EXPIRED', code: 'UNAUTHORIZED' },
          { id: paused, type: 'renewal_skipped', status: 'EXPIRED', code: 'UNAUTHORIZED' },
          { id: stream, type: 'renewed', status: 'ACTIVE', code: undefined },
        ]),
      )
      const sub = (await c.control(`/subscriptions/${paused}`)).body
      expect(sub).toMatchObject({ status: 'EXPIRED', expiry_dt: '2026-03-10T09:00:00.000000', canceled_dt: null })
      expect(sub.charges.map((x: any) => x.kind)).toEqual(['first', 'renewal'])
      const retried = (await c.control(`/subscriptions/${retrying}`)).body
      expect(retried.status).toBe('EXPIRED')
      expect(retried.charges.map((x: any) => `${x.kind} ${x.outcome}`)).toEqual(['first SUCCESS', 'renewal INSUFFICIENT_FUNDS'])
      // Nothing falls due for them any more: a year on, only the active merchant's subscription renews.
      const year = await c.control('/clock/advance', { by: 'P1Y' })
      expect(new Set(year.body.events.map((e: any) => e.subscription_id))).toEqual(new Set([stream]))
    } finally {
      await c.close()
    }
  })
})
