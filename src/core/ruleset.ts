/**
 * The carrier rules in force: the world's (fixture) rules and the runtime rules added through the
 * control API (these first, newest first), indexed by step. Answers what a step does in a context,
 * counting occurrences (`nth`) and uses (`times`) inside the caller's transaction.
 */
import { RuleSchema, type Rule, type RuleEffect, type Step } from './world-schema.js'
import { compileRule, effectDelay, effectIsEmpty, ruleMatches, type CompiledRule, type RuleContext } from './rules.js'
import type { RuntimeRuleRecord, State, Tx } from './state.js'

/** What decided a step: the effect and the rule it came from. */
export interface RuleDecision {
  effect: RuleEffect
  rule: Rule
}

const NO_RULES: readonly CompiledRule[] = Object.freeze([])

/** A world's rules compiled once, whatever the number of engines (sessions) over it. */
const compiledWorlds = new WeakMap<Rule[], CompiledRule[]>()

export class RuleSet {
  private readonly fixture: CompiledRule[]
  private runtime: CompiledRule[] = []
  /** Runtime rules (newest first) then fixture rules, per step: what `effect` and `delay` scan. */
  private byStep = new Map<Step, CompiledRule[]>()
  /** Delays decided by rules without `times`/`nth`, per MSISDN + context (cleared when rules change). */
  private delays = new Map<string, number | undefined>()
  /** Counts changes of the rules: what was found under an older version is to be found anew. */
  version = 0

  constructor(
    private readonly state: State,
    worldRules: Rule[],
  ) {
    let compiled = compiledWorlds.get(worldRules)
    if (!compiled) compiledWorlds.set(worldRules, (compiled = worldRules.map((r) => compileRule(r))))
    this.fixture = compiled
    this.reload()
  }

  /** Reads the runtime rules from the state again (after they changed, or a reset). */
  reload(): void {
    const records = [...this.state.rules.values()].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1))
    this.runtime = records.map((r) => compileRule(RuleSchema.parse(r.rule), true))
    this.delays = new Map()
    this.byStep = new Map()
    this.version++
    for (const c of [...this.runtime, ...this.fixture])
      for (const step of c.steps) {
        // Delay effects act at the `api` step only; other effects never at `api`.
        const isDelay = c.rule.effect.delay_ms !== undefined || c.rule.effect.delay_per_unit !== undefined
        if ((step === 'api') !== isDelay && !(step === 'api' && effectIsEmpty(c.rule.effect))) continue
        let list = this.byStep.get(step)
        if (!list) this.byStep.set(step, (list = []))
        list.push(c)
      }
  }

  /** The rules of the loaded world and the runtime rules, for `dcb scenarios`. */
  list(): { fixture: CompiledRule['rule'][]; runtime: (RuntimeRuleRecord & { rule: unknown })[] } {
    return {
      fixture: this.fixture.map((c) => c.rule),
      runtime: [...this.state.rules.values()].sort((a, b) => a.created_at - b.created_at),
    }
  }

  /**
   * The effect of the first rule (runtime rules first, newest first) that fits this step, counting
   * the occurrence for `nth` and the use for `times`. Rules with an empty effect stop the search.
   */
  effect(tx: Tx, ctx: RuleContext): RuleEffect | undefined {
    return this.firstDecision(tx, ctx.step, ctx.msisdn, this.matching(ctx))?.effect
  }

  /** As `effect`, with the rule that decided (its id names it in a failure's reason). */
  decide(tx: Tx, ctx: RuleContext): RuleDecision | undefined {
    return this.firstDecision(tx, ctx.step, ctx.msisdn, this.matching(ctx))
  }

  /** `effect` over the candidate rules found already; occurrences are counted under `counterKey`. */
  firstEffect(tx: Tx, step: Step, counterKey: string, rules: readonly CompiledRule[]): RuleEffect | undefined {
    return this.firstDecision(tx, step, counterKey, rules)?.effect
  }

  private firstDecision(tx: Tx, step: Step, counterKey: string, rules: readonly CompiledRule[]): RuleDecision | undefined {
    if (!rules.length) return undefined
    // Occurrences are counted only where a rule with `nth` could match (a year of renewals of
    // ordinary numbers writes no counters).
    let nth: number | undefined
    if (rules.some((c) => c.rule.nth !== undefined)) {
      const key = `${step}:${counterKey}`
      nth = (this.state.counters.get(key) ?? 0) + 1
      tx.put('counters', key, nth)
    }
    for (const c of rules) {
      if (c.rule.nth !== undefined && c.rule.nth !== nth) continue
      if (!this.use(tx, c)) continue
      return { effect: c.rule.effect, rule: c.rule }
    }
    return undefined
  }

  /**
   * The rules of a step whose match fits this MSISDN, country, carrier and service (whatever the
   * occurrence or the uses left), in order. Renewals keep theirs in the subscription's plan.
   */
  matching(ctx: RuleContext): readonly CompiledRule[] {
    const found = this.byStep.get(ctx.step)?.filter((c) => ruleMatches(c, ctx, true))
    return found?.length ? found : NO_RULES
  }

  /** The answer delay for an MSISDN (the `api` step: 5NN endings and delay rules). */
  delay(tx: Tx, ctx: Omit<RuleContext, 'step'>): number | undefined {
    const key = `${ctx.msisdn}\0${ctx.service}\0${ctx.carrier}`
    if (this.delays.has(key)) return this.delays.get(key)
    const full: RuleContext = { ...ctx, step: 'api' }
    let result: number | undefined
    let cacheable = true
    for (const c of this.byStep.get('api') ?? []) {
      const m = ruleMatches(c, full)
      if (!m) continue
      if (c.rule.times !== undefined || c.rule.nth !== undefined) cacheable = false
      if (effectIsEmpty(c.rule.effect)) break
      if (!this.use(tx, c)) continue
      result = effectDelay(c.rule.effect, m) || undefined
      break
    }
    if (cacheable) {
      if (this.delays.size >= 10_000) this.delays.clear()
      this.delays.set(key, result)
    }
    return result
  }

  /** Counts a use of a rule with `times`; false when it is spent. */
  private use(tx: Tx, c: CompiledRule): boolean {
    if (c.rule.times === undefined) return true
    if (c.runtime) {
      const rec = this.state.rules.get(c.rule.id)
      if (!rec || rec.used >= c.rule.times) return false
      tx.put('rules', rec.id, { ...rec, used: rec.used + 1 })
      return true
    }
    const key = `rule:${c.rule.id}`
    const used = this.state.counters.get(key) ?? 0
    if (used >= c.rule.times) return false
    tx.put('counters', key, used + 1)
    return true
  }
}
