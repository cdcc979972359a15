import { describe, expect, it } from 'vitest'
import { SharedDatabase } from '../../src/store/postgres.js'
import { StoreError } from '../../src/store/types.js'
import { usePostgres } from './use-postgres.js'

// A session's calls wait in turns: a turn with a write in it takes the lock, and the reads queued
// beside that write wait in it too. When the database cannot be reached, the write is told its change
// was not made, and each read beside it that it could not be read: a read asked for no change.
describe('a read waiting in a write turn while the database is away', () => {
  const pg = usePostgres()

  it('is refused as a read (cannot be reached, outcome "not read"), the write beside it as a change not made', async () => {
    const url = await pg.createDatabase('turns')
    const db = await SharedDatabase.open({ url, world: { name: 'turns' }, callTimeoutMs: 1000 })
    try {
      const { store } = await db.session('default')
      await pg.stop()
      // The first call starts a turn of its own (a read); the two queued behind it share the next one, which holds a write.
      const first = store.gate.sync()
      const write = store.gate.enter()
      const read = store.gate.sync()
      const [a, w, r] = await Promise.allSettled([first, write, read])
      for (const s of [a, w, r]) expect(s.status).toBe('rejected')
      const firstErr = (a as PromiseRejectedResult).reason
      const writeErr = (w as PromiseRejectedResult).reason
      const readErr = (r as PromiseRejectedResult).reason
      expect(firstErr).toBeInstanceOf(StoreError)
      expect(firstErr.outcome).toBe('not read')
      expect(writeErr).toBeInstanceOf(StoreError)
      expect(writeErr.outcome).not.toBe('not read')
      expect(writeErr.message).toMatch(/cannot be used: /)
      expect(readErr).toBeInstanceOf(StoreError)
      expect(readErr.outcome).toBe('not read')
      expect(readErr.message).toMatch(/^the database at \S+ cannot be reached: /)
    } finally {
      await pg.start()
      await db.close?.()
    }
  }, 30_000)
})
