/** The schema of a rule's `delay_ms` (delays.ts draws it): a number, `{ min, max }` or `{ median, p99 }`, each within the bound of held answers. */
import { z } from 'zod'
import { delayProblem, type DelaySpec } from './delays.js'
import { MAX_DELAY_MS } from './limits.js'
import { didYouMean } from './nearest.js'

const UNIFORM = ['min', 'max']
const LOG_NORMAL = ['median', 'p99']
const SHAPES = 'a number of ms, { "min": A, "max": B } (uniform) or { "median": M, "p99": P } (log-normal)'

/** Whole milliseconds from `least`, at most the bound; a number over it says the bound. */
const ms = (least: number) =>
  z
    .number({ error: 'expected a whole number of ms' })
    .int({ error: 'expected a whole number of ms' })
    .min(least, { error: least ? `at least ${least} ms (a log-normal needs a median and p99 above 0)` : 'at least 0 ms' })
    .max(MAX_DELAY_MS, { error: (iss) => `${String(iss.input)} ms is over the bound of held answers: at most ${MAX_DELAY_MS} ms (60 s)` })

/**
 * Why a value is none of the three shapes, for the union's own error (zod names a field itself
 * when one shape is plainly meant): the shape its keys mean, what it lacks or has too many, or
 * which of its numbers is not whole milliseconds.
 */
function shapeProblem(v: unknown): string {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return `expected ${SHAPES}, not ${JSON.stringify(v)}`
  const keys = Object.keys(v)
  const shape = keys.some((k) => k === 'min' || k === 'max') ? UNIFORM : keys.some((k) => k === 'median' || k === 'p99') ? LOG_NORMAL : undefined
  if (!shape) return `expected ${SHAPES}${keys.length ? `; unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => JSON.stringify(k)).join(', ')}` : ''}`
  const name = shape === UNIFORM ? 'a uniform delay' : 'a log-normal delay'
  const extra = keys.filter((k) => !shape.includes(k))
  if (extra.length)
    return `${name} takes ${shape.join(' and ')}: unknown key ${extra
      .map(
        (k) =>
          JSON.stringify(k) +
          didYouMean(
            k,
            shape.filter((s) => !keys.includes(s)),
          ),
      )
      .join(', ')}`
  const missing = shape.filter((k) => !keys.includes(k))
  if (missing.length) return `${name} needs both ${shape.join(' and ')} (${missing.join(', ')} missing)`
  const bad = shape.find((k) => !Number.isInteger((v as Record<string, unknown>)[k]))
  return `${name}: ${bad ?? shape[0]} ${JSON.stringify((v as Record<string, unknown>)[bad ?? shape[0]!])} is not a whole number of ms`
}

export const DelaySchema: z.ZodType<DelaySpec> = z
  .union([ms(0), z.object({ min: ms(0), max: ms(0) }).strict(), z.object({ median: ms(1), p99: ms(1) }).strict()], {
    error: (iss) => shapeProblem(iss.input),
  })
  .superRefine((d, ctx) => {
    const problem = delayProblem(d)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })
