import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { IdleCollector, LAST_RESORT, fullCollection } from '../../src/cli/idle-gc.js'

const MiB = 2 ** 20

describe('collecting when the server falls idle', () => {
  it('collects at the first tick without a request once the heap grew by 32 MiB, not while requests come', () => {
    const c = new IdleCollector(50 * MiB)
    expect(c.tick(10, 70 * MiB)).toBe(false) // requests came
    expect(c.tick(400, 90 * MiB)).toBe(false) // requests came, grown by 40
    expect(c.tick(400, 88 * MiB)).toBe(true) // none since: collect
    c.collected(55 * MiB)
    expect(c.tick(400, 55 * MiB)).toBe(false) // idle, but nothing grew since
    expect(c.tick(900, 80 * MiB)).toBe(false)
    expect(c.tick(900, 80 * MiB)).toBe(false) // idle, grown by 25 only
    expect(c.tick(1500, 95 * MiB)).toBe(false) // requests came
    expect(c.tick(1500, 95 * MiB)).toBe(true) // idle, grown by 40 since the collection
  })

  it('a full collection frees what nothing refers to', async () => {
    const ref = (() => new WeakRef({ big: new Array(1000).fill('x') }))()
    // A WeakRef's target lives until the job that made it ends.
    await new Promise((r) => setImmediate(r))
    fullCollection()
    expect(ref.deref()).toBeUndefined()
    fullCollection() // again: the collector is made once
  })

  it('a full collection compacts: pages that keep a few live records among garbage go back', () => {
    v8.setFlagsFromString('--expose-gc')
    const plain = runInNewContext('gc') as () => void // a collection as V8 makes them
    const kept: object[] = []
    let all: object[] = []
    for (let i = 0; i < 1_000_000; i++) {
      const o = { i, s: 'x' + i }
      all.push(o)
      if (i % 4 === 0) kept.push(o)
    }
    plain()
    plain() // all of them in the old space
    expect(all).toHaveLength(1_000_000) // (read: kept alive until here)
    all = []
    plain()
    plain() // the garbage goes; a quarter of each page stays live, and the pages stay
    const scattered = v8.getHeapStatistics().total_heap_size
    const rss = process.memoryUsage.rss()
    fullCollection()
    const compacted = v8.getHeapStatistics().total_heap_size
    expect(compacted).toBeLessThan(scattered * 0.75)
    // Handed back within the call where V8 can (a last-resort collection: Node 22 and later; on Node 24
    // a plain one raised the RSS by what the compaction touched). Node 20 hands them back soon after.
    if (LAST_RESORT) expect(process.memoryUsage.rss()).toBeLessThan(rss)
    expect(kept).toHaveLength(250_000)
  })
})
