/** The schema of a rule's `delay_ms` (delays.ts draws it): a number, `{ min, max }` or `{ median, p99 }`, each within the bound of held answers. */
import { z } from 'zod'
import { delayProblem, type DelaySpec } from './delays.js'
import { MAX_DELAY_MS } from './limits.js'

const SHAPES = 'a number of ms, { "min": A, "max": B } (uniform) or { "median": M, "p99": P } (log-normal)'

/** Whole milliseconds from `least`, at most the bound; a number over it says the bound. */
const ms = (least: number) =>
  z
    .number({ error: 'expected a whole number of ms' })
    .int({ error: 'expected a whole number of ms' })
    .min(least, { error: least ? `at least ${least} ms (a log-normal needs a median and p99 above 0)` : 'at least 0 ms' })
    .max(MAX_DELAY_MS, { error: (iss) => `${String(iss.input)} ms is over the bound of held answers: at most ${MAX_DELAY_MS} ms (60 s)` })

/** Why a value is none of the three shapes (missing keys, another type), for the union's own error. */
function shapeProblem(v: unknown): string {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return `expected ${SHAPES}, not ${JSON.stringify(v)}`
  const keys = Object.keys(v)
  if (keys.includes('min') || keys.includes('max')) return `a uniform delay needs both min and max (got ${keys.join(', ')})`
  if (keys.includes('median') || keys.includes('p99')) return `a log-normal delay needs both median and p99 (got ${keys.join(', ')})`
  return `expected ${SHAPES}${keys.length ? `; unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => JSON.stringify(k)).join(', ')}` : ''}`
}

export const DelaySchema: z.ZodType<DelaySpec> = z
  .union([ms(0), z.object({ min: ms(0), max: ms(0) }).strict(), z.object({ median: ms(1), p99: ms(1) }).strict()], {
    error: (iss) => shapeProblem(iss.input),
  })
  .superRefine((d, ctx) => {
    const problem = delayProblem(d)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })
