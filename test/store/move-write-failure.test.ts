/**
 * A long clock move (batches, each a transaction written while the next runs) on a real data file
 * whose write to the write-ahead log fails: the move answers the failure, every batch from the failed one on is
 * taken back and none runs after it, and nothing is left unhandled (an unhandled rejection ends the
 * server's process).
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COLLECTIONS, type State } from '../../src/core/state.js'
import { StoreError } from '../../src/store/types.js'
import { tempDir } from '../helpers.js'
import { faults, openFile, subscribe } from './faulty-store.js'

describe('a long clock move whose batch cannot be written', () => {
  /**
   * A copy of every collection, in its order (records are replaced, never changed, once their
   * transaction ends): a rollback must put records back where they were, not only put them back.
   */
  const copy = (state: State) => COLLECTIONS.map((c) => [...(state[c] as Map<string, unknown>)])

  /** Settles a move that must fail: answers what it threw, or 'resolved'. */
  const failed = (move: Promise<unknown>) =>
    move.then(
      () => 'resolved',
      (e: unknown) => e,
    )

  describe('whose first batch fails to sync while the second is written behind it', () => {
    // Each flow has a temp dir of its own, kept until its checks are done.
    const own = tempDir()
    const unhandled: unknown[] = []
    let failure: unknown
    let before: ReturnType<typeof copy>
    let after: ReturnType<typeof copy>
    let reopened: ReturnType<typeof copy>
    beforeAll(async () => {
      const onUnhandled = (e: unknown) => unhandled.push(e)
      process.on('unhandledRejection', onUnhandled)
      const f = faults()
      const s = await openFile(join(own.dir, 'behind'), f.io, 'never')
      try {
        const [engine] = s.engines()
        await subscribe(engine!, '60123456001', 'STREAMPLUS')
        before = copy(s.states[0]!)
        // The first batch's write reaches the disk, then its sync fails: the second batch ran meanwhile, written behind it.
        f.arm('sync')
        // A year of monthly renewals, five events a batch.
        failure = await failed(engine!.advance('P1Y'))
        after = copy(s.states[0]!)
        // Unhandled rejections are told once the event loop's turn ends.
        await new Promise((resolve) => setImmediate(resolve))
        await s.crash()
        const again = await openFile(join(own.dir, 'behind'), f.io, 'never')
        reopened = copy(again.states[0]!)
        await again.close()
      } finally {
        process.off('unhandledRejection', onUnhandled)
        await s.close().catch(() => {})
      }
    })
    afterAll(() => own.cleanup())

    it('fails with a StoreError', () => {
      expect(failure).toBeInstanceOf(StoreError)
    })

    it('takes every batch back', () => {
      expect(after).toEqual(before)
    })

    it('raises no unhandled rejection for the batch written behind the failed one (that ends the server)', () => {
      expect(unhandled).toEqual([])
    })

    it('leaves nothing of itself for a restart after a crash to read', () => {
      expect(reopened).toEqual(before)
    })
  })

  describe('whose write fails before its next batch runs no batch after it', () => {
    const own = tempDir()
    let failure: unknown
    let before: ReturnType<typeof copy>
    let after: ReturnType<typeof copy>
    let reopened: ReturnType<typeof copy>
    beforeAll(async () => {
      const f = faults()
      const dir = join(own.dir, 'after')
      const s = await openFile(dir, f.io, 'never')
      const store = s.store!
      try {
        // The host's turn between batches lasts until the store wrote what it had (the failure is known before the next batch).
        const [engine] = s.engines({ yieldToHost: () => store.flush().catch(() => {}) })
        await subscribe(engine!, '60123456001', 'STREAMPLUS')
        before = copy(s.states[0]!)
        f.arm('throw')
        failure = await failed(engine!.advance('P1Y'))
        after = copy(s.states[0]!)
        await s.crash()
        const again = await openFile(dir, f.io, 'never')
        reopened = copy(again.states[0]!)
        await again.close()
      } finally {
        await s.close().catch(() => {})
      }
    })
    afterAll(() => own.cleanup())

    it('answers the failure (a StoreError)', () => {
      expect(failure).toBeInstanceOf(StoreError)
    })

    it('leaves nothing of itself in memory', () => {
      expect(after).toEqual(before)
    })

    it('leaves nothing of itself for a restart after a crash to read', () => {
      expect(reopened).toEqual(before)
    })
  })

  describe('whose one batch is too large to write on the main thread (> 64 KiB, written from the thread pool)', () => {
    // One engine and data file through a failed move, then one that works: the tests run in order.
    const own = tempDir()
    const dir = join(own.dir, 'large')
    const f = faults()
    let s: Awaited<ReturnType<typeof openFile>>
    let engine: ReturnType<typeof s.engines>[number]
    let before: ReturnType<typeof copy>
    let after: ReturnType<typeof copy>
    beforeAll(async () => {
      s = await openFile(dir, f.io, 'never')
      // One batch for the whole move: 60 subscriptions renewed monthly for a year, each renewal a charge and an SMS.
      ;[engine] = s.engines({ moveBatchEvents: 100_000, chargesPerSubscription: 100, maxSms: 10_000 })
      for (let i = 0; i < 60; i++) await subscribe(engine!, `601234560${String(i).padStart(2, '0')}`, 'STREAMPLUS')
      before = copy(s.states[0]!)
    })
    afterAll(async () => {
      await s?.close().catch(() => {})
      own.cleanup()
    })

    it('is taken back when its write fails', async () => {
      f.arm('throw')
      await expect(engine!.advance('P1Y')).rejects.toThrow(StoreError)
      expect(copy(s.states[0]!)).toEqual(before)
    })

    it('is kept when its write works', async () => {
      await engine!.advance('P1Y')
      after = copy(s.states[0]!)
      expect(after).not.toEqual(before)
    })

    it('is written as one line larger than what is written on the main thread', () => {
      const journal = readdirSync(dir).find((n) => /journal\.\d+$/.test(n))!
      const longest = Math.max(
        ...readFileSync(join(dir, journal), 'utf8')
          .split('\n')
          .map((l) => Buffer.byteLength(l.replace(/\0+$/, ''))),
      )
      expect(longest).toBeGreaterThan(64 * 1024)
    })

    it('is read back by a restart after a crash', async () => {
      await s.crash()
      const again = await openFile(dir, f.io, 'never')
      expect(copy(again.states[0]!)).toEqual(after)
      await again.close()
    })
  })
})
