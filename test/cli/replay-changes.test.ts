import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, writeJson, type Client } from '../helpers.js'
import { dcb } from './run.js'

// A support engineer's session: a rule added (no id: the server makes one up) and removed again, a
// carrier cancel. The replay left both out and said nothing: the Init the rule refused, and the Init
// the cancel allowed, differed from the recording.
const tmp = tempDir()
let recorded: Client
let replayed: Client
let file: string

beforeAll(async () => {
  recorded = await startClient({ clock: '2026-01-31T09:00:00' })
  replayed = await startClient()
  const c = recorded
  const env = { DCB_BASE_URL: c.url }
  const init = (msisdn: string) => c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
  const added = await dcb(['rules', 'add', '{"match":{"msisdn":"60123456011"},"step":"init","effect":{"error":"BARRED"}}', '--json'], { env })
  expect(added.code).toBe(0)
  expect((await init('60123456011')).body.message).toBe('BARRED')
  expect((await dcb(['rules', 'remove', JSON.parse(added.stdout).added[0].id], { env })).code).toBe(0)
  expect((await init('60123456011')).body.status).toBe('SUCCESS')
  const sub = await c.subscribe('60123456012')
  expect((await init('60123456012')).body.message).toBe('ALREADY_SUBSCRIBED')
  expect((await dcb(['cancel', sub], { env })).code).toBe(0)
  expect((await init('60123456012')).body.status).toBe('SUCCESS')
  const logs = await dcb(['logs', '--json', '--all'], { env })
  file = join(tmp.dir, 'session.jsonl')
  writeFileSync(file, logs.stdout)
})
afterAll(async () => {
  await recorded.close()
  await replayed.close()
  tmp.cleanup()
})

describe('dcb replay of a session with rule changes and a carrier cancel', () => {
  it('makes them again at their time, so every answer matches the recording', async () => {
    const r = await dcb(['replay', file, '--json'], { env: { DCB_BASE_URL: replayed.url } })
    const report = JSON.parse(r.stdout)
    expect(report.answers.map((a: any) => `${a.method} ${a.path.replace(/[0-9a-f-]{36}|rt-[0-9a-f]+/g, 'ID')} ${a.replay.message || a.replay.status}`)).toEqual(
      [
        'POST /_sandbox/rules SUCCESS',
        'POST /subscriptions/init BARRED',
        'DELETE /_sandbox/rules/ID SUCCESS',
        'POST /subscriptions/init SUCCESS',
        'POST /subscriptions/init SUCCESS',
        'POST /subscriptions/verify SUCCESS',
        'POST /subscriptions/init ALREADY_SUBSCRIBED',
        'POST /_sandbox/subscriptions/ID/cancel SUCCESS',
        'POST /subscriptions/init SUCCESS',
      ],
    )
    expect(r.code).toBe(0)
    expect(report).toMatchObject({ passed: true, differ: 0, count: 9 })
    // What it left in force: no runtime rule (the recording removed it), the subscription canceled.
    expect((await replayed.control('/rules')).body.runtime).toEqual([])
    const subs = (await replayed.control('/subscriptions?msisdn=60123456012')).body
    expect(subs.subscriptions.map((s: any) => s.status)).toEqual(['CANCELED'])
  })
})

// An MO that did nothing (a keyword the carrier does not know) is logged with an empty message, as
// one that subscribed: the replay took the two for the same answer.
describe('dcb replay of an MO', () => {
  it('tells one that subscribed from one whose keyword the replay world does not know', async () => {
    const a = await startClient({ clock: '2026-01-31T09:00:00' })
    const renamed = writeJson(tmp.dir, 'games.json', { services: [{ code: 'GAMECLUB', keyword: 'GAMES' }] })
    const b = await startClient({ fixtures: [renamed] })
    try {
      await a.api('/subscriptions/init', { msisdn: '60133456001', service_code: 'GAMECLUB', country_code: 'my' })
      expect((await a.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'GAME' })).body.action).toBe('subscribed')
      expect((await a.control('/mo', { msisdn: '60133456002', short_code: '32123', text: 'GAMEZ' })).body.action).toBe('unknown_keyword')
      const recording = join(tmp.dir, 'mo.jsonl')
      writeFileSync(recording, (await dcb(['logs', '--json', '--all'], { env: { DCB_BASE_URL: a.url } })).stdout)
      // The same world: the same answers, the unknown keyword shown as what it was.
      const same = await dcb(['replay', recording, '--base-url', a.url])
      expect(same.code).toBe(0)
      expect(same.stdout).toMatch(/POST \/_sandbox\/mo {2}recorded 200 unknown_keyword {2}replay 200 unknown_keyword/)
      // A world where GAME is no keyword: the first MO differs.
      const r = await dcb(['replay', recording, '--json', '--base-url', b.url])
      expect(r.code).toBe(1)
      const mo = JSON.parse(r.stdout).answers.filter((x: any) => x.path === '/_sandbox/mo')
      expect(mo.map((x: any) => [x.recorded.message, x.replay.message, x.same])).toEqual([
        ['', 'unknown_keyword', false],
        ['unknown_keyword', 'unknown_keyword', true],
      ])
    } finally {
      await a.close()
      await b.close()
    }
  })
})

// A renewal ticket: the Status after the renewal answers SUCCESS whether the subscription renewed
// (ACTIVE) or not (EXPIRED); the replay compared the envelopes only and passed.
describe('dcb replay of a Status after a renewal', () => {
  it('compares the subscription status the Status answered', async () => {
    const failing = writeJson(tmp.dir, 'renewal.json', {
      rules: [{ id: 'ticket', match: { msisdn: '60123456031' }, step: 'renewal', effect: { error: 'INSUFFICIENT_FUNDS' } }],
    })
    const a = await startClient({ clock: '2026-01-31T09:00:00', fixtures: [failing] })
    const b = await startClient()
    try {
      const id = await a.subscribe('60123456031')
      await a.control('/clock/advance', { by: 'P1M' })
      expect((await a.api('/subscriptions/status', { subscription_id: id })).body.payload.status).toBe('EXPIRED')
      const recording = join(tmp.dir, 'renewal.jsonl')
      writeFileSync(recording, (await dcb(['logs', '--json', '--all'], { env: { DCB_BASE_URL: a.url } })).stdout)
      expect((await dcb(['replay', recording, '--base-url', a.url])).code).toBe(0)
      // Without the rule the renewal succeeds: the last Status differs.
      const r = await dcb(['replay', recording, '--base-url', b.url])
      expect(r.code).toBe(1)
      expect(r.stdout).toMatch(/✘ 2026-02-28T09:00:00\.000000 POST \/subscriptions\/status {2}recorded 200 SUCCESS EXPIRED {2}replay 200 SUCCESS ACTIVE\n/)
      expect(r.stdout).toContain('✘ 1 of 3 answers differ from the recording')
    } finally {
      await a.close()
      await b.close()
    }
  })
})
