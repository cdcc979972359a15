/** The library goes through the one rule validation and precedence of the engine. */
import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/library/sandbox.js'

describe('createSandbox rules', () => {
  it('rules.add refuses an effect its step does not take, and lists rules in force in order', async () => {
    const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
    try {
      await expect(sandbox.rules.add({ step: 'verify', effect: { cancel_after: 'P1D' } })).rejects.toMatchObject({
        code: 'BAD_RULE',
        status: 400,
        message: 'effect.cancel_after: step verify does not take cancel_after (the steps that take it: activate)',
      })
      await sandbox.rules.add({ id: 'slow-verify', match: { ending: '001' }, step: 'verify', effect: { delay_ms: 10 } })
      const { rules } = await sandbox.rules.list()
      expect(rules.slice(0, 2).map((r) => [r.id, r.source])).toEqual([
        ['slow-verify', 'runtime'],
        ['ok-000-099', 'fixtures/world.json'],
      ])
      await sandbox.reset({ clock: '2025-01-01T00:00:00' })
      expect((await sandbox.now()).now).toBe('2025-01-01T00:00:00.000000')
      expect((await sandbox.world()).extends).toBe('none')
    } finally {
      await sandbox.close()
    }
  })
})
