/**
 * What a rule regex costs to compile and keep, bounded before it is compiled. RE2 matches in linear
 * time, but bounded repeats expand: `\d{1,1000}` repeated fifty times compiles to 100,000
 * instructions (half a second, 80 MiB). So a rule regex is refused above a length and above a program
 * size estimated from the pattern as RE2 expands it (repeat bounds multiply), and it is only ever run
 * on MSISDN-sized text.
 */
import type { RE2JS } from 're2js'

/** The longest rule regex taken, in characters. */
export const MAX_REGEX_LENGTH = 500
/** The largest program a rule regex may compile to, in instructions as estimated by `regexSize` (about 170 bytes each). */
export const MAX_REGEX_SIZE = 1_000
/** The longest MSISDN a regex is run on; a longer one matches no regex rule (E.164 numbers have at most 15 digits). */
export const MAX_REGEX_INPUT = 32

/** Why a rule regex costs too much to take, or undefined: the one text for the control API, fixture files and data files. */
export function regexCostProblem(pattern: string): string | undefined {
  if (pattern.length > MAX_REGEX_LENGTH) return `too long: ${pattern.length} characters, the most a rule regex takes is ${MAX_REGEX_LENGTH}`
  const size = regexSize(pattern)
  if (size > MAX_REGEX_SIZE)
    return `too costly to compile: it expands to about ${size > 1e9 ? 'a billion' : size} instructions (repeat bounds multiply), the most a rule regex takes is ${MAX_REGEX_SIZE}`
  return undefined
}

/**
 * Regexes the rule schema compiled lately, by pattern, for the rule that came in to take over: a
 * runtime rule is then compiled once, as it is checked, not again on its first match (a session
 * holding 1,000 rules would otherwise compile them all in the call that first meets them).
 */
const lately = new Map<string, RE2JS>()
const LATELY = 64

/** Keeps a regex the schema compiled (the oldest of `LATELY` goes). */
export function keepCompiled(pattern: string, re: RE2JS): void {
  lately.delete(pattern)
  lately.set(pattern, re)
  if (lately.size > LATELY) lately.delete(lately.keys().next().value!)
}

/** A regex the schema compiled lately, taken (undefined: to be compiled). */
export function takeCompiled(pattern: string): RE2JS | undefined {
  const re = lately.get(pattern)
  lately.delete(pattern)
  return re
}

/** Past this an estimate stops growing (it is compared with MAX_REGEX_SIZE only). */
const CAP = 2e9

/**
 * The size of the program RE2 compiles `pattern` to, estimated from its syntax as RE2's parser
 * does (a literal or class 1, a group 2 more, `{n,m}` m times its atom and m-n more). An
 * overestimate is safe; what is not a pattern at all is left for the compiler to refuse.
 */
export function regexSize(pattern: string): number {
  return new Sizer(pattern).total()
}

class Sizer {
  private i = 0
  constructor(private readonly p: string) {}

  total(): number {
    let size = 0
    // An unbalanced `)` does not end the whole pattern (the compiler refuses it).
    while (this.i < this.p.length) {
      size = Math.min(CAP, size + this.alternation())
      if (this.p[this.i] === ')') this.i++
    }
    return size
  }

  private alternation(): number {
    let size = this.sequence()
    while (this.p[this.i] === '|') {
      this.i++
      size = Math.min(CAP, size + 1 + this.sequence())
    }
    return size
  }

  private sequence(): number {
    let size = 0
    while (this.i < this.p.length && this.p[this.i] !== '|' && this.p[this.i] !== ')') size = Math.min(CAP, size + this.repeat(this.atom()))
    return size
  }

  private atom(): number {
    const c = this.p[this.i++]!
    if (c === '(') {
      let extra = 2
      if (this.p[this.i] === '?') {
        // (?:...), (?<n>...), (?P<n>...), (?flags:...), (?flags): only a named group captures.
        const head = /^\?(?:P?<[^>]*>|[a-zA-Z-]*:|[a-zA-Z-]*\))/.exec(this.p.slice(this.i, this.i + 200))
        this.i += head ? head[0].length : 1
        if (head?.[0].endsWith(')')) return 0
        if (head && !head[0].includes('<')) extra = 0
      }
      const inner = this.alternation()
      if (this.p[this.i] === ')') this.i++
      return inner + extra
    }
    if (c === '[') return this.skipClass()
    if (c === '\\') return this.escape()
    return 1
  }

  private escape(): number {
    const c = this.p[this.i++]
    if (c === 'Q') {
      const end = this.p.indexOf('\\E', this.i)
      const n = (end < 0 ? this.p.length : end) - this.i
      this.i = end < 0 ? this.p.length : end + 2
      return Math.max(1, n)
    }
    if ((c === 'p' || c === 'P') && this.p[this.i] === '{') this.i = Math.max(this.i, this.p.indexOf('}', this.i) + 1)
    else if (c === 'p' || c === 'P') this.i++
    else if (c === 'x' && this.p[this.i] === '{') this.i = Math.max(this.i, this.p.indexOf('}', this.i) + 1)
    return 1
  }

  /** A `[...]` class is one instruction, however many ranges it names. */
  private skipClass(): number {
    if (this.p[this.i] === '^') this.i++
    let first = true
    while (this.i < this.p.length && (this.p[this.i] !== ']' || first)) {
      first = false
      const c = this.p[this.i++]
      if (c === '\\') this.i++
      else if (c === '[' && this.p[this.i] === ':') {
        const end = this.p.indexOf(':]', this.i)
        if (end >= 0) this.i = end + 2
      }
    }
    this.i++
    return 1
  }

  /** `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}` after an atom (several in a row nest). */
  private repeat(atom: number): number {
    let size = atom
    for (;;) {
      const c = this.p[this.i]
      if (c === '?' || c === '+') size += 1
      else if (c === '*') size += 2
      else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(this.i, this.i + 24))
        if (!m) return size
        const min = Number(m[1])
        const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3])
        size = max < 0 ? 1 + Math.max(1, min) * size : max * size + (max - min)
        this.i += m[0].length - 1
      } else return Math.min(CAP, Math.max(1, size))
      this.i++
      // A lazy `?` costs nothing more.
      if (this.p[this.i] === '?') this.i++
      size = Math.min(CAP, size)
    }
  }
}
