/**
 * The write-ahead log's deltas against everything that changes a record, on real files written as the
 * server writes them (O_DSYNC, zeroed ahead): subscriptions, renewals in place over long moves cut in
 * batches, retries, cancellations, wrong OTPs and lock-outs, expiries, consent, runtime rules counting
 * their uses, the caps dropping the oldest records, resets, sessions deleted and made again, bursts of concurrent calls with a
 * compaction, failed writes (thrown, short, a failed sync; a snapshot's: the write-ahead logs stay) and restarts in between. After every
 * restart the state must deep-equal the state that was acknowledged (a failed write's changes taken
 * back), for the default data file and for the sessions' shared write-ahead log.
 */
import fc from 'fast-check'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Engine } from '../../src/core/engine.js'
import { COLLECTIONS, type State } from '../../src/core/state.js'
import type { StoreIo } from '../../src/store/wal.js'
import { tempDir } from '../helpers.js'
import { faults, openFile, openSessions, subscribe, tolerant, type Compacting, type Fault, type Opened } from './faulty-store.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

// Ordinary numbers, and the renewal magic endings: failing, retried, every renewal failing, carrier cancel.
const ENDINGS = ['001', '002', '301', '302', '303', '401']
const SERVICES = ['STREAMPLUS', 'QUICKTEST', 'GAMECLUB']

type Op =
  | { op: 'subscribe'; ending: string; service: string; on: number }
  | { op: 'pending'; ending: string; on: number }
  | { op: 'wrongOtp'; tries: number; on: number }
  | { op: 'consent'; approve: boolean; on: number }
  | { op: 'advance'; by: string; on: number }
  | { op: 'cancel'; pick: number; on: number }
  | { op: 'rule'; ending: string; step: 'renewal' | 'retry' | 'charge'; times: number; on: number }
  | { op: 'dropRule'; pick: number; on: number }
  | { op: 'burst'; n: number; on: number }
  | { op: 'reset'; on: number }
  | { op: 'remake'; on: number }
  | { op: 'fail'; how: Fault }
  | { op: 'restart' }

const on = fc.nat(1)
const ops = fc.array(
  fc.oneof(
    {
      arbitrary: fc.record({ op: fc.constant('subscribe' as const), ending: fc.constantFrom(...ENDINGS), service: fc.constantFrom(...SERVICES), on }),
      weight: 4,
    },
    { arbitrary: fc.record({ op: fc.constant('pending' as const), ending: fc.constantFrom(...ENDINGS), on }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('wrongOtp' as const), tries: fc.integer({ min: 1, max: 5 }), on }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('consent' as const), approve: fc.boolean(), on }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('advance' as const), by: fc.constantFrom('PT1H', 'P1D', 'P1W', 'P1M', 'P1Y'), on }), weight: 5 },
    { arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat(20), on }), weight: 1 },
    {
      arbitrary: fc.record({
        op: fc.constant('rule' as const),
        ending: fc.constantFrom(...ENDINGS),
        step: fc.constantFrom('renewal' as const, 'retry' as const, 'charge' as const),
        times: fc.integer({ min: 1, max: 3 }),
        on,
      }),
      weight: 1,
    },
    { arbitrary: fc.record({ op: fc.constant('dropRule' as const), pick: fc.nat(5), on }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('burst' as const), n: fc.integer({ min: 2, max: 5 }), on }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('reset' as const), on }), weight: 1 },
    // A session deleted and made again (the sessions' write-ahead log; the data file resets instead).
    { arbitrary: fc.record({ op: fc.constant('remake' as const), on }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('fail' as const), how: fc.constantFrom<Fault>('throw', 'short', 'sync', 'snapshot') }), weight: 2 },
    { arbitrary: fc.record({ op: fc.constant('restart' as const) }), weight: 2 },
  ),
  { minLength: 2, maxLength: 24 },
)

