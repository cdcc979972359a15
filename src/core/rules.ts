/**
 * Carrier rules: data that says what a fake carrier does at a step for some MSISDNs.
 * Fixture rules come from the world; runtime rules are added through the control API and come first.
 */
import { RE2JS } from 're2js'
import type { CarrierCode, OutcomeCode } from './outcomes.js'
import type { RuleDecision } from './ruleset.js'
import { ruleReason } from './why.js'
import type { DelaySpec } from './delays.js'
import { MAX_DELAY_MS } from './limits.js'
import { MAX_REGEX_INPUT, takeCompiled } from './regex-cost.js'
import type { HeldRegex } from './regex-pool.js'
import type { Rule, RuleEffect, Step } from './world-schema.js'

export interface RuleContext {
  step: Step
  msisdn: string
  country?: string
  carrier?: string
  service?: string
  /** Which occurrence of this step this is (1-based), for `nth`. */
  nth?: number
}

export interface CompiledRule {
  rule: Rule
  steps: Set<Step>
  /**
   * RE2 semantics: matching takes time linear in the MSISDN whatever the pattern (no catastrophic
   * backtracking). The one the schema compiled as the rule came in, else compiled when the rule is
   * first matched against an MSISDN (not at start).
   */
  readonly regex: RE2JS | undefined
  /** `runtime` (a runtime rule: its record in the state counts `times`) or the file it came from. */
  source: string
}

/** `held`: the rule's regex as the host's pool holds it (a runtime rule's), else compiled for this rule alone. */
export function compileRule(rule: Rule, source: string, held?: HeldRegex): CompiledRule {
  let regex = rule.match.regex !== undefined && !held ? takeCompiled(rule.match.regex) : undefined
  return {
    rule,
    steps: new Set(Array.isArray(rule.step) ? rule.step : [rule.step]),
    get regex() {
      // The schema compiled it once already when the rule came in, so this cannot throw. A rule whose
      // regex costs too much never gets here (the schema refuses it, `RuleSet` leaves a stored one out).
      if (held) return held.compiled()
      return rule.match.regex ? (regex ??= RE2JS.compile(rule.match.regex)) : undefined
    },
    source,
  }
}

/** A regex match: its named groups. */
export interface RegexMatch {
  groups: Record<string, string | undefined>
}

/**
 * Whether the rule's match and step fit (not `times`, which needs the usage count). With
 * `ignoreNth`, whether it would fit at some occurrence.
 */
export function ruleMatches(c: CompiledRule, ctx: RuleContext, ignoreNth = false): RegexMatch | true | null {
  if (!c.steps.has(ctx.step)) return null
  const m = c.rule.match
  const msisdn = ctx.msisdn
  if (m.msisdn !== undefined && m.msisdn !== msisdn) return null
  if (m.prefix !== undefined && !msisdn.startsWith(m.prefix)) return null
  if (m.ending !== undefined && !msisdn.endsWith(m.ending)) return null
  if (m.ending_range !== undefined) {
    const [lo, hi] = m.ending_range
    const tail = msisdn.slice(-lo.length)
    if (tail.length !== lo.length || tail < lo || tail > hi) return null
  }
  if (m.country !== undefined && m.country !== ctx.country) return null
  if (m.carrier !== undefined && m.carrier !== ctx.carrier) return null
  if (m.service !== undefined && m.service !== ctx.service) return null
  if (!ignoreNth && c.rule.nth !== undefined && c.rule.nth !== ctx.nth) return null
  if (c.rule.match.regex !== undefined) {
    // Matching is linear in the text: a regex runs on MSISDN-sized text only, so no call costs more than a short one.
    if (msisdn.length > MAX_REGEX_INPUT || !c.regex) return null
    const m = c.regex.matcher(msisdn)
    if (!m.find()) return null
    const groups: Record<string, string | undefined> = {}
    for (const name of Object.keys(c.regex.namedGroups())) groups[name] = m.group(name) ?? undefined
    return { groups }
  }
  return true
}

/**
 * The delay a decision asks for (its `delay_ms`, and `delay_per_unit` from its regex match); `draw`
 * turns a `delay_ms` distribution into milliseconds (the session's generator: delays.ts).
 */
export function decisionDelay(d: { effect: RuleEffect; match: RegexMatch | true } | undefined, draw: (d: DelaySpec) => number): number {
  return d ? effectDelay(d.effect, d.match, draw) : 0
}

/** The delay an effect asks for, given the regex match of its rule. */
export function effectDelay(effect: RuleEffect, match: RegexMatch | true, draw: (d: DelaySpec) => number): number {
  let ms = effect.delay_ms === undefined ? 0 : draw(effect.delay_ms)
  if (effect.delay_per_unit && match !== true) {
    // Digits only: a group that met other text ("1e9" in an unchecked MSISDN) counts no units.
    const text = match.groups[effect.delay_per_unit.group] ?? ''
    if (/^\d+$/.test(text)) ms += Number(text) * effect.delay_per_unit.ms
  }
  // Loading refuses a rule that could ask for more; this holds whatever the MSISDN.
  return Math.min(ms, MAX_DELAY_MS)
}

