import { describe, expect, it } from 'vitest'
import { IdleCollector, fullCollection } from '../../src/cli/idle-gc.js'

const MiB = 2 ** 20

describe('collecting when the server falls idle', () => {
  it('collects once the heap stands still after growing by 32 MiB, not while it moves', () => {
    const c = new IdleCollector(50 * MiB)
    expect(c.tick(70 * MiB)).toBe(false) // busy
    expect(c.tick(90 * MiB)).toBe(false) // busy, grown by 40
    expect(c.tick(90 * MiB + 100_000)).toBe(true) // still: collect
    c.collected(55 * MiB)
    expect(c.tick(55 * MiB)).toBe(false) // still, but nothing grew since
    expect(c.tick(80 * MiB)).toBe(false)
    expect(c.tick(80 * MiB)).toBe(false) // still, grown by 25 only
    expect(c.tick(95 * MiB)).toBe(false) // busy
    expect(c.tick(95 * MiB)).toBe(true) // still, grown by 40 since the collection
  })

  it('a full collection frees what nothing refers to', async () => {
    const ref = (() => new WeakRef({ big: new Array(1000).fill('x') }))()
    // A WeakRef's target lives until the job that made it ends.
    await new Promise((r) => setImmediate(r))
    fullCollection()
    expect(ref.deref()).toBeUndefined()
    fullCollection() // again: the collector is made once
  })
})
