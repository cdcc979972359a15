/**
 * The JSON scanner that judges user files before JSON.parse (src/json-text.ts) agrees with
 * JSON.parse on what is JSON, refuses depth without recursing, and never quotes the text.
 */
import { describe, expect, it } from 'vitest'
import { describeJsonProblem, jsonProblem, parseJsonText } from '../src/json-text.js'

const parses = (text: string) => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** A small deterministic generator (the same cases every run). */
function random(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed / 2 ** 31
  }
}

const SAMPLES = [
  '{"a": [1, -2.5e+3, 0, 0.5E-2, true, false, null], "b": {"c": "d\\n\\u00e9\\"\\\\\\/"}, "e": []}',
  '[{"id": "r1", "match": {"msisdn": "60123456011"}, "step": "renewal", "nth": 2}]',
  '  "text with é and 😀"  ',
  '-0',
  '{"":{}}',
]
const NOISE = ['{', '}', '[', ']', ',', ':', '"', '\\', '0', '-', '.', 'e', '+', ' ', '\n', 't', 'u', 'x', '\u0001', '01']

describe('jsonProblem', () => {
  it('finds a problem exactly where JSON.parse throws, on thousands of mutated texts', () => {
    const next = random(42)
    let checked = 0
    for (const sample of SAMPLES) {
      expect(jsonProblem(sample, 64)).toBeUndefined()
      for (let k = 0; k < 1500; k++) {
        let text = sample
        for (let m = 1 + Math.floor(next() * 3); m > 0; m--) {
          const at = Math.floor(next() * (text.length + 1))
          const cut = next() < 0.5 ? 1 : 0
          text = text.slice(0, at) + NOISE[Math.floor(next() * NOISE.length)] + text.slice(at + cut)
        }
        expect([text, jsonProblem(text, 64) === undefined]).toEqual([text, parses(text)])
        checked++
      }
    }
    expect(checked).toBe(SAMPLES.length * 1500)
  })

  it('accepts nesting up to the bound', () => {
    expect(jsonProblem('['.repeat(64) + ']'.repeat(64), 64)).toBeUndefined()
  })

  it('refuses nesting past the bound at the opening past it', () => {
    expect(jsonProblem('['.repeat(65) + ']'.repeat(65), 64)).toEqual({
      line: 1,
      column: 65,
      why: 'nested deeper than 64 levels of arrays and objects',
      tooDeep: true,
    })
  })

  it('refuses a million levels of nesting without recursing', () => {
    // A million levels: a recursive check would overflow its stack.
    const p = jsonProblem('{"a":'.repeat(1_000_000), 64)!
    expect(describeJsonProblem(p)).toBe('nested deeper than 64 levels of arrays and objects (at line 1, column 321)')
  })
})

describe('parseJsonText', () => {
  const text = '{\n  "password": "hunter2"\n  "next": 1\n}'

  it('answers a problem as its line, column, why, without the text', () => {
    expect(parseJsonText(text, 64)).toEqual({ problem: { line: 3, column: 3, why: "',' or '}' was expected" } })
  })

  it('describes a problem by its place, quoting none of the text', () => {
    const got = parseJsonText(text, 64)
    expect(describeJsonProblem((got as { problem: never }).problem)).toBe("invalid JSON: line 3, column 3: ',' or '}' was expected")
  })

  it('gives the value of valid JSON', () => {
    expect(parseJsonText('{"a": [1]}', 64)).toEqual({ value: { a: [1] } })
  })
})
