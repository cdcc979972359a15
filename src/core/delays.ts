/**
 * A rule's `delay_ms`: a number, or a distribution drawn from the session's seeded generator
 * (`{ min, max }` uniform, `{ median, p99 }` log-normal). Zod-free: the engine draws, the schema checks.
 */
import { MAX_DELAY_MS } from './limits.js'
import type { State } from './state.js'
import type { Tx } from './tx.js'

export type UniformDelay = { min: number; max: number }
export type LogNormalDelay = { median: number; p99: number }
export type DelaySpec = number | UniformDelay | LogNormalDelay

/** The seed of every reset that gives none (and of a session never reset). */
export const DEFAULT_SEED = 0

/** Where the session keeps its seed (`meta`; absent: DEFAULT_SEED) and how many draws it made since the reset (`counters`). */
export const SEED_KEY = 'delay.seed'
export const DRAWS_KEY = 'delay.draws'

/** The standard normal's 99th percentile: sigma = ln(p99 / median) / Z99. */
const Z99 = 2.3263478740408408

/** The seed a session's state holds (its last reset's). */
export function seedOf(state: State): number {
  const s = state.meta.get(SEED_KEY)
  return typeof s === 'number' ? s : DEFAULT_SEED
}

export function isDistribution(d: DelaySpec | undefined): d is UniformDelay | LogNormalDelay {
  return typeof d === 'object' && d !== null
}

/**
 * The longest a delay can hold an answer, for the bound check of held answers: a number itself, a
 * uniform its max. A log-normal has no largest draw: it counts its p99 (at most the bound), and a
 * draw from its tail past the bound is cut to the bound (`drawn`).
 */
export function largestDelay(d: DelaySpec | undefined): number {
  if (d === undefined) return 0
  if (typeof d === 'number') return d
  return 'max' in d ? d.max : d.p99
}

/** The words of a delay (`dcb scenarios`, the rules listing, bound messages): `250 ms`, `100-900 ms`, `median 200 ms, p99 2000 ms`. */
export function describeDelay(d: DelaySpec): string {
  if (typeof d === 'number') return `${d} ms`
  return 'max' in d ? `${d.min}-${d.max} ms (uniform)` : `median ${d.median} ms, p99 ${d.p99} ms (log-normal)`
}

/** ` + delay_ms N` in the bound message of `delay_per_unit`: what the check counted (a distribution's max or p99, named). */
export function delayTerm(d: DelaySpec | undefined): string {
  if (!d) return ''
  return ` + delay_ms ${largestDelay(d)}${typeof d === 'object' ? ('max' in d ? ', its max' : ', its p99') : ''}`
}

/** What is wrong with a distribution's two numbers together (each alone is checked by the schema), or undefined. */
export function delayProblem(d: DelaySpec): string | undefined {
  if (typeof d !== 'object') return undefined
  if ('max' in d && d.min > d.max) return `min ${d.min} is above max ${d.max}: give min <= max (equal for a fixed delay)`
  if ('p99' in d && d.p99 < d.median) return `p99 ${d.p99} is below the median ${d.median}: the 99th percentile is at least the median`
  return undefined
}

/** One draw of a delay from a number in (0, 1): whole milliseconds, at most MAX_DELAY_MS. */
export function drawn(d: UniformDelay | LogNormalDelay, u: number): number {
  if ('max' in d) return Math.min(d.min + Math.floor(u * (d.max - d.min + 1)), d.max)
  const sigma = Math.log(d.p99 / d.median) / Z99
  return Math.min(Math.round(d.median * Math.exp(sigma * normalQuantile(u))), MAX_DELAY_MS)
}

/**
 * The n-th number of a seed's sequence, in (0, 1): a hash of (seed, n), not a generator's state.
 * A draw reads two numbers and writes one (the count), so it is the same on every store, on every
 * replica of a shared one and after a restart; and the same calls after the same reset get the
 * same numbers. 53 bits from two 32-bit hashes (the finalizer of MurmurHash3).
 */
export function seededUnit(seed: number, n: number): number {
  let h = mix(mix(seed >>> 0) ^ Math.floor(seed / 2 ** 32))
  h = mix(h ^ mix(n >>> 0) ^ Math.floor(n / 2 ** 32))
  const h2 = mix(h ^ 0x9e3779b9)
  return ((h >>> 5) * 67_108_864 + (h2 >>> 6) + 0.5) / 9_007_199_254_740_992
}

function mix(x: number): number {
  let h = x | 0
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** The standard normal's quantile (Acklam's rational approximation, relative error under 1.2e-9), for p in (0, 1). */
export function normalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.928510446969, 138.357751867269, -30.66479806614716, 2.506628277459239]
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572]
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783]
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416]
  const low = 0.02425
  if (p < low || p > 1 - low) {
    const q = Math.sqrt(-2 * Math.log(p < low ? p : 1 - p))
    const x = (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    return p < low ? x : -x
  }
  const q = p - 0.5
  const r = q * q
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  )
}

/**
 * The session's generator of delays. Its seed and its count of draws are session state, so every
 * store keeps them (and a shared one gives them to every replica). A draw numbers itself by the
 * count since the reset: the count is written in the call's transaction, which is why a Status that
 * a distribution decides takes a write turn (as one a counting `nth` rule decides does) and every
 * other Status stays a read.
 */
export class DelayDraws {
  constructor(private readonly state: State) {}

  /** The session's seed (set by the last reset). */
  get seed(): number {
    return seedOf(this.state)
  }

  /** In a reset's transaction (the state emptied): the seed kept, unless it is the default one (absent reads as it). */
  reseed(tx: Tx, seed: number | undefined): void {
    if (seed !== undefined && seed !== DEFAULT_SEED) tx.put('meta', SEED_KEY, seed)
  }

  /** A delay's milliseconds: a number as it is, a distribution drawn as the next number of the sequence. */
  draw(tx: Tx, d: DelaySpec | undefined): number {
    if (!isDistribution(d)) return d ?? 0
    const n = (this.state.counters.get(DRAWS_KEY) ?? 0) + 1
    tx.put('counters', DRAWS_KEY, n)
    return drawn(d, seededUnit(this.seed, n))
  }
}
