/**
 * The rules of one step, indexed by what most rules match on: the MSISDN's last digits (`ending`) or
 * the whole MSISDN (`msisdn`). A new number then costs a map lookup or two, not a pass over every
 * rule of the step (the default world has eleven `init` rules, each for one ending) and no cache key
 * to build: every call of a flow on a new number used to miss the cache and test each rule. The
 * index only leaves out rules that cannot match; each one it gives is still tested in full.
 */
import { ruleMatches, type CompiledRule, type RuleContext } from './rules.js'
import type { Candidates, RuleDecision } from './ruleset.js'

/** Rules the index cannot narrow beyond this many are cheap enough to test one by one, as long as none runs a regex. */
const DIRECT_REST = 8

export class StepRules {
  /** Exact MSISDN -> positions of the rules for it (ascending). */
  private readonly byMsisdn = new Map<string, number[]>()
  /** Ending -> positions of the rules for it (ascending), and the lengths of those endings. */
  private readonly byEnding = new Map<string, number[]>()
  private readonly endingLengths: number[] = []
  /** Positions of the rules the index cannot narrow (a prefix, a range, a regex, or no MSISDN part). */
  private readonly rest: number[] = []
  /**
   * Whether finding the candidates may cost more than a few comparisons (a regex, or many rules the
   * index cannot narrow): then they are worth keeping per context (`RuleSet` caches them).
   */
  readonly costly: boolean

  constructor(readonly rules: readonly CompiledRule[]) {
    rules.forEach((c, i) => {
      const m = c.rule.match
      if (m.msisdn !== undefined) push(this.byMsisdn, m.msisdn, i)
      else if (m.ending !== undefined) {
        push(this.byEnding, m.ending, i)
        if (!this.endingLengths.includes(m.ending.length)) this.endingLengths.push(m.ending.length)
      } else this.rest.push(i)
    })
    this.costly = this.rest.length > DIRECT_REST || this.rest.some((i) => rules[i]!.rule.match.regex !== undefined)
  }

  /** The rules that fit the context, in order, each as the decision it makes (ignoring `nth`, which is counted later). */
  candidates(ctx: RuleContext): Candidates | undefined {
    const msisdn = ctx.msisdn
    // Usually one source at most: its positions are in order already; several are merged and sorted.
    let found: number[] | undefined = this.rest.length ? this.rest : undefined
    let merged = false
    let more = this.byMsisdn.get(msisdn)
    for (let k = -1; k < this.endingLengths.length; k++) {
      if (k >= 0) {
        const n = this.endingLengths[k]!
        more = msisdn.length >= n ? this.byEnding.get(msisdn.slice(-n)) : undefined
      }
      if (!more) continue
      if (!found) found = more
      else {
        found = merged ? found.concat(more) : [...found, ...more]
        merged = true
      }
    }
    if (!found) return undefined
    if (merged) found.sort((a, b) => a - b)
    let list: RuleDecision[] | undefined
    let nth = false
    for (const i of found) {
      const c = this.rules[i]!
      const match = ruleMatches(c, ctx, true)
      if (!match) continue
      ;(list ??= []).push({ effect: c.rule.effect, rule: c.rule, compiled: c, match })
      if (c.rule.nth !== undefined) nth = true
    }
    return list && { list, nth }
  }
}

function push(map: Map<string, number[]>, key: string, i: number): void {
  const list = map.get(key)
  if (list) list.push(i)
  else map.set(key, [i])
}
