import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
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
  describe('written by this dcb, then read after a restart', () => {
    // A temp dir of its own: the file-wide one is made anew for each test.
    const own = tempDir()
    let live: SmsRecord
    let text: string
    let journaled: Record<string, unknown>
    let answer: string
    let reloaded: SmsRecord
    beforeAll(async () => {
      const path = join(own.dir, 'data.json')
      const a = await open(path)
      const merchant = a.engine.authenticate('sandbox-demo-key')!
      await a.engine.init(merchant, { msisdn: MSISDN, service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: 'http://x' })
      live = a.engine.smsFor(MSISDN)[0]!
      text = `Your Stream Plus verification code is ${live.otp}. It expires in 5 minutes.`
      journaled = journalRecords(own.dir)[0]!
      answer = JSON.stringify(smsView(live))
      await a.store.close()
      const b = await open(path)
      reloaded = b.engine.smsFor(MSISDN)[0]!
      await b.store.close()
    })
    afterAll(() => own.cleanup())

    it('are stored rendered, in memory as in the write-ahead log', () => {
      expect(live.text).toBe(text)
      expect(journaled.text).toBe(text)
    })

    it('keep their fields in their place, in memory, in the write-ahead log, in the answer', () => {
      expect(Object.keys(live)).toEqual(OTP_FIELDS)
      expect(Object.keys(journaled)).toEqual(OTP_FIELDS)
      expect(Object.keys(JSON.parse(answer))).toEqual(OTP_FIELDS.filter((f) => f !== 'n'))
    })

    it('read the same after a restart', () => {
      expect(JSON.stringify(smsView(reloaded))).toBe(answer)
      expect(JSON.stringify(reloaded)).toBe(JSON.stringify(live))
    })
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
