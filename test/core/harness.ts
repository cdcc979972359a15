/**
 * An engine without HTTP, as `src/server.ts` builds it: the default world from the loader, a State,
 * a MemoryStore behind `persist`, the clock frozen at a given time (or running on a fake real time).
 */
import { Engine, type EngineOptions } from '../../src/core/engine.js'
import { State, type Change, type SmsRecord } from '../../src/core/state.js'
import { parseTimestamp } from '../../src/core/time.js'
import type { World } from '../../src/core/world.js'
import { MemoryStore } from '../../src/store/memory.js'
import { readFileSync } from 'node:fs'
import { layerWorlds, type LayeredWorld } from '../../src/core/layering.js'
import { loadWorld } from '../../src/world/load.js'

let defaultWorld: World | undefined
export const world = (): World => (defaultWorld ??= loadWorld().world)

export interface Harness {
  engine: Engine
  state: State
  /** Every transaction's changes, as persisted, in order. */
  persisted: Change[][]
  /** Init + the OTP from the inbox + Verify (demo merchant); answers the subscription id. */
  subscribe(msisdn: string, service?: string, country?: string): Promise<string>
}

/** An engine whose clock starts frozen at `clock` (ISO-8601, UTC). */
export function engineAt(clock: string, opts: Partial<EngineOptions> = {}): Harness {
  return build({ clockStart: { at: parseTimestamp(clock), frozen: true }, ...opts })
}

export function build(opts: Partial<EngineOptions> = {}): Harness {
  const state = opts.state ?? new State()
  const store = new MemoryStore()
  const persisted: Change[][] = []
  const engine = new Engine({
    world: world(),
    state,
    persist: (changes) => {
      persisted.push(changes)
      return store.append(changes)
    },
    ...opts,
  })
  const subscribe = async (msisdn: string, service = 'STREAMPLUS', country = 'my') => {
    const demo = engine.authenticate('sandbox-demo-key')!
    const init = await engine.init(demo, { msisdn, service_code: service, country_code: country }, { baseUrl: 'http://sandbox.test' })
    if (init.code !== 'SUCCESS') throw new Error(`init failed: ${init.code}`)
    const otp = engine.latestOtp(msisdn)!.otp!
    const verify = await engine.verify(demo, { verif_request_id: init.payload!.verif_request_id as string, otp })
    if (verify.code !== 'SUCCESS') throw new Error(`verify failed: ${verify.code}`)
    return verify.payload!.subscription_id as string
  }
  return { engine, state, persisted, subscribe }
}

/** Epoch ms of an ISO-8601 time (UTC). */
export const at = (text: string): number => parseTimestamp(text)

/** The default world with these documents layered on it (as `--fixtures` files a.json, b.json …). */
export function layered(...docs: unknown[]): LayeredWorld {
  const data = JSON.parse(readFileSync('fixtures/world.json', 'utf8'))
  const r = layerWorlds([{ source: 'fixtures/world.json', data }, ...docs.map((doc, i) => ({ source: `${'abcdefgh'[i]}.json`, data: doc }))])
  if (!r.ok) throw new Error(r.problems.join('\n'))
  return r
}

/** An SMS record as the inbox stores one (numbered `n`), for tests of the state's indexes and order. */
export const smsRecord = (id: string, n: number, msisdn = '601200000001'): SmsRecord => ({
  id,
  n,
  msisdn,
  direction: 'mt',
  from: 'Stream Plus',
  to: msisdn,
  text: `message ${n}`,
  at: 1000 + n,
  kind: 'otp',
})
