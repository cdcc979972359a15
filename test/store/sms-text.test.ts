import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Engine } from '../../src/core/engine.js'
import { State, type SmsRecord } from '../../src/core/state.js'
import { smsView } from '../../src/control/operations.js'
import { loadWorld } from '../../src/world/load.js'
import { FileStore } from '../../src/store/file.js'
import { tempDir } from '../helpers.js'

// OTP texts are rendered when read (src/core/sms-text.ts): what leaves (answers, write-ahead log, snapshot) is as before.
let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const world = loadWorld().world
const MSISDN = '60123456001'
/** The fields of an OTP message in the order dcb has always written them. */
const OTP_FIELDS = ['msisdn', 'from', 'kind', 'text', 'verif_request_id', 'otp', 'id', 'n', 'direction', 'to', 'at']

async function open(path: string): Promise<{ store: FileStore; engine: Engine }> {
  const store = new FileStore(path, { unsafeNoSync: true })
  const state = new State()
  await store.open(state)
  const engine = new Engine({ world, state, persist: (ch) => store.append(ch), clockStart: { at: Date.parse('2026-01-31T09:00:00Z'), frozen: true } })
  return { store, engine }
}

const journalRecords = (dir: string): Record<string, unknown>[] =>
  readdirSync(dir)
    .filter((f) => f.includes('journal'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').trim().split('\n'))
    .flatMap((line) => (JSON.parse(line) as { ch: { c: string; v: Record<string, unknown> }[] }).ch)
    .filter((ch) => ch.c === 'sms')
    .map((ch) => ch.v)

describe('OTP message texts', () => {
  it('are stored rendered, in their place, and read the same before and after a restart', async () => {
    const path = join(tmp.dir, 'data.json')
    const a = await open(path)
    const merchant = a.engine.authenticate('sandbox-demo-key')!
    await a.engine.init(merchant, { msisdn: MSISDN, service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: 'http://x' })
    const live = a.engine.smsFor(MSISDN)[0]!
    const text = `Your Stream Plus verification code is ${live.otp}. It expires in 5 minutes.`
    expect(live.text).toBe(text)
    expect(Object.keys(live)).toEqual(OTP_FIELDS)
    const [journaled] = journalRecords(tmp.dir)
    expect(Object.keys(journaled!)).toEqual(OTP_FIELDS)
    expect(journaled!.text).toBe(text)
    const answer = JSON.stringify(smsView(live))
    expect(Object.keys(JSON.parse(answer))).toEqual(OTP_FIELDS.filter((f) => f !== 'n'))
    await a.store.close()

    const b = await open(path)
    const reloaded = b.engine.smsFor(MSISDN)[0]!
    expect(JSON.stringify(smsView(reloaded))).toBe(answer)
    expect(JSON.stringify(reloaded)).toBe(JSON.stringify(live))
    await b.store.close()
  })

  it('stored rendered by an older dcb load as they were written', async () => {
    const path = join(tmp.dir, 'data.json')
    const old = new FileStore(path, { unsafeNoSync: true })
    const oldState = new State()
    await old.open(oldState)
    const rec: SmsRecord = {
      msisdn: MSISDN,
      from: 'Stream Plus',
      kind: 'otp',
      text: 'Your old code is 4321.',
      verif_request_id: 'v-1',
      otp: '4321',
      id: 's-1',
      n: 1,
      direction: 'mt',
      to: MSISDN,
      at: Date.parse('2026-01-31T08:00:00Z'),
    }
    // As dcb wrote it before: a plain record with its text.
    oldState.apply({ c: 'sms', id: rec.id, v: rec })
    await old.append([{ c: 'sms', id: rec.id, v: { ...rec } }])
    await old.close()

    const b = await open(path)
    const [m] = b.engine.smsFor(MSISDN)
    expect(m).toEqual(rec)
    expect(JSON.stringify(smsView(m!))).toBe(
      `{"msisdn":"${MSISDN}","from":"Stream Plus","kind":"otp","text":"Your old code is 4321.","verif_request_id":"v-1","otp":"4321","id":"s-1","direction":"mt","to":"${MSISDN}","at":"2026-01-31T08:00:00.000000"}`,
    )
    expect(b.engine.latestOtp(MSISDN)!.text).toBe('Your old code is 4321.')
    await b.store.close()
  })
})