/** What an effect answers a merchant call with: its carrier code, SERVER_ERROR for `http: 500`, or nothing. */
export function effectFailure(effect: RuleEffect | undefined): OutcomeCode | undefined {
  if (!effect) return undefined
  if (effect.http === 500) return 'SERVER_ERROR'
  return effect.error
}

/** How an effect fails a charge: its carrier code, ERROR for `http: 500` (Verify answers that as HTTP 500), or nothing (the charge succeeds). */
export function chargeFailure(effect: RuleEffect | undefined): CarrierCode | undefined {
  return effect?.error ?? (effect?.http ? 'ERROR' : undefined)
}

/** A merchant call refused by a rule: the code (as `effectFailure`) and the reason naming the rule. */
export function decisionFailure(d: RuleDecision | undefined, what: string): { code: OutcomeCode; reason: string } | undefined {
  const code = effectFailure(d?.effect)
  if (!code) return undefined
  return { code, reason: ruleReason(d!.rule, `${what} ${code === 'SERVER_ERROR' ? 'HTTP 500 ERROR' : code}`) }
}

/** A charge failed by a rule: the carrier code (as `chargeFailure`) and the reason naming the rule. */
export function chargeDecision(d: RuleDecision | undefined, what: string): { code: CarrierCode; reason: string } | undefined {
  const code = chargeFailure(d?.effect)
  if (!code) return undefined
  return { code, reason: ruleReason(d!.rule, `${what} ${code}${d!.effect.http ? ` (effect http ${d!.effect.http})` : ''}`) }
}

/**
 * The instructions of the program re2js compiles a regex to, as far as a walk needs them: its
 * `re2Input.prog` (re2js 2.10, pinned; not in its typed API, so read defensively, and
 * test/core/regex-digits.test.ts fails if a new re2js no longer has it).
 */
interface ProgInst {
  op: number
  out: number
  arg: number
  runes: Int32Array
  matchRune?(rune: number): boolean
}
const OP = { ALT: 1, ALT_MATCH: 2, CAPTURE: 3, EMPTY_WIDTH: 4, FAIL: 5, MATCH: 6, NOP: 7, RUNE: 8, RUNE1: 9, RUNE_ANY: 10, RUNE_ANY_NOT_NL: 11 }
/**
 * The empty-width conditions (`^`, `$`, `\b`, `\B`, as re2js's flags) that hold at a position of a
 * string of digits: its start, between two digits, its end. No newline, and a digit is a word
 * character: `\b` holds at both ends only, `\B` only between two digits.
 */
const AT = [/* start */ 1 | 4 | 16, /* between */ 32, /* end */ 2 | 8 | 16] as const
const START = 0
const BETWEEN = 1
const END = 2
const DIGITS = [...'0123456789'].map((d) => d.codePointAt(0)!)

/**
 * Whether a regex can find a match in some MSISDN (a string of one or more digits, matched as
 * `ruleMatches` does: anywhere in it). Walks the program re2js runs over the ten digits, each
 * instruction at each kind of position (start, between two digits, end); a match is found iff
 * some MATCH is reached. Sound: an instruction it does not know (another re2js) answers true.
 */
export function regexCanMatchDigits(pattern: string): boolean {
  const prog = (RE2JS.compile(pattern) as unknown as { re2Input?: { prog?: { inst?: ProgInst[]; start?: number } } }).re2Input?.prog
  if (!prog || !Array.isArray(prog.inst) || typeof prog.start !== 'number') return true
  const inst = prog.inst
  const seen = new Set<number>()
  // A match may start at the first digit, between two, or after the last.
  const todo: [number, number][] = [
    [prog.start, START],
    [prog.start, BETWEEN],
    [prog.start, END],
  ]
  for (let next = todo.pop(); next; next = todo.pop()) {
    const [pc, at] = next
    if (seen.has(pc * 3 + at)) continue
    seen.add(pc * 3 + at)
    const i = inst[pc]
    if (!i) return true
    switch (i.op) {
      case OP.MATCH:
        return true
      case OP.FAIL:
        break
      case OP.ALT:
      case OP.ALT_MATCH:
        todo.push([i.out, at], [i.arg, at])
        break
      case OP.CAPTURE:
      case OP.NOP:
        todo.push([i.out, at])
        break
      case OP.EMPTY_WIDTH:
        if ((i.arg & ~AT[at]) === 0) todo.push([i.out, at])
        break
      case OP.RUNE:
      case OP.RUNE1:
      case OP.RUNE_ANY:
      case OP.RUNE_ANY_NOT_NL: {
        if (at === END) break
        if (i.op === OP.RUNE && typeof i.matchRune !== 'function') return true
        const takes = i.op === OP.RUNE_ANY || i.op === OP.RUNE_ANY_NOT_NL || DIGITS.some((d) => (i.op === OP.RUNE1 ? d === i.runes[0] : i.matchRune!(d)))
        // After a digit: more digits follow, or the string ends there.
        if (takes) todo.push([i.out, BETWEEN], [i.out, END])
        break
      }
      default:
        return true
    }
  }
  return false
}
