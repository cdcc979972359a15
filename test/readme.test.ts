import { readFileSync, statSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { describeRule, scenarioTable } from '../src/core/scenarios.js'
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
