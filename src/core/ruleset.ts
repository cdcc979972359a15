/**
 * The carrier rules in force and the one precedence (docs/reference/fixtures.md): runtime rules first, the
 * last added first; then the world's rules in the order the layering gave them (the last fixture file's
 * first, the default world's last). A runtime rule with the id of a world rule replaces it while it
 * exists. The first rule that fits a step decides it: its effect is what the step does, and an empty
 * effect ("everything succeeds") decides too.
 *
 * `nth` counts the occurrences of a step per MSISDN (renewals and retries per subscription) while some
 * rule with `nth` can match; `times` counts a rule's decisions durably; `used` shows every decision
 * (of rules without `times` counted in memory, so that deciding never turns a read such as Status into
 * a write).
 */
import type { Rule, RuleEffect, Step } from './world-schema.js'
import { isDistribution } from './delays.js'
import { StepRules } from './rule-index.js'
import { compileRule, type CompiledRule, type RegexMatch, type RuleContext } from './rules.js'
import type { RuntimeRuleRecord, State } from './state.js'
import { regexCostProblem } from './regex-cost.js'
import { RegexPool, type HeldRegex } from './regex-pool.js'
import type { Tx } from './tx.js'

/** The most runtime rules a session holds (`POST /_sandbox/rules`): each is stored and consulted by every call. */
export const MAX_RUNTIME_RULES = 1000

/** What decided a step: the effect and the rule it came from (its id names it in a failure's reason), with its regex match (for `delay_per_unit`). */
export interface RuleDecision {
  effect: RuleEffect
  rule: Rule
  compiled: CompiledRule
  match: RegexMatch | true
}

/** The rules of a step whose match fits a context, whatever the occurrence or the uses left. */
export interface Candidates {
  /** Each as the decision it makes when it decides (made once: deciding allocates nothing). */
  list: readonly RuleDecision[]
  /** Whether one of them has `nth` (then occurrences are counted). */
  nth: boolean
}

/** A rule in force, as `GET /_sandbox/rules` lists it. */
export type RuleInForce = { id: string; source: string; used: number } & Omit<Rule, 'id'>

const NONE: Candidates = Object.freeze({ list: Object.freeze([]), nth: false }) as Candidates
const CACHE_LIMIT = 20_000

/** A world's rules compiled once, whatever the number of engines (sessions) over it. */
const compiledWorlds = new WeakMap<Rule[], CompiledRule[]>()

export class RuleSet {
  private readonly world: CompiledRule[]
  private runtime: CompiledRule[] = []
  /** Every rule in force, in the order consulted. */
  private ordered: CompiledRule[] = []
  private byStep = new Map<Step, StepRules>()
  /** How many times each rule decided a step here (in memory; the compiled world rules are shared by sessions). */
  private decisions = new Map<CompiledRule, number>()
  /** Candidates per step and context, for the steps whose rules cost more than a lookup to search (cleared when the rules change). */
  private cache = new Map<string, Candidates>()
  /** Candidates per step of a record that stays (a subscription, a verification request): no key to build. */
  private byRecord = new WeakMap<object, { version: number; steps: Map<Step, Candidates> }>()
  /** Stored runtime rules left out, each with why: their regex costs more than a rule may (`regexCostProblem`), or the pool is full. */
  disabled: readonly { id: string; problem: string }[] = []
  /** Told of the stored rules a reload leaves out that were not left out before. */
  onLeftOut: ((rules: readonly { id: string; problem: string }[]) => void) | undefined
  /** Counts changes of the rules: what was found under an older version is to be found anew. */
  version = 0
  /** The pool each runtime rule's regex is held in (the rule's hold), while the session is open. */
  private holds = new Map<CompiledRule, HeldRegex>()

  /** `pool`: the regexes held for every session of the host (default: this session's own). */
  constructor(
    private readonly state: State,
    worldRules: Rule[],
    sources: Record<string, string> = {},
    private pool: RegexPool | undefined = new RegexPool(),
  ) {
    let compiled = compiledWorlds.get(worldRules)
    if (!compiled) compiledWorlds.set(worldRules, (compiled = worldRules.map((r) => compileRule(r, sources[r.id] ?? 'world'))))
    this.world = compiled
    this.reload()
  }

