/**
 * A long clock move (batches, each a transaction written while the next runs) on a real data file
 * whose write to the write-ahead log fails: the move answers the failure, every batch from the failed one on is
 * taken back and none runs after it, and nothing is left unhandled (an unhandled rejection ends the
 * server's process).
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { COLLECTIONS, type State } from '../../src/core/state.js'
import { StoreError } from '../../src/store/types.js'
import { tempDir } from '../helpers.js'
import { faults, openFile, subscribe } from './faulty-store.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

describe('a long clock move whose batch cannot be written', () => {
  /**
   * A copy of every collection, in its order (records are replaced, never changed, once their
   * transaction ends): a rollback must put records back where they were, not only put them back.
   */
  const copy = (state: State) => COLLECTIONS.map((c) => [...(state[c] as Map<string, unknown>)])

  it('fails, every batch taken back, and the batch written behind the failed one is no unhandled rejection (that ends the server)', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (e: unknown) => unhandled.push(e)
    process.on('unhandledRejection', onUnhandled)
    const f = faults()
    const s = await openFile(join(tmp.dir, 'behind'), f.io, 'never')
    try {
      const [engine] = s.engines()
      await subscribe(engine!, '60123456001', 'STREAMPLUS')
      const before = copy(s.states[0]!)
      // The first batch's write reaches the disk, then its sync fails: the second batch ran meanwhile, written behind it.
      f.arm('sync')
      // A year of monthly renewals, five events a batch.
      await expect(engine!.advance('P1Y')).rejects.toThrow(StoreError)
      expect(copy(s.states[0]!)).toEqual(before)
      // Unhandled rejections are told once the event loop's turn ends.
      await new Promise((resolve) => setImmediate(resolve))
      expect(unhandled).toEqual([])
      await s.crash()
      const again = await openFile(join(tmp.dir, 'behind'), f.io, 'never')
      expect(copy(again.states[0]!)).toEqual(before)
      await again.close()
    } finally {
      process.off('unhandledRejection', onUnhandled)
      await s.close().catch(() => {})
    }
  })

  it('runs no batch after one whose write failed: the move answers the failure and leaves nothing of itself', async () => {
    const f = faults()
    const dir = join(tmp.dir, 'after')
    const s = await openFile(dir, f.io, 'never')
    const store = s.store!
    try {
      // The host's turn between batches lasts until the store wrote what it had (the failure is known before the next batch).
      const [engine] = s.engines({ yieldToHost: () => store.flush().catch(() => {}) })
      await subscribe(engine!, '60123456001', 'STREAMPLUS')
      const before = copy(s.states[0]!)
      f.arm('throw')
      await expect(engine!.advance('P1Y')).rejects.toThrow(StoreError)
      expect(copy(s.states[0]!)).toEqual(before)
      await s.crash()
      const again = await openFile(dir, f.io, 'never')
      expect(copy(again.states[0]!)).toEqual(before)
      await again.close()
    } finally {
      await s.close().catch(() => {})
    }
  })

  it('a batch too large to write on the main thread (> 64 KiB, written from the thread pool) is taken back when its write fails, and kept when it works', async () => {
    const f = faults()
    const dir = join(tmp.dir, 'large')
    const s = await openFile(dir, f.io, 'never')
    try {
      // One batch for the whole move: 60 subscriptions renewed monthly for a year, each renewal a charge and an SMS.
      const [engine] = s.engines({ moveBatchEvents: 100_000, chargesPerSubscription: 100, maxSms: 10_000 })
      for (let i = 0; i < 60; i++) await subscribe(engine!, `601234560${String(i).padStart(2, '0')}`, 'STREAMPLUS')
      const before = copy(s.states[0]!)
      f.arm('throw')
      await expect(engine!.advance('P1Y')).rejects.toThrow(StoreError)
      expect(copy(s.states[0]!)).toEqual(before)
      await engine!.advance('P1Y')
      const after = copy(s.states[0]!)
      expect(after).not.toEqual(before)
      // The move was one line, larger than what is written on the main thread.
      const journal = readdirSync(dir).find((n) => /journal\.\d+$/.test(n))!
      const longest = Math.max(
        ...readFileSync(join(dir, journal), 'utf8')
          .split('\n')
          .map((l) => Buffer.byteLength(l.replace(/\0+$/, ''))),
      )
      expect(longest).toBeGreaterThan(64 * 1024)
      await s.crash()
      const again = await openFile(dir, f.io, 'never')
      expect(copy(again.states[0]!)).toEqual(after)
      await again.close()
    } finally {
      await s.close().catch(() => {})
    }
  })
})
