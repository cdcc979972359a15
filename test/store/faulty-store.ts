/**
 * Stores over real files whose writes to the write-ahead log can be made to fail (the StoreIo seam, below the
 * store), with an engine per session, for the tests of replay after failed writes and restarts.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EngineOptions } from '../../src/core/context.js'
import { Engine, SandboxError } from '../../src/core/engine.js'
import { State, type Change } from '../../src/core/state.js'
import { loadWorld } from '../../src/world/load.js'
import { FileStore } from '../../src/store/file.js'
import { SessionWal } from '../../src/store/session-wal.js'
import { StoreError } from '../../src/store/types.js'
import type { StoreIo } from '../../src/store/wal.js'

const world = loadWorld().world
/** How the next write to the write-ahead log fails, or (`snapshot`) the next snapshot write: the compaction fails and keeps the logs. */
export type Fault = 'throw' | 'short' | 'sync' | 'snapshot'

/** The next write of a write-ahead log, or of a snapshot, fails as told. */
export function faults(): { arm(how: Fault): void; io: StoreIo } {
  let next: Fault | null = null
  const journal = (file: string) => /journal\.\d+$/.test(file)
  return {
    arm: (how) => (next = how),
    io: {
      beforeWrite(file, bytes) {
        if (next === 'snapshot' && !journal(file)) {
          next = null
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
        }
        if (!journal(file) || next === null || next === 'sync' || next === 'snapshot') return
        const how = next
        next = null
        if (how === 'throw') throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
        return Math.floor(bytes / 2)
      },
      beforeSync(file) {
        if (!journal(file) || next !== 'sync') return
        next = null
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
      },
    },
  }
}

/** A store opened over real files, with an engine per session. */
export interface Opened {
  /** Made after the states were compared: an engine starts its clock with a write of its own. */
  engines: (extra?: Partial<EngineOptions>) => Engine[]
  states: State[]
  /** The default data file's store (none for the sessions). */
  store?: FileStore
  /** As a killed server leaves it (no snapshot, a stale lock), but for a failed write's tail: cut, as the next write would. */
  crash(): Promise<void>
  close(): Promise<void>
  compact(): Promise<void>
  /** Deletes session `k` and makes it anew, empty (the sessions' write-ahead log only); `states[k]` is then the new one's. */
  remake?(k: number): Promise<void>
}

function engineOn(state: State, persist: (ch: Change[], undo?: () => void) => Promise<void>, extra?: Partial<EngineOptions>): Engine {
  // Small caps and short histories, so that the oldest records are dropped and histories cut; long
  // moves in batches of a few events, each a transaction of its own.
  return new Engine({
    world,
    state,
    persist,
    clockStart: { at: Date.parse('2026-01-31T09:00:00Z'), frozen: true },
    chargesPerSubscription: 4,
    smsPerMsisdn: 3,
    maxSms: 25,
    maxVerifications: 6,
    moveBatchEvents: 5,
    ...extra,
  })
}

/** Compactions every few calls, or none (restarts then read write-ahead logs written across several runs). */
export type Compacting = 'often' | 'never'
const compactBytes = (c: Compacting) => (c === 'often' ? 4000 : 2 ** 30)

export async function openFile(dir: string, io: StoreIo, c: Compacting): Promise<Opened> {
  const path = join(dir, 'sandbox.json')
  const store = new FileStore(path, { io, compactBytes: compactBytes(c) })
  const state = new State()
  await store.open(state)
  const settled = async () => {
    while ((store as any).compaction.running) await (store as any).compaction.running.catch(() => {})
  }
  return {
    store,
    engines: (extra) => [engineOn(state, (ch, undo) => store.append(ch, undo), extra)],
    states: [state],
    async crash() {
      await settled()
      ;(store as any).lock.held = false
      writeFileSync(`${path}.lock`, '999999999\n')
      await (store as any).wal.close()
    },
    close: () => store.close(),
    compact: () => store.compact().catch(() => {}),
  }
}

export async function openSessions(dir: string, io: StoreIo, c: Compacting): Promise<Opened> {
  const journal = new SessionWal(join(dir, 'sessions'), { io, compactBytes: compactBytes(c) })
  await journal.open()
  const names = ['a', 'b']
  const stores = await Promise.all(names.map((n) => journal.store(n)))
  const states = stores.map((s) => s.state)
  const settled = async () => {
    while ((journal as any).compaction.running) await (journal as any).compaction.running.catch(() => {})
  }
  return {
    engines: (extra) => stores.map((s) => engineOn(s.state, (ch, undo) => s.append(ch, undo), extra)),
    states,
    async remake(k) {
      await tolerant(journal.drop(names[k]!))
      stores[k] = await journal.store(names[k]!)
      states[k] = stores[k]!.state
    },
    async crash() {
      await settled()
      await (journal as any).wal.close()
    },
    close: () => journal.close(),
    compact: () => journal.compact().catch(() => {}),
  }
}

/** Failed writes (StoreError) and refusals (SandboxError) are outcomes; anything else is a bug. */
export async function tolerant<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p
  } catch (e) {
    if (e instanceof StoreError || e instanceof SandboxError) return undefined
    throw e
  }
}

export async function subscribe(engine: Engine, msisdn: string, service: string): Promise<void> {
  const merchant = engine.authenticate('sandbox-demo-key')!
  const init = await tolerant(engine.init(merchant, { msisdn, service_code: service, country_code: 'my' }, { baseUrl: '' }))
  if (init?.code !== 'SUCCESS') return
  const otp = engine.latestOtp(msisdn)?.otp
  if (otp) await tolerant(engine.verify(merchant, { verif_request_id: init.payload!.verif_request_id as string, otp }))
}
