/**
 * The largest number a named group of a rule's regex can match in an MSISDN, so that a
 * `delay_per_unit` rule whose longest delay is over the bound is refused when it loads, not found
 * out when an answer is held for days.
 *
 * A small reader of the RE2 syntax the rules take: for each part it keeps, per length, the
 * largest digit string that part can match (MSISDNs are digits). Same-length strings compare as
 * numbers, concatenation keeps that order, so the table is exact for literals, classes, groups,
 * alternation and bounded repeats. What it cannot bound (`*`, `+`, `{n,}`) answers Infinity.
 */

/** Longest digit string of each length a part can match (`best[len]`); undefined: no string of that length. */
type Table = (string | undefined)[]

/** Strings longer than this cannot be MSISDNs (E.164: 15 digits); longer branches are cut. */
const MAX_LEN = 15

class Unbounded extends Error {}

/** The largest value the group `name` of `pattern` can take (0 when it matches no digits); Infinity when unbounded. */
export function largestGroupValue(pattern: string, name: string): number {
  const start = pattern.indexOf(`(?<${name}>`)
  if (start < 0) return 0
  const reader = new Reader(pattern, start + name.length + 4)
  try {
    const table = reader.alternation()
    let best = 0
    for (const s of table) if (s !== undefined && s !== '' && Number(s) > best) best = Number(s)
    return best
  } catch (e) {
    if (e instanceof Unbounded) return Infinity
    throw e
  }
}

const EMPTY: Table = ['']

function concat(a: Table, b: Table): Table {
  const out: Table = []
  for (let i = 0; i < a.length; i++) {
    if (a[i] === undefined) continue
    for (let j = 0; j < b.length && i + j <= MAX_LEN; j++) {
      if (b[j] === undefined) continue
      const s = a[i]! + b[j]!
      if (out[i + j] === undefined || s > out[i + j]!) out[i + j] = s
    }
  }
  return out
}

function union(a: Table, b: Table): Table {
  const out: Table = []
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i]
    const y = b[i]
    out[i] = x === undefined ? y : y === undefined || x > y ? x : y
  }
  return out
}

/** A single character from these digits (the largest wins), or none. */
function oneOf(digits: Set<number>): Table {
  if (!digits.size) return []
  return [undefined, String(Math.max(...digits))]
}

const ALL = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])

class Reader {
  constructor(
    private readonly p: string,
    private i: number,
  ) {}

  /** Alternatives up to the closing `)` of the group (or the end). */
  alternation(): Table {
    let table = this.sequence()
    while (this.p[this.i] === '|') {
      this.i++
      table = union(table, this.sequence())
    }
    if (this.p[this.i] === ')') this.i++
    return table
  }

  private sequence(): Table {
    let table = EMPTY
    while (this.i < this.p.length && this.p[this.i] !== '|' && this.p[this.i] !== ')') table = concat(table, this.repeat(this.atom()))
    return table
  }

  private atom(): Table {
    const c = this.p[this.i++]!
    if (c === '(') {
      // (?:...), (?<n>...), (?P<n>...), (?flags:...), (?flags) — only the contents count.
      if (this.p[this.i] === '?') {
        const close = /^\?(?:P?<[^>]*>|[a-zA-Z-]*:|[a-zA-Z-]*\))/.exec(this.p.slice(this.i))
        this.i += close ? close[0].length : 1
        if (close && close[0].endsWith(')')) return EMPTY
      }
      return this.alternation()
    }
    if (c === '[') return oneOf(this.charClass())
    if (c === '.') return oneOf(ALL)
    if (c === '^' || c === '$') return EMPTY
    if (c === '\\') return this.escape()
    return /\d/.test(c) ? oneOf(new Set([Number(c)])) : []
  }

  private escape(): Table {
    const c = this.p[this.i++]!
    if (c === 'b' || c === 'B' || c === 'A' || c === 'z') return EMPTY
    if (c === 'D' || c === 'S' || c === 's' || c === 'W') return []
    if (c === 'Q') {
      const end = this.p.indexOf('\\E', this.i)
      const text = this.p.slice(this.i, end < 0 ? undefined : end)
      this.i = end < 0 ? this.p.length : end + 2
      return /^\d*$/.test(text) ? [...Array(text.length).fill(undefined), text] : []
    }
    if (/\d/.test(c)) return oneOf(new Set([Number(c)]))
    // \d, \w, \p{...} and the rest: any digit, the safe side of a bound.
    if (c === 'p' || c === 'P') this.skipClassName()
    return oneOf(ALL)
  }

  private skipClassName(): void {
    if (this.p[this.i] === '{') this.i = Math.max(this.i, this.p.indexOf('}', this.i) + 1)
    else this.i++
  }

  /** The digits a `[...]` class takes (a negated one: the digits it does not name). */
  private charClass(): Set<number> {
    const named = new Set<number>()
    let negated = false
    if (this.p[this.i] === '^') {
      negated = true
      this.i++
    }
    let first = true
    while (this.i < this.p.length && (this.p[this.i] !== ']' || first)) {
      first = false
      let c = this.p[this.i++]!
      if (c === '[' && this.p[this.i] === ':') {
        const end = this.p.indexOf(':]', this.i)
        const cls = this.p.slice(this.i + 1, end)
        this.i = end + 2
        if (cls === 'digit' || cls === 'alnum' || cls === 'word' || cls === 'xdigit' || cls === 'print' || cls === 'graph') ALL.forEach((d) => named.add(d))
        continue
      }
      if (c === '\\') {
        c = this.p[this.i++]!
        if (c === 'd' || c === 'w' || c === 'p' || c === 'P') {
          if (c === 'p' || c === 'P') this.skipClassName()
          ALL.forEach((d) => named.add(d))
          continue
        }
        if (!/\d/.test(c)) continue
      }
      if (this.p[this.i] === '-' && this.p[this.i + 1] !== ']' && this.i + 1 < this.p.length) {
        this.i++
        let hi = this.p[this.i++]!
        if (hi === '\\') hi = this.p[this.i++]!
        for (let code = c.charCodeAt(0); code <= hi.charCodeAt(0); code++) if (code >= 48 && code <= 57) named.add(code - 48)
      } else if (/\d/.test(c)) named.add(Number(c))
    }
    this.i++
    return negated ? new Set([...ALL].filter((d) => !named.has(d))) : named
  }

  /** `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}` after an atom (a lazy `?` after them changes nothing here). */
  private repeat(atom: Table): Table {
    const c = this.p[this.i]
    let min: number
    let max: number
    if (c === '?') [min, max] = [0, 1]
    else if (c === '*' || c === '+') [min, max] = [c === '*' ? 0 : 1, Infinity]
    else {
      const m = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(this.i)) : null
      if (!m) return atom
      min = Number(m[1])
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3])
      this.i += m[0].length - 1
    }
    this.i++
    if (this.p[this.i] === '?') this.i++
    // Only an atom that matches something non-empty makes a repeat unbounded.
    if (max === Infinity && atom.some((s, len) => s !== undefined && len > 0)) throw new Unbounded()
    let table = EMPTY
    for (let k = 0; k < min; k++) table = concat(table, atom)
    let acc = table
    for (let k = min; k < Math.min(max, MAX_LEN); k++) {
      table = concat(table, atom)
      acc = union(acc, table)
    }
    return acc
  }
}