  /** Reads the runtime rules from the state again (after they changed, or a reset). */
  reload(): void {
    const records = [...this.state.rules.values()].sort(newestFirst)
    // A runtime rule keeps its decision count across reloads (and its compiled form).
    const before = new Map(this.runtime.map((c) => [c.rule.id, this.decisions.get(c) ?? 0]))
    // A record holds the rule as the rule schema made it when it came in (`Engine.addRule`): not parsed
    // again. A rule kept compiled is not compiled anew (adding the 1,000th rule recompiles nothing).
    // One whose regex costs more than a rule may (stored by an older version), or that the pool has no
    // room for (another replica added it), is left out, and said.
    const prior = new Map(this.runtime.map((c) => [c.rule.id, c]))
    const kept = new Set(records.flatMap((r) => (prior.get(r.id)?.rule === r.rule ? [prior.get(r.id)!] : [])))
    const slots: (CompiledRule | RuntimeRuleRecord)[] = records.map((r) => (prior.get(r.id)?.rule === r.rule ? prior.get(r.id)! : r))
    const unheld = this.runtime.filter((c) => !kept.has(c))
    // What is held already is taken before the rules that go give theirs back: a pattern both use is not compiled anew.
    const fill = (last: boolean) => {
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i]!
        if (!('created_at' in slot)) continue
        const compiled = this.compileRuntime(slot.rule as Rule, last)
        if (compiled) slots[i] = compiled
      }
    }
    fill(false)
    for (const c of unheld) this.unhold(c)
    fill(true)
    const disabled: { id: string; problem: string }[] = []
    this.runtime = []
    for (const slot of slots) {
      if (!('created_at' in slot)) this.runtime.push(slot)
      else disabled.push({ id: slot.id, problem: `match.regex: ${this.regexProblem(slot.rule as Rule)}` })
    }
    // Left out by this reload (another replica's rule, or a rule that lost its room): the host says it.
    const was = new Set(this.disabled.map((d) => d.id))
    const fresh = disabled.filter((d) => !was.has(d.id))
    this.disabled = disabled
    if (fresh.length) this.onLeftOut?.(fresh)
    this.decisions = new Map([...this.world, ...this.runtime].map((c) => [c, (c.source === 'runtime' ? before.get(c.rule.id) : this.decisions.get(c)) ?? 0]))
    const shadowed = new Set(this.runtime.map((c) => c.rule.id))
    this.ordered = [...this.runtime, ...this.world.filter((c) => !shadowed.has(c.rule.id))]
    const byStep = new Map<Step, CompiledRule[]>()
    for (const c of this.ordered)
      for (const step of c.steps) {
        let list = byStep.get(step)
        if (!list) byStep.set(step, (list = []))
        list.push(c)
      }
    this.byStep = new Map([...byStep].map(([step, rules]) => [step, new StepRules(rules)]))
    this.cache = new Map()
    this.version++
  }

  /**
   * A runtime rule compiled, its regex held in the pool; undefined when its regex costs more than a
   * rule may or (`last`: no rule gives room back after) the pool has no room for it.
   */
  private compileRuntime(rule: Rule, last: boolean): CompiledRule | undefined {
    const pattern = rule.match.regex
    if (pattern === undefined) return compileRule(rule, 'runtime')
    if (regexCostProblem(pattern)) return undefined
    if (!this.pool) return compileRule(rule, 'runtime')
    if (!last && this.pool.problem(pattern)) return undefined
    const held = this.pool.acquire(pattern)
    if (!held) return undefined
    const compiled = compileRule(rule, 'runtime', held)
    this.holds.set(compiled, held)
    return compiled
  }

  /** Gives back what a runtime rule holds in the pool. */
  private unhold(c: CompiledRule): void {
    const held = this.holds.get(c)
    if (!held) return
    this.holds.delete(c)
    this.pool?.release(held)
  }

  /** Why a runtime rule's regex cannot be taken now (it costs too much, or the pool is full), or undefined. */
  regexProblem(rule: Rule): string | undefined {
    const pattern = rule.match.regex
    if (pattern === undefined) return undefined
    return regexCostProblem(pattern) ?? this.pool?.problem(pattern)
  }

  /** The session is closed: its regexes go back to the pool (a rule read after is compiled for itself alone). */
  release(): void {
    for (const c of this.runtime) this.unhold(c)
    this.pool = undefined
  }

  /** Forgets the in-memory decision counts (a reset). */
  resetCounts(): void {
    this.decisions = new Map()
  }

  /** Every rule in force, in the order consulted, with its source and how often it decided a step. */
  list(): RuleInForce[] {
    return this.ordered.map((c) => {
      const { id, ...rest } = c.rule
      return { id, source: c.source, used: this.used(c), ...rest }
    })
  }

  /**
   * The runtime rule records, oldest first, each with `used` as `list` counts it (every decision; a
   * record keeps durably only the uses of a rule with `times`).
   */
  runtimeRecords(): RuntimeRuleRecord[] {
    const used = new Map(this.runtime.map((c) => [c.rule.id, this.used(c)]))
    return [...this.state.rules.values()]
      .sort(newestFirst)
      .reverse()
      .map((r) => ({ ...r, used: used.get(r.id) ?? r.used }))
  }

  /** Whether a runtime rule decided anything yet, for `used`. */
  private used(c: CompiledRule): number {
    if (c.rule.times === undefined) return this.decisions.get(c) ?? 0
    if (c.source === 'runtime') return this.state.rules.get(c.rule.id)?.used ?? 0
    return this.state.counters.get(`rule:${c.rule.id}`) ?? 0
  }

  /** The rule that decides this step in this context, counting the occurrence (`nth`) and the use. */
  decide(tx: Tx, ctx: RuleContext): RuleDecision | undefined {
    const rules = this.byStep.get(ctx.step)
    if (!rules) return undefined
    return this.first(tx, ctx.step, ctx.msisdn, this.candidates(ctx, rules))
  }

  /** The effect of the rule that decides the step (undefined: none, or one with an empty effect). */
  effect(tx: Tx, ctx: RuleContext): RuleEffect | undefined {
    return this.decide(tx, ctx)?.effect
  }

  /**
   * `decide` for a record that stays as it is while it is looked up again and again (the Status path
   * reads a subscription's): its candidates are found once per rules version and kept beside it.
   */
  decideFor(tx: Tx, step: Step, record: Omit<RuleContext, 'step'>): RuleDecision | undefined {
    const found = this.candidatesFor(step, record)
    return found && this.first(tx, step, record.msisdn, found)
  }

  /**
   * Whether deciding `step` for this record may write: a candidate counts occurrences or uses (`nth`,
   * `times`), or draws its `delay_ms` (a distribution counts the session's draws: delays.ts).
   */
  mayCount(step: Step, record: Omit<RuleContext, 'step'>): boolean {
    const found = this.candidatesFor(step, record)
    return !!found && (found.nth || found.list.some((d) => d.rule.times !== undefined || isDistribution(d.effect.delay_ms)))
  }

  /** The candidates of a step for a record (found once per record and rules version), or undefined when no rule has the step. */
  private candidatesFor(step: Step, record: Omit<RuleContext, 'step'>): Candidates | undefined {
    const rules = this.byStep.get(step)
    if (!rules) return undefined
    let per = this.byRecord.get(record)
    if (!per || per.version !== this.version) this.byRecord.set(record, (per = { version: this.version, steps: new Map() }))
    let found = per.steps.get(step)
    if (!found) {
      const { msisdn, country, carrier, service } = record
      per.steps.set(step, (found = rules.candidates({ step, msisdn, country, carrier, service }) ?? NONE))
    }
    return found
  }

  /** `decide` over candidates found already; occurrences are counted under `counterKey`. */
  first(tx: Tx, step: Step, counterKey: string, found: Candidates): RuleDecision | undefined {
    if (!found.list.length) return undefined
    const head = found.list[0]!
    // The common case: a first candidate without nth or times decides (nothing to count but `used`).
    if (!found.nth && head.rule.times === undefined) {
      this.decisions.set(head.compiled, (this.decisions.get(head.compiled) ?? 0) + 1)
      return head
    }
    let nth: number | undefined
    if (found.nth) {
      const key = `${step}:${counterKey}`
      nth = (this.state.counters.get(key) ?? 0) + 1
      tx.put('counters', key, nth)
    }
    for (const d of found.list) {
      const c = d.compiled
      if (c.rule.nth !== undefined && c.rule.nth !== nth) continue
      if (!this.use(tx, c)) continue
      this.decisions.set(c, (this.decisions.get(c) ?? 0) + 1)
      return d
    }
    return undefined
  }

  /**
   * The rules of a step whose match fits this MSISDN, country, carrier and service, in order.
   * Renewals keep theirs in the subscription's plan.
   */
  matching(ctx: RuleContext): Candidates {
    const rules = this.byStep.get(ctx.step)
    return rules ? this.candidates(ctx, rules) : NONE
  }

  private candidates(ctx: RuleContext, rules: StepRules): Candidates {
    // Most steps: a lookup or two in the step's index, cheaper than building a key to cache it under.
    if (!rules.costly) return rules.candidates(ctx) ?? NONE
    const key = `${ctx.step}\0${ctx.msisdn}\0${ctx.country}\0${ctx.carrier}\0${ctx.service}`
    let found = this.cache.get(key)
    if (found) return found
    found = rules.candidates(ctx) ?? NONE
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear()
    this.cache.set(key, found)
    return found
  }

  /** Counts a use of a rule with `times`; false when it is spent. */
  private use(tx: Tx, c: CompiledRule): boolean {
    if (c.rule.times === undefined) return true
    if (c.source === 'runtime') {
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

/** Runtime rules, the last added first (by the order added, not by the sandbox time). */
function newestFirst(a: RuntimeRuleRecord, b: RuntimeRuleRecord): number {
  return (b.seq ?? 0) - (a.seq ?? 0) || b.created_at - a.created_at || (a.id < b.id ? 1 : -1)
}
