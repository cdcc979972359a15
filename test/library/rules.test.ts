/** The library goes through the one rule validation and precedence of the engine. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createSandbox, type Sandbox } from '../../src/library/sandbox.js'

describe('createSandbox rules', () => {
  let sandbox: Sandbox
  beforeEach(async () => {
    sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
  })
  afterEach(async () => {
    await sandbox.close()
  })

  it('rules.add refuses an effect its step does not take', async () => {
    await expect(sandbox.rules.add({ step: 'verify', effect: { cancel_after: 'P1D' } })).rejects.toMatchObject({
      code: 'BAD_RULE',
      status: 400,
      message: 'effect.cancel_after: step verify does not take cancel_after (the steps that take it: activate)',
    })
  })

  it('rules.list lists the rules in force in order, runtime ones first', async () => {
    await sandbox.rules.add({ id: 'slow-verify', match: { ending: '001' }, step: 'verify', effect: { delay_ms: 10 } })
    const { rules } = await sandbox.rules.list()
    expect(rules.slice(0, 2).map((r) => [r.id, r.source])).toEqual([
      ['slow-verify', 'runtime'],
      ['ok-000-099', 'fixtures/world.json'],
    ])
  })

  it('reset with a clock sets that clock, the world left as it was', async () => {
    await sandbox.rules.add({ id: 'slow-verify', match: { ending: '001' }, step: 'verify', effect: { delay_ms: 10 } })
    await sandbox.reset({ clock: '2025-01-01T00:00:00' })
    expect((await sandbox.now()).now).toBe('2025-01-01T00:00:00.000000')
    expect((await sandbox.world()).extends).toBe('none')
  })
})
