/**
 * A subscription's state history (the `history` field) in the file store: kept through a snapshot
 * and the write-ahead log replayed over it, and a record written before the field existed still loads.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Engine } from '../../src/core/engine.js'
import { State } from '../../src/core/state.js'
import { FileStore } from '../../src/store/file.js'
import { loadWorld } from '../../src/world/load.js'
import { tempDir } from '../helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const world = loadWorld().world

async function open(path: string) {
  const store = new FileStore(path, { unsafeNoSync: true })
  const state = new State()
  await store.open(state)
  const engine = new Engine({ world, state, persist: (ch) => store.append(ch), clockStart: { at: Date.parse('2026-01-28T09:00:00Z'), frozen: true } })
  return { store, state, engine }
}

describe('subscription history in the file store', () => {
  it('a superseded subscription keeps its history through a restart that replays the write-ahead log over a snapshot', async () => {
    const path = join(tmp.dir, 'data.json')
    const a = await open(path)
    const first = await a.engine.mo({ msisdn: '60133456302', short_code: '32123', text: 'STREAM' })
    await a.engine.advance('P1M')
    // The snapshot holds the renewal failure; the log after it the superseding MO and a STOP.
    await a.store.compact()
    const again = await a.engine.mo({ msisdn: '60133456302', short_code: '32123', text: 'STREAM' })
    await a.engine.mo({ msisdn: '60133456302', short_code: '32123', text: 'STOP' })
    await a.store.flush()
    ;(a.store as any).lock.held = false
    writeFileSync(`${path}.lock`, '999999999\n')
    await (a.store as any).wal.close()
    const b = await open(path)
    try {
      expect(b.state.subs).toEqual(a.state.subs)
      const oldId = (first as { subscription_id: string }).subscription_id
      const newId = (again as { subscription_id: string }).subscription_id
      expect(b.state.subs.get(oldId)!.history!.map((t) => [t.from, t.to, t.cause, t.superseded_by])).toEqual([
        ['ACTIVE', 'EXPIRED', 'renewal', undefined],
        ['EXPIRED', 'EXPIRED', 'superseded', newId],
      ])
      expect(b.state.subs.get(newId)!.history!.map((t) => [t.from, t.to, t.cause])).toEqual([['ACTIVE', 'CANCELED', 'stop']])
      // Nothing is due for the superseded one after the restart either (its queue is rebuilt from the records).
      await b.engine.advance('P1D')
      expect(b.engine.listSubscriptions({ msisdn: '60133456302', status: 'active' })).toEqual([])
    } finally {
      await b.store.close()
    }
  })

  describe('a data file written before the history was kept', () => {
    // One old file loaded once; the tests run in order (the last one changes a subscription).
    const own = tempDir()
    let b: Awaited<ReturnType<typeof open>>
    let otp: string
    let stopped: string
    const states = (id: string) =>
      b.engine
        .subscription(id)
        .timeline.filter((e) => e.type === 'state')
        .map((e) => (e.type === 'state' ? [e.from, e.to, e.cause] : []))
    beforeAll(async () => {
      const path = join(own.dir, 'old.json')
      const a = await open(path)
      otp = await subscribeOtp(a.engine, '60123456302')
      await a.engine.advance('P1M')
      await a.engine.advance('P1D')
      const mo = await a.engine.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' })
      stopped = (mo as { subscription_id: string }).subscription_id
      await a.engine.mo({ msisdn: '60133456001', short_code: '32123', text: 'STOP' })
      await a.store.close()
      // As the version before wrote it: no history on any subscription.
      const snap = JSON.parse(readFileSync(path, 'utf8'))
      for (const sub of Object.values(snap.collections.subs) as Record<string, unknown>[]) delete sub.history
      writeFileSync(path, JSON.stringify(snap))
      b = await open(path)
    })
    afterAll(async () => {
      await b?.store.close()
      own.cleanup()
    })

    it("loads with an OTP subscription's timeline read from its charges", () => {
      expect(states(otp)).toEqual([
        [null, 'ACTIVE', 'verify'],
        ['ACTIVE', 'EXPIRED', 'renewal'],
        ['EXPIRED', 'ACTIVE', 'retry'],
      ])
    })

    it("loads with an MO subscription's timeline read from its MO, then its STOP", () => {
      expect(states(stopped)).toEqual([
        [null, 'ACTIVE', 'mo'],
        ['ACTIVE', 'CANCELED', 'stop'],
      ])
    })

    it('starts the history of a change made now with what the charges told', async () => {
      await b.engine.cancel(otp)
      expect(b.state.subs.get(otp)!.history!.map((t) => t.cause)).toEqual(['renewal', 'retry', 'cancel'])
    })
  })
})

async function subscribeOtp(engine: Engine, msisdn: string): Promise<string> {
  const demo = engine.authenticate('sandbox-demo-key')!
  const init = await engine.init(demo, { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: 'http://x' })
  const v = await engine.verify(demo, { verif_request_id: init.payload!.verif_request_id as string, otp: engine.latestOtp(msisdn)!.otp! })
  return v.payload!.subscription_id as string
}
