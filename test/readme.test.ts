import { readFileSync, statSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { worldNames } from '../src/core/layering.js'
import { validateRule } from '../src/core/rule-check.js'
import { describeRule, scenarioTable } from '../src/core/scenarios.js'
import { EFFECTS, STEP_EFFECTS, STEPS } from '../src/core/world-schema.js'
import { loadWorld } from '../src/world/load.js'
import { CONSOLE_FILES } from '../src/http/console.js'

describe('README', () => {
  it('shows the magic-number table generated from the default world', () => {
    const readme = readFileSync('README.md', 'utf8')
    const block = /<!-- scenarios:start -->\n([\s\S]*?)\n<!-- scenarios:end -->/.exec(readme)
    expect(block).not.toBeNull()
    const { world } = loadWorld()
    expect(block![1]).toBe(scenarioTable(world.rules.map((r) => describeRule(r, 'fixture'))))
  })

  it('keeps the step/effect table of the engine, and every example rule passes the one rule validation', () => {
    const readme = readFileSync('README.md', 'utf8')
    const table = /\| step \| when \| effects \|\n\|---\|---\|---\|\n((?:\|.*\n)+)/.exec(readme)![1]!
    const documented = new Map<string, string[]>()
    for (const row of table.trim().split('\n')) {
      const [steps, , effects] = row
        .split('|')
        .slice(1, 4)
        .map((c) => c.trim())
      const names = [...effects!.matchAll(/`(\w+)`/g)].map((m) => m[1]!).filter((e) => (EFFECTS as readonly string[]).includes(e))
      for (const step of steps!.matchAll(/`(\w+)`/g)) documented.set(step[1]!, names)
    }
    // `error` is documented for init and verify only: the row of init, verify and status says so.
    documented.set('status', ['delay_ms', 'http'])
    for (const step of STEPS) expect([step, ...[...documented.get(step)!].sort()]).toEqual([step, ...[...STEP_EFFECTS[step]].sort()])
    const block = /```jsonc\n([\s\S]*?)```/.exec(readme)![1]!
    const examples = block
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line.replace(/\s+\/\/.*$/, '')))
    expect(new Set(examples.map((r) => (Array.isArray(r.step) ? r.step : [r.step])).flat())).toEqual(new Set(STEPS))
    const names = worldNames(loadWorld().world)
    for (const rule of examples) expect(validateRule(rule, names)).toMatchObject({ ok: true })
  })

  it('names the two commands', () => {
    const readme = readFileSync('README.md', 'utf8')
    expect(readme).toContain('npm ci && npm start')
    expect(readme).toContain('npm ci && npm test')
  })

  it("states the console's page weight as it is", () => {
    const readme = readFileSync('README.md', 'utf8')
    const bytes = CONSOLE_FILES.reduce((n, f) => n + statSync(`src/console/${f}`).size, 0)
    expect(readme).toContain(`Page weight: **${bytes} bytes** in all`)
  })
})
