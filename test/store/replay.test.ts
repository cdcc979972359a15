import fc from 'fast-check'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Engine, SandboxError } from '../../src/core/engine.js'
import { State } from '../../src/core/state.js'
import { loadWorld } from '../../src/world/load.js'
import { FileStore } from '../../src/store/file.js'
import { tempDir } from '../helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const world = loadWorld().world
// Ordinary numbers, and the renewal magic endings: failing, retried, every renewal failing, carrier cancel.
const ENDINGS = ['001', '002', '301', '302', '303', '401']
const SERVICES = ['STREAMPLUS', 'QUICKTEST', 'GAMECLUB']

type Op = { op: 'subscribe'; ending: string; service: string } | { op: 'advance'; by: string } | { op: 'cancel'; pick: number }

const ops = fc.array(
  fc.oneof(
    { arbitrary: fc.record({ op: fc.constant('subscribe' as const), ending: fc.constantFrom(...ENDINGS), service: fc.constantFrom(...SERVICES) }), weight: 2 },
    // Mostly clock moves: histories outgrow their kept length, then renew again in later moves.
    { arbitrary: fc.record({ op: fc.constant('advance' as const), by: fc.constantFrom('PT1H', 'PT7H', 'P1D', 'P1W', 'P1M', 'P1Y') }), weight: 4 },
    { arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat(20) }), weight: 1 },
  ),
  { minLength: 2, maxLength: 14 },
)

async function open(path: string): Promise<{ store: FileStore; state: State; engine: Engine }> {
  const store = new FileStore(path, { unsafeNoSync: true })
  const state = new State()
  await store.open(state)
  // A short charge history, so that cutting it to its last few is played too.
  const engine = new Engine({
    world,
    state,
    persist: (ch) => store.append(ch),
    clockStart: { at: Date.parse('2026-01-31T09:00:00Z'), frozen: true },
    chargesPerSubscription: 4,
  })
  return { store, state, engine }
}

async function play(engine: Engine, list: Op[]): Promise<void> {
  const merchant = engine.authenticate('sandbox-demo-key')!
  for (const [i, o] of list.entries()) {
    if (o.op === 'advance') await engine.advance(o.by)
    else if (o.op === 'cancel') {
      const ids = [...engine.state.subs.keys()]
      if (!ids.length) continue
      try {
        await engine.cancel(ids[o.pick % ids.length]!)
      } catch (e) {
        if (!(e instanceof SandboxError)) throw e // canceling twice is refused: fine
      }
    } else {
      const msisdn = `6012345${String(i).padStart(2, '0')}${o.ending}`
      const init = await engine.init(merchant, { msisdn, service_code: o.service, country_code: 'my' }, { baseUrl: '' })
      if (init.code !== 'SUCCESS') continue
      await engine.verify(merchant, { verif_request_id: init.payload!.verif_request_id as string, otp: engine.latestOtp(msisdn)!.otp! })
    }
  }
}

describe('write-ahead log replay', () => {
  it('rebuilds exactly the state that was acknowledged, whatever renewals, failures, retries or cancellations made it', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(ops, async (list) => {
        const path = join(tmp.dir, `replay-${run++}.json`)
        const a = await open(path)
        await play(a.engine, list)
        await a.store.flush()
        // As a killed server leaves it: no snapshot, a stale lock, the write-ahead log closed by the OS.
        ;(a.store as any).lock.held = false
        writeFileSync(`${path}.lock`, '999999999\n')
        await (a.store as any).wal.close()
        const b = await open(path)
        try {
          expect(b.state.subs).toEqual(a.state.subs)
          expect(b.state.verifs).toEqual(a.state.verifs)
          expect(b.state.sms).toEqual(a.state.sms)
          expect(b.state.counters).toEqual(a.state.counters)
          for (const msisdn of a.state.subsByMsisdn.keys()) expect(b.engine.smsFor(msisdn)).toEqual(a.engine.smsFor(msisdn))
        } finally {
          await b.store.close()
        }
      }),
      { numRuns: 120 },
    )
  })
})
