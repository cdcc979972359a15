/**
 * Delay distributions (`delay_ms` as `{ min, max }` or `{ median, p99 }`) drawn from the session's
 * seeded generator: the numbers it draws, their bounds and shape over many draws (seeded, so the
 * same every run), and the engine's draws: the same after a reset with the same seed, others with
 * another, numbered by a count in the session's state.
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_SEED, DRAWS_KEY, drawn, largestDelay, normalQuantile, seededUnit, SEED_KEY } from '../../src/core/delays.js'
import { MAX_DELAY_MS } from '../../src/core/limits.js'
import { build, engineAt, layered } from './harness.js'

const draws = (spec: Parameters<typeof drawn>[0], seed: number, n: number) => Array.from({ length: n }, (_, i) => drawn(spec, seededUnit(seed, i + 1)))
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b)
const quantile = (xs: number[], q: number) => sorted(xs)[Math.floor(q * xs.length)]!

describe('the seeded numbers', () => {
  const seven = () => Array.from({ length: 1000 }, (_, i) => seededUnit(7, i + 1))

  it('are in (0, 1)', () => {
    expect(seven().every((u) => u > 0 && u < 1)).toBe(true)
  })

  it('are the same for the same seed at the same number', () => {
    const a = seven()
    expect(Array.from({ length: 1000 }, (_, i) => seededUnit(7, i + 1))).toEqual(a)
  })

  it('differ for another seed', () => {
    const a = seven()
    const b = Array.from({ length: 1000 }, (_, i) => seededUnit(8, i + 1))
    expect(a.filter((u, i) => u === b[i]).length).toBe(0)
    // A seed past 32 bits is a seed of its own, not its low bits.
    expect(seededUnit(2 ** 40 + 7, 1)).not.toBe(seededUnit(7, 1))
  })

  it('spread evenly over (0, 1)', () => {
    // Each tenth of (0, 1) gets about a tenth of 20,000 numbers.
    const tenths = new Array(10).fill(0)
    for (let i = 1; i <= 20_000; i++) tenths[Math.floor(seededUnit(DEFAULT_SEED, i) * 10)]++
    for (const n of tenths) expect(Math.abs(n - 2000)).toBeLessThan(200)
  })

  it("the normal quantile is the standard normal's", () => {
    expect(normalQuantile(0.5)).toBeCloseTo(0, 9)
    expect(normalQuantile(0.99)).toBeCloseTo(2.3263478740408408, 6)
    expect(normalQuantile(0.01)).toBeCloseTo(-2.3263478740408408, 6)
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 6)
    expect(normalQuantile(1e-9)).toBeCloseTo(-5.997807015, 4)
  })
})

describe('draws of a distribution', () => {
  const uniform = () => draws({ min: 100, max: 900 }, 3, 20_000)

  it('uniform: every draw is a whole number within [min, max]', () => {
    expect(uniform().every((x) => Number.isInteger(x) && x >= 100 && x <= 900)).toBe(true)
  })

  it('uniform: both bounds are reached', () => {
    const xs = uniform()
    expect([Math.min(...xs), Math.max(...xs)]).toEqual([100, 900])
  })

  it('uniform: draws spread evenly, their mean mid-way', () => {
    const xs = uniform()
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length
    expect(Math.abs(mean - 500)).toBeLessThan(10)
  })

  it('uniform: min equal to max draws that one value', () => {
    expect(draws({ min: 250, max: 250 }, 3, 100).every((x) => x === 250)).toBe(true)
  })

  it('log-normal: the quantiles drawn (median, p99) are about those given', () => {
    for (const [median, p99] of [
      [200, 2000],
      [50, 60],
      [1000, 30_000],
    ] as const) {
      const xs = draws({ median, p99 }, 11, 40_000)
      expect(Math.abs(quantile(xs, 0.5) / median - 1)).toBeLessThan(0.05)
      expect(Math.abs(quantile(xs, 0.99) / p99 - 1)).toBeLessThan(0.1)
      expect(xs.every((x) => Number.isInteger(x) && x >= 0 && x <= MAX_DELAY_MS)).toBe(true)
    }
    // p99 equal to the median: no spread at all.
    expect(draws({ median: 300, p99: 300 }, 11, 100).every((x) => x === 300)).toBe(true)
  })

  it('log-normal: a draw from the tail past the bound is cut to the bound', () => {
    const xs = draws({ median: 20_000, p99: 60_000 }, 5, 20_000)
    const cut = xs.filter((x) => x === MAX_DELAY_MS).length
    // About 1% of draws lie past p99, here the bound itself: each is cut to it.
    expect(cut).toBeGreaterThan(100)
    expect(cut).toBeLessThan(300)
    expect(Math.max(...xs)).toBe(MAX_DELAY_MS)
  })

  it('the bound check takes p99 as the largest delay of a log-normal', () => {
    expect(largestDelay({ median: 20_000, p99: 60_000 })).toBe(60_000)
    expect(largestDelay({ min: 5, max: 70 })).toBe(70)
    expect(largestDelay(40)).toBe(40)
  })
})

describe("the engine's draws", () => {
  const SLOW = { id: 'slow-091', match: { ending: '091' }, step: 'api', effect: { delay_ms: { min: 1, max: 5000 } } }
  const world = () =>
    layered({ rules: [SLOW, { id: 'lognormal-092', match: { ending: '092' }, step: 'status', effect: { delay_ms: { median: 400, p99: 4000 } } }] }).world
  const delays = async (h: ReturnType<typeof build>, n: number) => {
    const demo = h.engine.authenticate('sandbox-demo-key')!
    const out: (number | undefined)[] = []
    for (let i = 0; i < n; i++) {
      const msisdn = `601234${String(i).padStart(2, '0')}091`
      out.push((await h.engine.init(demo, { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: 'http://sandbox.test' })).delayMs)
    }
    return out
  }
  const expected = (seed: number, from: number, n: number) => Array.from({ length: n }, (_, i) => drawn({ min: 1, max: 5000 }, seededUnit(seed, from + i)))

  it('a reset with the same seed gives the same delays, another seed others, no seed the default one', async () => {
    const h = engineAt('2026-01-31T00:00:00', { world: world() })
    expect(await delays(h, 50)).toEqual(expected(DEFAULT_SEED, 1, 50))
    await h.engine.reset(undefined, 42)
    const first = await delays(h, 50)
    expect(first).toEqual(expected(42, 1, 50))
    await h.engine.reset(undefined, 42)
    expect(await delays(h, 50)).toEqual(first)
    await h.engine.reset(undefined, 43)
    const other = await delays(h, 50)
    expect(other.filter((d, i) => d === first[i]).length).toBeLessThan(3)
    // No seed: the default one, whatever the seed before.
    await h.engine.reset()
    expect(await delays(h, 50)).toEqual(expected(DEFAULT_SEED, 1, 50))
    expect([h.state.meta.has(SEED_KEY), h.state.counters.get(DRAWS_KEY)]).toEqual([false, 50])
  })

  it('an engine on the same session state draws on from its seed, count', async () => {
    const h = engineAt('2026-01-31T00:00:00', { world: world() })
    await h.engine.reset(undefined, 9)
    await delays(h, 3)
    expect([h.state.meta.get(SEED_KEY), h.state.counters.get(DRAWS_KEY)]).toEqual([9, 3])
    // A restart reads the state the store kept: the next draw is the fourth of seed 9.
    const again = build({ world: world(), state: h.state })
    expect((await delays(again, 1))[0]).toBe(expected(9, 4, 1)[0])
  })

  const twoStatuses = async () => {
    const h = engineAt('2026-01-31T00:00:00', { world: world() })
    const demo = h.engine.authenticate('sandbox-demo-key')!
    const drawing = await h.subscribe('60123456092')
    const plain = await h.subscribe('60123456093')
    return { h, demo, drawing, plain }
  }

  it('a Status no distribution decides stays a read', async () => {
    const { h, demo, drawing, plain } = await twoStatuses()
    h.engine.perform(demo, { op: 'status', input: { subscription_id: drawing } })
    expect(h.engine.perform(demo, { op: 'status', input: { subscription_id: plain } }).durable).toBeNull()
  })

  it('a Status a distribution decides writes its draw', async () => {
    const { h, demo, drawing, plain } = await twoStatuses()
    const a = h.engine.perform(demo, { op: 'status', input: { subscription_id: drawing } })
    expect(a.durable).not.toBeNull()
    expect(a.result.delayMs).toBe(drawn({ median: 400, p99: 4000 }, seededUnit(DEFAULT_SEED, 1)))
    // A plain Status between draws nothing.
    h.engine.perform(demo, { op: 'status', input: { subscription_id: plain } })
    const b = h.engine.perform(demo, { op: 'status', input: { subscription_id: drawing } })
    expect(b.result.delayMs).toBe(drawn({ median: 400, p99: 4000 }, seededUnit(DEFAULT_SEED, 2)))
  })
})