async function step(s: Opened, engines: Engine[], o: Exclude<Op, { op: 'fail' | 'restart' | 'remake' }>, i: number): Promise<void> {
  const engine = engines[o.on % engines.length]!
  const merchant = engine.authenticate('sandbox-demo-key')!
  const msisdn = (ending: string) => `6012345${String(i).padStart(2, '0')}${ending}`
  switch (o.op) {
    case 'subscribe':
      return subscribe(engine, msisdn(o.ending), o.service)
    case 'pending':
      await tolerant(engine.init(merchant, { msisdn: msisdn(o.ending), service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' }))
      return
    case 'wrongOtp': {
      const init = await tolerant(engine.init(merchant, { msisdn: msisdn('002'), service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' }))
      if (init?.code !== 'SUCCESS') return
      for (let t = 0; t < o.tries; t++) await tolerant(engine.verify(merchant, { verif_request_id: init.payload!.verif_request_id as string, otp: '0000000' }))
      return
    }
    case 'consent': {
      const m = `35988${String(i).padStart(4, '0')}001`
      const init = await tolerant(engine.init(merchant, { msisdn: m, service_code: 'STREAMPLUS', country_code: 'bg' }, { baseUrl: 'http://x' }))
      if (init?.code !== 'SUCCESS') return
      await tolerant(engine.consent(String(init.payload!.redirect_url).split('/').pop()!, o.approve ? 'approve' : 'deny'))
      return
    }
    case 'advance':
      await tolerant(engine.advance(o.by))
      return
    case 'cancel': {
      const ids = [...engine.state.subs.keys()]
      if (ids.length) await tolerant(engine.cancel(ids[o.pick % ids.length]!))
      return
    }
    case 'rule':
      await tolerant(engine.addRule({ match: { ending: o.ending }, step: o.step, effect: { error: 'INSUFFICIENT_FUNDS' }, times: o.times }))
      return
    case 'dropRule': {
      const ids = [...engine.state.rules.keys()]
      if (ids.length) await tolerant(engine.deleteRule(ids[o.pick % ids.length]!))
      return
    }
    case 'burst': {
      // Concurrent calls share group commits; a compaction starts while they are in flight.
      const calls = Array.from({ length: o.n }, (_, j) => subscribe(engine, `601234${String(i).padStart(2, '0')}${j}001`, 'STREAMPLUS'))
      await Promise.all([...calls, s.compact(), tolerant(engine.advance('P1M'))])
      return
    }
    case 'reset':
      await tolerant(engine.reset())
  }
}

function expectSame(after: State, acknowledged: State, where: string): void {
  for (const c of COLLECTIONS) expect(after[c], `${where}: ${c}`).toEqual(acknowledged[c])
  for (const msisdn of acknowledged.subsByMsisdn.keys()) expect(after.smsIdsOf(msisdn), `${where}: sms of ${msisdn}`).toEqual(acknowledged.smsIdsOf(msisdn))
}

async function playWithRestarts(open: (dir: string, io: StoreIo, c: Compacting) => Promise<Opened>, list: Op[], c: Compacting, dir: string): Promise<void> {
  const f = faults()
  let s = await open(dir, f.io, c)
  let engines = s.engines()
  try {
    for (const [i, o] of [...list, { op: 'restart' as const }].entries()) {
      if (o.op === 'fail') f.arm(o.how)
      else if (o.op === 'restart') {
        await s.crash()
        const acknowledged = s.states
        s = await open(dir, f.io, c)
        acknowledged.forEach((st, k) => expectSame(s.states[k]!, st, `after op ${i}, session ${k}`))
        engines = s.engines()
      } else if (o.op === 'remake') {
        if (s.remake) await s.remake(o.on % s.states.length)
        else await tolerant(engines[0]!.reset())
        engines = s.engines()
      } else await step(s, engines, o, i)
    }
  } finally {
    await s.close().catch(() => {})
  }
}

describe('write-ahead log replay with deltas, faults and restarts', () => {
  let run = 0
  for (const [name, open] of [
    ['the default data file', openFile],
    ['the sessions journal', openSessions],
  ] as const) {
    it(`${name}: after each restart the state deep-equals the state acknowledged`, async () => {
      await fc.assert(
        fc.asyncProperty(ops, fc.constantFrom<Compacting>('often', 'never'), async (list, c) => {
          await playWithRestarts(open, list, c, join(tmp.dir, `run-${run++}`))
        }),
        // REPLAY_RUNS=1000 for a deeper search (400 each took some 45 s here).
        { numRuns: Number(process.env.REPLAY_RUNS ?? 60) },
      )
    })
  }
})
