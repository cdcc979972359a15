/**
 * JSON text from a file a user named, checked before JSON.parse sees it: one pass, no recursion, so
 * a document nested 20,000 deep is refused by its depth instead of overflowing a stack later (where
 * the value is walked). Its problems say where (line and column) and what was expected, never the
 * text itself: the file may be anything (a key, a password file), and its bytes stay out of the error.
 */

/** Where a syntax or depth problem is, and what it is; no character of the text in it. */
export interface JsonProblem {
  line: number
  column: number
  why: string
  /** The text nests deeper than allowed (it may be JSON). */
  tooDeep?: true
}

/** The text's value, or why it is not JSON (or is nested deeper than `maxDepth` arrays and objects). */
export function parseJsonText(text: string, maxDepth: number): { value: unknown } | { problem: JsonProblem } {
  const problem = jsonProblem(text, maxDepth)
  if (problem) return { problem }
  try {
    return { value: JSON.parse(text) }
  } catch {
    // Not met in testing (the scanner follows RFC 8259 as JSON.parse does); its message would quote the text.
    return { problem: { line: 1, column: 1, why: 'JSON.parse refuses the text' } }
  }
}

/** The problem as an error says it after the file's name: `invalid JSON: line L, column C: WHY`, or the depth and where. */
export const describeJsonProblem = (p: JsonProblem): string =>
  p.tooDeep ? `${p.why} (at line ${p.line}, column ${p.column})` : `invalid JSON: line ${p.line}, column ${p.column}: ${p.why}`

/** JSON's white space, and a string's characters that need no look (sticky: matched where lastIndex is). */
const SPACE = /[ \t\n\r]*/y
const PLAIN = /[^"\\\u0000-\u001f]*/y
const ESCAPES = new Set([...'"\\/bfnrtu'].map((c) => c.charCodeAt(0)))
const isDigit = (c: number) => c >= 0x30 && c <= 0x39
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)

/** The first problem of `text` as one JSON value (RFC 8259), or undefined when JSON.parse takes it within the depth. */
export function jsonProblem(text: string, maxDepth: number): JsonProblem | undefined {
  const n = text.length
  // The open arrays (false) and objects (true), innermost last.
  const open: boolean[] = []
  let i = 0
  const at = (index: number, why: string, tooDeep = false): JsonProblem => {
    let line = 1
    let start = 0
    for (let k = text.indexOf('\n'); k !== -1 && k < index; k = text.indexOf('\n', k + 1)) {
      line++
      start = k + 1
    }
    return { line, column: index - start + 1, why, ...(tooDeep ? { tooDeep } : {}) }
  }
  const skip = () => {
    const c = text.charCodeAt(i)
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return
    SPACE.lastIndex = i
    SPACE.test(text)
    i = SPACE.lastIndex
  }
  const end = (what: string) => at(n, `the text ends where ${what} was expected`)
  /** A string from its opening quote; its end, or a problem. */
  const string = (): JsonProblem | undefined => {
    for (i++; i < n; i++) {
      // The plain characters at once; then the quote, backslash or control character after them.
      PLAIN.lastIndex = i
      PLAIN.test(text)
      i = PLAIN.lastIndex
      if (i >= n) break
      const c = text.charCodeAt(i)
      if (c === 0x22) return void i++
      if (c < 0x20) return at(i, 'a control character inside a string (write it escaped, as \\n or \\u0000)')
      if (c !== 0x5c) continue
      const e = text.charCodeAt(++i)
      if (i >= n) break
      if (!ESCAPES.has(e)) return at(i - 1, 'a backslash that starts no escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)')
      if (e === 0x75) {
        for (let k = 1; k <= 4; k++) if (!isHex(text.charCodeAt(i + k))) return at(i - 1, 'a \\u escape without four hex digits')
        i += 4
      }
    }
    return at(n, 'the text ends inside a string (a closing quote is missing)')
  }
  const number = (): JsonProblem | undefined => {
    const start = i
    if (text.charCodeAt(i) === 0x2d) i++
    const digits = () => {
      const from = i
      while (i < n && isDigit(text.charCodeAt(i))) i++
      return i - from
    }
    if (text.charCodeAt(i) === 0x30) i++
    else if (!digits()) return at(start, 'a number without digits')
    if (text.charCodeAt(i) === 0x2e) {
      i++
      if (!digits()) return at(i, 'a number with no digit after its decimal point')
    }
    if ((text.charCodeAt(i) | 0x20) === 0x65) {
      i++
      if (text.charCodeAt(i) === 0x2b || text.charCodeAt(i) === 0x2d) i++
      if (!digits()) return at(i, 'a number with no digit in its exponent')
    }
    return undefined
  }
  /** A value where one must be: a scalar read whole, or an array or object opened. */
  const value = (): JsonProblem | undefined => {
    skip()
    if (i >= n) return end('a value')
    const c = text.charCodeAt(i)
    if (c === 0x7b || c === 0x5b) {
      if (open.length >= maxDepth) return at(i, `nested deeper than ${maxDepth} levels of arrays and objects`, true)
      open.push(c === 0x7b)
      i++
      return undefined
    }
    if (c === 0x22) return string()
    if (c === 0x2d || isDigit(c)) return number()
    for (const word of ['true', 'false', 'null']) if (text.startsWith(word, i)) return void (i += word.length)
    return at(i, 'a value (an object, array, string, number, true, false or null) was expected')
  }
  /** An object's `"key":` (at its opening quote). */
  const key = (): JsonProblem | undefined => {
    skip()
    if (i >= n) return end('a property name')
    if (text.charCodeAt(i) !== 0x22) return at(i, 'a property name in double quotes was expected')
    const bad = string()
    if (bad) return bad
    skip()
    if (i >= n) return end("':'")
    if (text.charCodeAt(i) !== 0x3a) return at(i, "':' was expected after a property name")
    i++
    return undefined
  }
  // After each value (or close): `justOpened` when value() opened an array or object, which may close at once.
  let bad = value()
  while (!bad) {
    const justOpened = open.length > 0 && (text.charCodeAt(i - 1) === 0x7b || text.charCodeAt(i - 1) === 0x5b)
    skip()
    if (!open.length) {
      if (i < n) bad = at(i, 'more text after the JSON value')
      break
    }
    const isObject = open[open.length - 1]!
    const close = isObject ? 0x7d : 0x5d
    const c = text.charCodeAt(i)
    if (i >= n) bad = end(justOpened ? (isObject ? "a property name or '}'" : "a value or ']'") : isObject ? "',' or '}'" : "',' or ']'")
    else if (c === close) {
      open.pop()
      i++
    } else if (justOpened || c === 0x2c) {
      if (!justOpened) i++
      bad = (isObject ? key() : undefined) ?? value()
    } else bad = at(i, isObject ? "',' or '}' was expected" : "',' or ']' was expected")
  }
  return bad
}
