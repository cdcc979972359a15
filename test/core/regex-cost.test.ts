/**
 * `regexSize`, the estimate of the program a rule regex compiles to, against the program re2js
 * compiles (its `re2Input.prog`, as test/core/regex-digits.test.ts reads it): never more than a few
 * instructions under it, so a regex within MAX_REGEX_SIZE compiles to about that many at most.
 */
import fc from 'fast-check'
import { RE2JS } from 're2js'
import { describe, expect, it } from 'vitest'
import { MAX_REGEX_LENGTH, MAX_REGEX_SIZE, regexCostProblem, regexSize } from '../../src/core/regex-cost.js'

const programSize = (p: string) => (RE2JS.compile(p) as unknown as { re2Input: { prog: { inst: unknown[] } } }).re2Input.prog.inst.length

describe('regexSize', () => {
  it('follows the compiled program of nested, repeated or grouped patterns', () => {
    for (const p of [
      '^60(?<n>\\d{3})$',
      '\\d{1,1000}',
      '(a{1,30}){1,30}',
      '[0-9]{1,15}',
      '(?:12|34|56)+',
      'a*b?c+?',
      '\\Q1234\\E5',
      '(?i)abc',
      '(?P<x>1)(?<y>2)(3)',
      'a{2,}',
      '((a{1,10}){1,10}){1,10}',
      '\\pN{3}',
      '[[:digit:]]{4}$',
      '\\p{Greek}{2}x{3}',
    ]) {
      const real = programSize(p)
      expect(regexSize(p), p).toBeGreaterThanOrEqual(real - 3)
      expect(regexSize(p), p).toBeLessThanOrEqual(real * 2 + 10)
    }
  })

  it('is never far under the compiled program on random patterns', () => {
    const atom = fc.constantFrom('0', '1', 'a', '\\d', '.', '[01]', '[^0]', '(?:1|2)', '(3)', '(?:4|5)', '\\Q56\\E')
    const quant = fc.constantFrom('', '*', '+', '?', '{2}', '{1,4}', '{3,}', '{0,9}?')
    const item = fc.tuple(atom, quant, quant).map(([a, q, r]) => (r && q ? `(?:${a + q})${r}` : a + q))
    const pattern = fc
      .array(
        fc.array(item, { minLength: 1, maxLength: 4 }).map((x) => x.join('')),
        { minLength: 1, maxLength: 3 },
      )
      .map((b) => b.join('|'))
    fc.assert(
      fc.property(pattern, (p) => {
        expect(regexSize(p), p).toBeGreaterThanOrEqual(programSize(p) - 3)
      }),
      { numRuns: 400 },
    )
  })

  it('names the bound a regex is over, length first', () => {
    expect(regexCostProblem('1'.repeat(MAX_REGEX_LENGTH + 1))).toBe(
      `too long: ${MAX_REGEX_LENGTH + 1} characters, the most a rule regex takes is ${MAX_REGEX_LENGTH}`,
    )
    expect(regexCostProblem('\\d{1,999}')).toMatch(
      new RegExp(
        `^too costly to compile: it expands to about 1997 instructions \\(repeat bounds multiply\\), the most a rule regex takes is ${MAX_REGEX_SIZE}$`,
      ),
    )
    // Nesting multiplies the estimate past anything a number can say.
    expect(regexCostProblem('((((((\\d{1,999}){999}){999}){999}){999}){999})')).toContain('about a billion instructions')
  })

  it('takes the patterns an MSISDN needs', () => {
    for (const ok of ['^60(?<n>\\d{3})$', '^(?:60|65)[0-9]{8,10}$', '5(?<nn>\\d{2})$', '[0-9]{1,15}'.repeat(10)])
      expect(regexCostProblem(ok), ok).toBeUndefined()
  })
})
