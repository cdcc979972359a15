/**
 * The rules of a step are looked up through an index (by ending, by whole MSISDN) instead of tested
 * one by one: the candidates it finds must be exactly the rules that fit, in the order of precedence,
 * for rules of every kind of match mixed together (checked against testing every rule in order).
 */
import { describe, expect, it } from 'vitest'
import { compileRule, ruleMatches, type RuleContext } from '../../src/core/rules.js'
import { RuleSet } from '../../src/core/ruleset.js'
import { State } from '../../src/core/state.js'
import type { Rule } from '../../src/core/world-schema.js'

/** A small deterministic generator (the same cases on every run). */
function random(seed: number) {
  let s = seed
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31
    return s % n
  }
}

const MSISDNS = ['60123456001', '60123456011', '60123456101', '60123456111', '60129999001', '6512345001', '1', '60123456599', '60123456050']

function rules(seed: number, count: number): Rule[] {
  const r = random(seed)
  const pick = <T>(xs: T[]) => xs[r(xs.length)]!
  return Array.from({ length: count }, (_, i) => {
    const match: Record<string, unknown> = {}
    switch (r(7)) {
      case 0:
        match.msisdn = pick(MSISDNS)
        break
      case 1:
      case 2:
        match.ending = pick(['1', '01', '001', '011', '111', '99', '050', '5001'])
        break
      case 3:
        match.prefix = pick(['6012', '65', '60129'])
        break
      case 4:
        match.ending_range = pick([
          ['000', '049'],
          ['000', '999'],
          ['0', '1'],
        ])
        break
      case 5:
        match.regex = pick(['5(?<nn>\\d{2})$', '^60', '1{2}'])
        break
      default:
      // no MSISDN part: every number
    }
    if (r(3) === 0) match.country = pick(['my', 'sg'])
    if (r(4) === 0) match.service = pick(['STREAMPLUS', 'OTHER'])
    if (r(3) === 0 && match.msisdn === undefined) match.ending ??= pick(['1', '001'])
    return { id: `r${i}`, match, step: pick(['init', 'charge', ['init', 'charge']]), effect: {} } as unknown as Rule
  })
}

/** Every rule of the step tested in order: what the index must find. */
function expected(all: Rule[], ctx: RuleContext): string[] {
  return all.filter((rule) => ruleMatches(compileRule(rule, 'world'), ctx, true)).map((rule) => rule.id)
}

describe('the rules index', () => {
  it('finds exactly the rules that fit, in order, for every kind of match mixed', () => {
    let compared = 0
    for (let seed = 1; seed <= 40; seed++) {
      const world = rules(seed, 3 + (seed % 25))
      const set = new RuleSet(new State(), world)
      for (const msisdn of MSISDNS)
        for (const country of ['my', 'sg'])
          for (const step of ['init', 'charge'] as const) {
            const ctx: RuleContext = { step, msisdn, country, carrier: 'c', service: 'STREAMPLUS' }
            const found = set.matching(ctx).list.map((d) => d.rule.id)
            expect(found, `seed ${seed}, ${step} ${msisdn} ${country}`).toEqual(expected(world, ctx))
            compared += found.length
            // Asked again (a cached step answers from its cache): the same.
            expect(set.matching(ctx).list.map((d) => d.rule.id)).toEqual(found)
          }
    }
    // The cases do find rules (not only empty lists).
    expect(compared).toBeGreaterThan(500)
  })

  it('a runtime rule comes before the world rules whatever the index holds it under', () => {
    const state = new State()
    const world = [
      { id: 'w-ending', match: { ending: '001' }, step: 'init', effect: { error: 'INVALID_MSISDN' } },
      { id: 'w-msisdn', match: { msisdn: '60123456001' }, step: 'init', effect: { error: 'BLACKLISTED' } },
    ] as unknown as Rule[]
    state.rules.set('rt', { id: 'rt', rule: { id: 'rt', match: { prefix: '6012' }, step: 'init', effect: {} }, used: 0, created_at: 0, seq: 1 } as never)
    const set = new RuleSet(state, world)
    const ctx: RuleContext = { step: 'init', msisdn: '60123456001', country: 'my', carrier: 'c', service: 'S' }
    expect(set.matching(ctx).list.map((d) => d.rule.id)).toEqual(['rt', 'w-ending', 'w-msisdn'])
    state.rules.clear()
    set.reload()
    expect(set.matching(ctx).list.map((d) => d.rule.id)).toEqual(['w-ending', 'w-msisdn'])
  })
})
