import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { dcb } from './run.js'

const tmp = tempDir()
let recorded: Client
let file: string

/** A session recorded as a merchant would: OTP success after a wrong OTP, a PSMS MO, a renewal a month later. */
beforeAll(async () => {
  recorded = await startClient({ clock: '2026-01-31T09:00:00' })
  const c = recorded
  const init = await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
  const id = init.body.payload.verif_request_id
  expect((await c.api('/subscriptions/verify', { verif_request_id: id, otp: 'nope' })).body.message).toBe('INVALID_PIN')
  const { body: otp } = await c.control('/otp?msisdn=60123456001')
  const verify = await c.api('/subscriptions/verify', { verif_request_id: id, otp: otp.otp })
  const sub = verify.body.payload.subscription_id
  await c.api('/subscriptions/init', { msisdn: '60133456001', service_code: 'GAMECLUB', country_code: 'my' })
  const mo = await c.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'GAME' })
  expect(mo.body.action).toBe('subscribed')
  await c.control('/clock/advance', { by: 'P1M' })
  const status = await c.api('/subscriptions/status', { subscription_id: sub })
  expect(status.body.payload.expiry_dt).toBe('2026-03-31T09:00:00.000000') // renewed once
  await c.api('/subscriptions/status', { subscription_id: mo.body.subscription_id })
  const logs = await dcb(['logs', '--json', '--all'], { env: { DCB_BASE_URL: c.url } })
  expect(logs.code).toBe(0)
  file = join(tmp.dir, 'session.jsonl')
  writeFileSync(file, logs.stdout)
})
afterAll(async () => {
  await recorded.close()
  tmp.cleanup()
})

