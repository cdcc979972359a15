/**
 * The regex pool: the compiled regexes of every session's runtime rules, held once per pattern
 * under one budget, so their memory is bounded however many sessions there are.
 */
import { describe, expect, it } from 'vitest'
import { SandboxError } from '../../src/core/errors.js'
import { regexSize } from '../../src/core/regex-cost.js'
import { RegexPool } from '../../src/core/regex-pool.js'
import { State, type Change } from '../../src/core/state.js'
import { build } from './harness.js'

/** A distinct pattern of `regexSize` 983 (the most one rule takes is 1,000) for each `i` under 10. */
const costly = (i: number) => `^${i}\\d{1,490}`
const rule = (regex: string, id?: string) => ({ ...(id ? { id } : {}), match: { regex }, step: 'init', effect: { error: 'BARRED' } })

/** How a full pool refuses a rule: naming the field and the bound. */
const FULL =
  /^match\.regex: the runtime rules of all sessions hold regexes of \d+ instructions, and this one adds \d+: the most the sandbox holds is 2000; remove rules/

describe('RegexPool', () => {
  it('counts a pattern once however many rules hold it, until the last lets it go', () => {
    const pool = new RegexPool(10_000)
    const a = pool.acquire(costly(1))!
    const b = pool.acquire(costly(1))!
    expect(pool.held).toBe(regexSize(costly(1)))
    pool.release(a)
    expect(pool.held).toBe(regexSize(costly(1)))
    pool.release(b)
    expect(pool.held).toBe(0)
  })

  it('refuses a new pattern past its budget', () => {
    const pool = new RegexPool(2_000)
    expect(pool.acquire(costly(1))).toBeDefined()
    expect(pool.acquire(costly(2))).toBeDefined()
    expect(pool.acquire(costly(3))).toBeUndefined()
    expect(pool.problem(costly(3))).toMatch(/the most the sandbox holds is 2000/)
  })

  it('takes a pattern it holds already, its budget full', () => {
    const pool = new RegexPool(2_000)
    pool.acquire(costly(1))
    pool.acquire(costly(2))
    pool.acquire(costly(3))
    expect(pool.acquire(costly(1))).toBeDefined()
    expect(pool.held).toBe(2 * regexSize(costly(1)))
  })

  it('compiles a held pattern once for every rule that holds it', () => {
    const pool = new RegexPool()
    const a = pool.acquire('^60(?<n>\\d{3})$')!
    const b = pool.acquire('^60(?<n>\\d{3})$')!
    expect(a.compiled()).toBe(b.compiled())
    expect(a.compiled().matcher('60123').find()).toBe(true)
  })
})

describe('the runtime rules of sessions sharing a pool', () => {
  const pastBudget = async () => {
    const one = build({ regexPool: new RegexPool(2_000) })
    await one.engine.addRule(rule(costly(1)))
    await one.engine.addRule(rule(costly(2)))
    const refused = await one.engine.addRule(rule(costly(3))).catch((e: unknown) => e)
    return { one, refused }
  }

  it('refuse a rule past the budget with BAD_RULE naming match.regex with the bound', async () => {
    const { refused } = await pastBudget()
    expect(refused).toBeInstanceOf(SandboxError)
    expect((refused as SandboxError).code).toBe('BAD_RULE')
    expect((refused as SandboxError).message).toMatch(FULL)
  })

  it('store nothing of a rule refused past the budget', async () => {
    const { one } = await pastBudget()
    expect(one.engine.rules().runtime).toHaveLength(2)
  })

  it('refuse in one session what the rules of another fill', async () => {
    const regexPool = new RegexPool(2_000)
    const one = build({ regexPool })
    const two = build({ regexPool })
    await one.engine.addRule(rule(costly(1)))
    await one.engine.addRule(rule(costly(2)))
    await expect(two.engine.addRule(rule(costly(3)))).rejects.toThrow(FULL)
    // The same pattern is held once: another session takes it at no cost.
    await expect(two.engine.addRule(rule(costly(1)))).resolves.toMatchObject({ rule: { match: { regex: costly(1) } } })
  })

  it('take a rule again once one is removed, cleared or its session released', async () => {
    const regexPool = new RegexPool(2_000)
    const one = build({ regexPool })
    const two = build({ regexPool })
    const first = await one.engine.addRule(rule(costly(1)))
    await one.engine.addRule(rule(costly(2)))
    await one.engine.deleteRule(first.id)
    await two.engine.addRule(rule(costly(3)))
    await one.engine.deleteAllRules()
    await two.engine.addRule(rule(costly(4)))
    two.engine.release()
    expect(regexPool.held).toBe(0)
    await expect(one.engine.addRule(rule(costly(5)))).resolves.toBeDefined()
  })

  /** Three stored rules read by a session whose pool holds two. */
  const overfull = async () => {
    const filled = build({ regexPool: new RegexPool(10_000) })
    for (const i of [1, 2, 3]) await filled.engine.addRule(rule(costly(i), `r${i}`))
    // The same records (a data file, another replica's) read by a session whose pool holds two.
    const state = new State()
    for (const [id, rec] of filled.state.rules) state.rules.set(id, rec)
    return build({ state, regexPool: new RegexPool(2_000) })
  }

  it('leave out stored rules the pool has no room for, saying which with why', async () => {
    const reader = await overfull()
    const { rules, runtime, left_out } = reader.engine.rules()
    expect(runtime).toHaveLength(3)
    // The newest are consulted first, so they are the ones in force.
    expect(rules.filter((r) => r.source === 'runtime').map((r) => r.id)).toEqual(['r3', 'r2'])
    expect(left_out).toEqual([{ id: 'r1', problem: expect.stringMatching(FULL) }])
  })

  it('take a left-out stored rule in once room is made', async () => {
    const reader = await overfull()
    // Room made: the next reload takes it in.
    await reader.engine.deleteRule('r3')
    expect(reader.engine.rules().left_out).toBeUndefined()
    expect(
      reader.engine
        .rules()
        .rules.filter((r) => r.source === 'runtime')
        .map((r) => r.id),
    ).toEqual(['r2', 'r1'])
  })

  it('tell the listener of a rule another process stored that the pool has no room for', async () => {
    const regexPool = new RegexPool(2_000)
    const other = build({ regexPool: new RegexPool() })
    const theirs = await other.engine.addRule(rule(costly(3), 'theirs'))
    const state = new State()
    // A store several processes share: the next turn brings in the rule the other process stored.
    let incoming: Change[] = [{ c: 'rules', id: theirs.id, v: theirs }]
    const gate = {
      enter: async () => {
        for (const c of incoming) if ('c' in c) state.rules.set(c.id, c.v as never)
        const taken = incoming
        incoming = []
        return taken
      },
      sync: async () => [],
    }
    const here = build({ state, regexPool, gate })
    const told: { id: string; problem: string }[] = []
    here.engine.onRulesLeftOut((rules) => told.push(...rules))
    regexPool.acquire(costly(1))
    regexPool.acquire(costly(2))
    await here.engine.addRule(rule('^60', 'mine'))
    expect(told).toEqual([{ id: 'theirs', problem: expect.stringMatching(FULL) }])
    expect(here.engine.rules().left_out?.map((d) => d.id)).toEqual(['theirs'])
  })

  it('say nothing is left out when every rule fits', () => {
    expect(build().engine.rules()).not.toHaveProperty('left_out')
  })
})
