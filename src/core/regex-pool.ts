/**
 * The compiled regexes of runtime rules, held once per pattern for every session of a host, under one
 * budget. Each regex is bounded (`regexCostProblem`), but a thousand sessions of a thousand rules
 * each would not be: the budget bounds their sum, so memory stays bounded however many sessions
 * there are. Sessions that add the same pattern (CI workers loading one rule file) hold it once.
 */
import { RE2JS } from 're2js'
import { regexSize, takeCompiled } from './regex-cost.js'

/** The most regex instructions a host holds for all its sessions' runtime rules together (about 170 bytes of heap each: 32 MiB). */
export const MAX_REGEX_HELD = 200_000

/** A pattern held by some rules: compiled when first matched, or taken from the rule schema's compile. */
export interface HeldRegex {
  readonly pattern: string
  readonly size: number
  /** The compiled regex (the schema compiled it once, so this cannot throw). */
  compiled(): RE2JS
}

interface Entry extends HeldRegex {
  users: number
}

export class RegexPool {
  private readonly entries = new Map<string, Entry>()
  /** Instructions held now, the sum of the sizes of the patterns some rule holds. */
  held = 0

  constructor(readonly limit = MAX_REGEX_HELD) {}

  /** Why `pattern` cannot be held now (the budget is spent), or undefined; a pattern held already always can. */
  problem(pattern: string): string | undefined {
    return this.entries.has(pattern) ? undefined : this.overBudget(regexSize(pattern))
  }

  /** Why a new pattern of `size` instructions does not fit, or undefined. */
  private overBudget(size: number): string | undefined {
    if (this.held + size <= this.limit) return undefined
    return `the runtime rules of all sessions hold regexes of ${this.held} instructions, and this one adds ${size}: the most the sandbox holds is ${this.limit}; remove rules (DELETE /_sandbox/rules) or sessions first`
  }

  /** Holds `pattern` for one more rule; undefined when it does not fit (`problem` says why). */
  acquire(pattern: string): HeldRegex | undefined {
    let entry = this.entries.get(pattern)
    if (!entry) {
      // Sized once: the estimate walks the whole pattern.
      const size = regexSize(pattern)
      if (this.overBudget(size)) return undefined
      // The rule schema compiled it as the rule came in: taken now, else compiled when first matched.
      let re = takeCompiled(pattern)
      entry = { pattern, size, users: 0, compiled: () => (re ??= RE2JS.compile(pattern)) }
      this.entries.set(pattern, entry)
      this.held += entry.size
    }
    entry.users++
    return entry
  }

  /** A rule no longer holds `held`: the pattern goes once no rule holds it. */
  release(held: HeldRegex): void {
    const entry = this.entries.get(held.pattern)
    if (entry !== held || --entry.users > 0) return
    this.entries.delete(held.pattern)
    this.held -= entry.size
  }
}
