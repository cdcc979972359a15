/**
 * The runtime rules of a session (`POST /_sandbox/rules`): added through the one rule validation,
 * removed one by one or all at once. The engine delegates its rule calls here.
 */
import type { EngineContext } from './context.js'
import { SandboxError } from './errors.js'
import { MAX_RUNTIME_RULES } from './ruleset.js'
import type { RuntimeRuleRecord } from './state.js'
import { worldNames, type WorldNames } from './world-names.js'

export class RuntimeRules {
  constructor(private readonly ctx: EngineContext) {}

  /**
   * Adds a runtime rule, checked by the one rule validation (schema, step/effect table, names in
   * `match`): a SandboxError 400 BAD_RULE names the field. It is consulted before every other rule; one
   * with the id of a fixture rule replaces that rule while it exists.
   */
  async add(input: unknown): Promise<RuntimeRuleRecord> {
    const base = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {}
    const id = `rt-${this.ctx.newId().slice(0, 8)}`
    // The rule schema (zod) is loaded by the first rule that comes in, not at start.
    const { validateRule } = await import('./rule-check.js')
    const checked = validateRule({ id, ...base }, this.names)
    if (!checked.ok) throw new SandboxError('BAD_RULE', checked.problems.map((p) => `${p.path.length ? p.path.join('.') + ': ' : ''}${p.message}`).join('; '))
    const rule = checked.rule
    return this.ctx.write((tx, now) => {
      // Checked as the write runs (it may have waited for a clock move, behind another add).
      if (this.ctx.state.rules.has(rule.id)) throw new SandboxError('RULE_EXISTS', `a runtime rule "${rule.id}" exists already`)
      // Each is stored and consulted by every call: a bound keeps memory, the data file and calls from growing without one.
      if (this.ctx.state.rules.size >= MAX_RUNTIME_RULES)
        throw new SandboxError(
          'BAD_RULE',
          `the session holds ${MAX_RUNTIME_RULES} runtime rules, the most it takes; remove some first (DELETE /_sandbox/rules/ID)`,
        )
      // Every session's regexes are held under one budget: checked as the write runs, like the count.
      const costly = this.ctx.ruleset.regexProblem(rule)
      if (costly) throw new SandboxError('BAD_RULE', `match.regex: ${costly}`)
      let seq = 0
      for (const r of this.ctx.state.rules.values()) seq = Math.max(seq, r.seq ?? 0)
      const rec: RuntimeRuleRecord = { id: rule.id, created_at: now, seq: seq + 1, rule, used: 0 }
      tx.put('rules', rec.id, rec)
      this.ctx.ruleset.reload()
      return rec
    })
  }

  /** The names a rule's `match` may use (carriers, services, countries of the world). */
  private get names(): WorldNames {
    return (this._names ??= worldNames(this.ctx.world.world))
  }
  private _names: WorldNames | undefined

  async remove(id: string): Promise<void> {
    await this.ctx.write((tx) => {
      if (!this.ctx.state.rules.has(id)) throw new SandboxError('RULE_NOT_FOUND', `no runtime rule "${id}"`)
      tx.del('rules', id)
      this.ctx.ruleset.reload()
    })
  }

  async clear(): Promise<number> {
    return this.ctx.write((tx) => {
      const n = this.ctx.state.rules.size
      for (const id of [...this.ctx.state.rules.keys()]) tx.del('rules', id)
      this.ctx.ruleset.reload()
      return n
    })
  }
}
