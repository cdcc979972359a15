/**
 * dcb replay resets the session it replays into, and says so: its help, its first line ("resetting
 * session X before replaying") and its --json report. --no-reset replays into the session as it is:
 * its subscriptions, request log and coverage stay, and its clock only moves forward. Through the
 * binary against real servers.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { dcb } from './run.js'

const tmp = tempDir()
let file: string
let target: Client

beforeAll(async () => {
  const recorded = await startClient({ clock: '2026-01-31T09:00:00' })
  try {
    const id = await recorded.subscribe('60123456001')
    await recorded.api('/subscriptions/status', { subscription_id: id })
    file = join(tmp.dir, 'session.jsonl')
    writeFileSync(file, (await dcb(['logs', '--json', '--all'], { env: { DCB_BASE_URL: recorded.url } })).stdout)
  } finally {
    await recorded.close()
  }
  target = await startClient({ clock: '2026-01-31T08:00:00' })
})
afterAll(async () => {
  await target?.close()
  tmp.cleanup()
})

const replay = (...args: string[]) => dcb(['replay', file, ...args], { env: { DCB_BASE_URL: target.url, DCB_SESSION: undefined } })
const session = (name: string) => ({ headers: { 'x-dcb-session': name } })
/** What a session holds: its subscriptions, its request log, and how many OTP Inits its coverage counts. */
async function holds(name: string) {
  const h = session(name)
  const subs = (await target.control('/subscriptions', undefined, h)).body.subscriptions.map((s: { msisdn: string }) => s.msisdn).sort()
  const log = (await target.control('/requests?limit=100', undefined, h)).body.requests.length
  const coverage = (await target.control('/coverage?merchant=demo', undefined, h)).body.coverage[0]
  return { subs, log, inits: coverage.outcomes.find((o: { id: string }) => o.id === 'init.otp').count }
}
/** A subscription of 60123456002 made in the session before the replay. */
async function before(name: string) {
  const h = session(name)
  const init = await target.api('/subscriptions/init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' }, h)
  const otp = (await target.control('/otp?msisdn=60123456002', undefined, h)).body.otp
  await target.api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp }, h)
  expect(await holds(name)).toEqual({ subs: ['60123456002'], log: 2, inits: 1 })
}

describe('dcb replay resets the session, and says so', () => {
  let help: ReturnType<typeof dcb> | undefined
  const replayHelp = () => (help ??= dcb(['replay', '--help'], { env: { COLUMNS: '1000' } }))

  it('--help says it resets the session first', async () => {
    const r = await replayHelp()
    expect(r.stdout).toContain('resets the session first (its subscriptions, request log and coverage start over)')
  })

  it('--help offers --no-reset', async () => {
    const r = await replayHelp()
    expect(r.stdout).toMatch(/^ {2}--no-reset {2,}replay into the session as it is/m)
  })

  it('its first line names the session it resets', async () => {
    const r = await replay('--session', 't1')
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout.split('\n')[0]).toBe(
      'resetting session "t1" before replaying (its subscriptions, request log and coverage start over; --no-reset keeps them)',
    )
    expect((await replay()).stdout.split('\n')[0]).toMatch(/^resetting the default session before replaying \(/)
  })

  it('leaves nothing of what the session held before', async () => {
    await before('t1-held')
    await replay('--session', 't1-held')
    expect(await holds('t1-held')).toEqual({ subs: ['60123456001'], log: 3, inits: 1 })
  })

  it('--json reports the reset in the report, not in a line', async () => {
    const def = await replay('--json')
    expect(JSON.parse(def.stdout)).toMatchObject({ reset: true, passed: true, count: 3 })
    expect(def.stdout).not.toContain('resetting')
  })

  it('--no-reset replays into the session as it is: what it held stays, its clock moves forward from where it was', async () => {
    await target.control('/reset', { clock: '2026-01-31T08:00:00' }, session('t2'))
    await before('t2')
    const r = await replay('--session', 't2', '--no-reset')
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout.split('\n')[0]).toBe('replaying into session "t2" as it is (no reset), its clock at 2026-01-31T08:00:00.000000')
    expect(r.stdout).toContain('✔ 3 answers match the recording')
    expect(await holds('t2')).toEqual({ subs: ['60123456001', '60123456002'], log: 6, inits: 2 })
    expect((await target.control('/clock', undefined, session('t2'))).body.now).toBe('2026-01-31T09:00:00.000000')
  })

  it('--no-reset into a session past the recording says so in its first line', async () => {
    await target.control('/reset', { clock: '2026-03-01T00:00:00' }, session('t3'))
    const human = await replay('--session', 't3', '--no-reset')
    expect(human.stdout.split('\n')[0]).toBe(
      'replaying into session "t3" as it is (no reset), its clock at 2026-03-01T00:00:00.000000, after the recording\'s first request (2026-01-31T09:00:00.000000)',
    )
  })

  it("--no-reset into a session past the recording sends at the session's own time", async () => {
    await target.control('/reset', { clock: '2026-03-01T00:00:00' }, session('t4'))
    const report = JSON.parse((await replay('--session', 't4', '--no-reset', '--json')).stdout)
    expect(report).toMatchObject({ reset: false, from: '2026-01-31T09:00:00.000000', count: 3 })
    expect((await target.control('/clock', undefined, session('t4'))).body.now).toBe('2026-03-01T00:00:00.000000')
  })
})