describe('dcb logs --json --all', () => {
  // One read, shared: the tests look at its lines only.
  let lines: any[]
  beforeAll(async () => {
    lines = (await dcb(['logs', '--json', '--all'], { env: { DCB_BASE_URL: recorded.url } })).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
  })

  it('prints every entry, oldest first', () => {
    expect(lines.map((e) => e.path)).toEqual([
      '/subscriptions/init',
      '/subscriptions/verify',
      '/subscriptions/verify',
      '/subscriptions/init',
      '/_sandbox/mo',
      '/_sandbox/clock/advance',
      '/subscriptions/status',
      '/subscriptions/status',
    ])
    expect(lines.map((e) => e.id)).toEqual([...lines.map((e) => e.id)].sort((a, b) => a - b))
  })

  it('gives each entry its request body', () => {
    expect(lines[0].request).toEqual({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
  })

  it('gives each entry its sandbox time', () => {
    expect(lines[6].sandbox_time).toBe('2026-02-28T09:00:00.000000')
  })
})

describe('dcb replay FILE', () => {
  it('replays a recorded session (OTP success, a wrong OTP, a PSMS MO, a renewal a month later): every answer matches, exit 0', async () => {
    const target = await startClient()
    try {
      const r = await dcb(['replay', file], { env: { DCB_BASE_URL: target.url } })
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      expect(r.stdout).toContain('replaying 7 request(s) of merchant demo from 2026-01-31T09:00:00.000000 (sandbox time)')
      expect(r.stdout).toMatch(/✔ 2026-01-31T09:00:00.000000 POST \/subscriptions\/verify {2}recorded 200 INVALID_PIN {2}replay 200 INVALID_PIN/)
      expect(r.stdout).toMatch(/✔ 2026-02-28T09:00:00.000000 POST \/subscriptions\/status {2}recorded 200 SUCCESS {2}replay 200 SUCCESS/)
      expect(r.stdout).toContain('✔ 7 answers match the recording')
      // The replay ran on its own ids and clock: the renewal happened there too.
      const subs = (await target.control('/subscriptions?msisdn=60123456001')).body.subscriptions
      expect(subs).toHaveLength(1)
      expect(subs[0]).toMatchObject({ status: 'ACTIVE', expiry_dt: '2026-03-31T09:00:00.000000' })
      expect((await target.control('/clock')).body).toMatchObject({ now: '2026-02-28T09:00:00.000000', frozen: true })
    } finally {
      await target.close()
    }
  })

  describe('against a changed world (a fixture rule)', () => {
    // One replay, shared: the tests read its output only.
    let r: Awaited<ReturnType<typeof dcb>>
    beforeAll(async () => {
      const fixture = join(tmp.dir, 'barred.json')
      writeFileSync(fixture, JSON.stringify({ rules: [{ id: 'ticket-9', match: { msisdn: '60123456001' }, step: 'charge', effect: { error: 'BARRED' } }] }))
      const target = await startClient({ fixtures: [fixture] })
      try {
        r = await dcb(['replay', file], { env: { DCB_BASE_URL: target.url } })
      } finally {
        await target.close()
      }
    })

    it('prints the answers that differ, with a count of them', () => {
      expect(r.stdout).toMatch(
        /✘ \S+ POST \/subscriptions\/verify {2}recorded 200 SUCCESS {2}replay 200 BARRED {2}\(rule ticket-9 \(MSISDN 60123456001\): first charge BARRED\)/,
      )
      expect(r.stdout).toMatch(/✘ \d+ of 7 answers differ from the recording/)
    })

    it('exits 1', () => {
      expect(r.code).toBe(1)
    })
  })

  it('refuses a file whose entry is not a request log entry, in one line (exit 2)', async () => {
    const bad = join(tmp.dir, 'bad.jsonl')
    writeFileSync(bad, '{"nope": 1}\n')
    const r = await dcb(['replay', bad], { env: { DCB_BASE_URL: 'http://127.0.0.1:9' } })
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`dcb: ${bad}: entry 1 is not a request log entry (path and sandbox_time needed)\n`)
  })

  it('refuses a file that does not exist (exit 2)', async () => {
    const missing = await dcb(['replay', join(tmp.dir, 'none.jsonl')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/no such file/)
  })

  it('refuses an entry whose sandbox_time is not a sandbox time, in one line (exit 2)', async () => {
    const noTime = join(tmp.dir, 'no-time.jsonl')
    writeFileSync(noTime, '{"path": "/subscriptions/init", "sandbox_time": "yesterday"}\n')
    const time = await dcb(['replay', noTime], { env: { DCB_BASE_URL: 'http://127.0.0.1:9' } })
    expect(time.stderr).toBe(`dcb: ${noTime}: entry 1: sandbox_time "yesterday" is not a sandbox time such as 2026-01-31T09:00:00.000000\n`)
    expect(time.code).toBe(2)
  })

  it('--merchant with no request in the recording is refused naming the merchants it has (exit 2), before the sandbox is reset', async () => {
    const r = await dcb(['replay', file, '--merchant', 'nobody'], { env: { DCB_BASE_URL: 'http://127.0.0.1:9' } })
    expect(r.stderr).toBe(`dcb: ${file}: no merchant API request of merchant "nobody" to replay (the recording has: demo)\n`)
    expect(r.code).toBe(2)
  })
})

describe('dcb replay: the summary', () => {
  it('counts one answer as one ("1 answer matches")', async () => {
    const c = await startClient()
    const target = await startClient()
    try {
      await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
      const recording = join(tmp.dir, 'one.jsonl')
      writeFileSync(recording, (await dcb(['logs', '--json', '--all'], { env: { DCB_BASE_URL: c.url } })).stdout)
      const r = await dcb(['replay', recording], { env: { DCB_BASE_URL: target.url } })
      expect([r.code, r.stdout.trim().split('\n').at(-1)]).toEqual([0, '✔ 1 answer matches the recording'])
    } finally {
      await c.close()
      await target.close()
    }
  })
})

describe('dcb replay: Verify answers the OTP passed', () => {
  // One recording (refused first charges, a Verify HTTP 500, a malformed OTP) and one replay, shared.
  let r: Awaited<ReturnType<typeof dcb>>
  let requests: { reason: string | null }[]
  beforeAll(async () => {
    const c = await startClient({ clock: '2026-01-31T09:00:00' })
    const target = await startClient()
    try {
      const verify = async (msisdn: string, otp?: unknown) => {
        const init = await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
        const sent = (await c.control(`/otp?msisdn=${msisdn}`)).body.otp
        return (await c.api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp: otp ?? sent })).body.message
      }
      expect(await verify('60123456201')).toBe('INSUFFICIENT_FUNDS')
      expect(await verify('60123456203')).toBe('BARRED')
      expect(await verify('60123456250')).toBe('ERROR')
      expect(await verify('60123456002', 1234)).toBe('BAD_REQUEST')
      const logs = await dcb(['logs', '--json', '--all'], { env: { DCB_BASE_URL: c.url } })
      const recording = join(tmp.dir, 'charges.jsonl')
      writeFileSync(recording, logs.stdout)
      r = await dcb(['replay', recording], { env: { DCB_BASE_URL: target.url } })
      requests = (await target.control('/requests?limit=100')).body.requests
    } finally {
      await target.close()
      await c.close()
    }
  })

  it('replays a first charge refused INSUFFICIENT_FUNDS with the OTP the handset got this time', () => {
    expect(r.stdout).toMatch(/✔ \S+ POST \/subscriptions\/verify {2}recorded 200 INSUFFICIENT_FUNDS {2}replay 200 INSUFFICIENT_FUNDS/)
  })

  it('replays a first charge refused BARRED with the OTP the handset got this time', () => {
    expect(r.stdout).toMatch(/✔ \S+ POST \/subscriptions\/verify {2}recorded 200 BARRED {2}replay 200 BARRED/)
  })

  it('replays a malformed OTP as malformed', () => {
    expect(r.stdout).toMatch(/✔ \S+ POST \/subscriptions\/verify {2}recorded 400 BAD_REQUEST {2}replay 400 BAD_REQUEST/)
  })

  it('matches every answer, the Verify HTTP 500 too', () => {
    expect([r.code, r.stdout]).toEqual([0, expect.stringContaining('✔ 8 answers match the recording')])
  })

  it('counts no replayed OTP as a wrong attempt', () => {
    // The charges were refused in the replay as in the recording: the OTP was taken.
    expect(requests.filter((q) => q.reason?.includes('is not the OTP'))).toEqual([])
  })
})
