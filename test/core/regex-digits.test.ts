/**
 * `regexCanMatchDigits`, the walk over the program re2js compiles a rule's regex to, against the
 * matcher itself: a regex it calls dead has a match in no string of digits (sound), and one it
 * calls alive has a match in a short one (exact, for these small patterns).
 */
import fc from 'fast-check'
import { RE2JS } from 're2js'
import { describe, expect, it } from 'vitest'
import { regexCanMatchDigits } from '../../src/core/rules.js'

/** Every string of these digits, up to `max` long (the digits 2-9 behave alike in the patterns below: 2 stands for them). */
function* digitStrings(max: number, alphabet = ['0', '1', '2']): Generator<string> {
  let layer = ['']
  for (let n = 1; n <= max; n++) {
    layer = layer.flatMap((s) => alphabet.map((d) => s + d))
    yield* layer
  }
}

/** A digit string the regex finds a match in (as rules.ts matches an MSISDN), if one is up to `max` long. */
function witness(pattern: string, max: number): string | undefined {
  const re = RE2JS.compile(pattern)
  for (const s of digitStrings(max)) if (re.matcher(s).find()) return s
  return undefined
}

describe('regexCanMatchDigits', () => {
  it('tells the regexes no MSISDN has a match of', () => {
    for (const dead of ['^abc', 'abc', '^\\+60', '\\D', '[^0-9]', '^$', '$^', '\\b\\B', '6\\b0', '(?i)^sbx', '\\p{Greek}', '[[:alpha:]]', '^\\d+x$'])
      expect(regexCanMatchDigits(dead), dead).toBe(false)
    for (const alive of ['5(?<nn>\\d{2})$', '', 'x*', '\\B', '^\\b6', '\\b$', '[a-z0-9]', '\\pN', '(?s).', 'a|1', '(?m)^1$', '\\A1\\z', '(?:\\+|^)60'])
      expect(regexCanMatchDigits(alive), alive).toBe(true)
  })

  it('agrees with the matcher on random patterns (digits, letters, classes, anchors)', () => {
    const atom = fc.constantFrom('0', '1', 'a', '\\d', '\\D', '.', '[01]', '[^0]', '[a-z]', '\\b', '\\B', '^', '$', '\\+')
    const item = fc.tuple(atom, fc.constantFrom('', '', '*', '+', '?')).map(([a, q]) => (q && /^\\[bB]$|^[\^$]$/.test(a) ? a : a + q))
    const sequence = fc.array(item, { minLength: 1, maxLength: 5 }).map((parts) => parts.join(''))
    const pattern = fc.array(sequence, { minLength: 1, maxLength: 2 }).map((branches) => branches.join('|'))
    fc.assert(
      fc.property(pattern, (p) => {
        const found = witness(p, 7)
        if (regexCanMatchDigits(p)) expect(found, `${p} was called alive`).toBeDefined()
        else expect(found, `${p} was called dead`).toBeUndefined()
      }),
      { numRuns: 300 },
    )
  })
})
