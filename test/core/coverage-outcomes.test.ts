/**
 * The coverage outcomes come from the engine's tables and the world in force: nothing lists them by
 * hand, so a code added to a table is an outcome (listed, with how, and counted) with no other change.
 */
import { describe, expect, it } from 'vitest'
import { OUTCOME_FAMILIES } from '../../src/core/coverage-outcomes.js'
import { OPERATION_OUTCOMES, type OutcomeCode } from '../../src/core/outcomes.js'
import { engineAt } from './harness.js'

describe('coverage outcomes derived from the engine', () => {
  it('lists, for the default world, what each merchant can produce, each unseen one with how', () => {
    const h = engineAt('2026-01-31T09:00:00')
    const demo = h.engine.coverageReport('demo')[0]!
    const ids = demo.outcomes.map((o) => o.id)
    expect(ids).toContain('init.BAD_REQUEST')
    expect(ids).toContain('init.MERCHANT_SERVICE_NOT_CONFIGURED')
    expect(ids).toContain('status.ERROR_500')
    expect(ids).toContain('retry.failed')
    expect(ids).not.toContain('verify.MERCHANT_SERVICE_NOT_CONFIGURED')
    expect(ids).not.toContain('init.UNAUTHORIZED_401')
    expect(new Set(ids).size).toBe(ids.length)
    expect(demo.total).toBe(ids.length)
    for (const o of demo.outcomes) expect(o.how, o.id).toMatch(/\w/)
    expect(demo.outcomes.find((o) => o.id === 'verify.INSUFFICIENT_FUNDS')!.how).toBe('Verify (after Init) for a number ending 201 (rule charge-201)')
    const inactive = h.engine.coverageReport('inactive')[0]!
    expect(inactive.outcomes.map((o) => o.id)).toEqual(['init.UNAUTHORIZED_401', 'verify.UNAUTHORIZED_401', 'status.UNAUTHORIZED_401'])
    const offsite = h.engine.coverageReport('offsite')[0]!
    expect(offsite.outcomes.map((o) => o.id)).toEqual(['init.UNAUTHORIZED_403', 'verify.UNAUTHORIZED_403', 'status.UNAUTHORIZED_403'])
  })

  it('a code taken from or added to an operation table, or a family added, changes the outcomes with no other change', async () => {
    const init = OPERATION_OUTCOMES.init as unknown as OutcomeCode[]
    const before = [...init]
    try {
      init.splice(init.indexOf('FAILED_INIT_SUB'), 1)
      expect(
        engineAt('2026-01-31T09:00:00')
          .engine.coverageReport('demo')[0]!
          .outcomes.map((o) => o.id),
      ).not.toContain('init.FAILED_INIT_SUB')
    } finally {
      init.splice(0, init.length, ...before)
    }
    expect(
      engineAt('2026-01-31T09:00:00')
        .engine.coverageReport('demo')[0]!
        .outcomes.map((o) => o.id),
    ).toContain('init.FAILED_INIT_SUB')
    // A family plugged in (as OTP delivery or faults are): listed with its how, and counted.
    OUTCOME_FAMILIES.push({ ids: ['otp.test_only'], list: () => [{ id: 'otp.test_only', how: 'Do the test thing' }] })
    try {
      const h = engineAt('2026-01-31T09:00:00')
      expect(h.engine.coverageReport('demo')[0]!.outcomes.at(-1)).toEqual({ id: 'otp.test_only', count: 0, how: 'Do the test thing' })
      h.engine.coverage.count(null, 'demo', 'otp.test_only' as never, h.engine.now())
      expect(h.engine.coverageReport('demo')[0]!.outcomes.at(-1)).toEqual({ id: 'otp.test_only', count: 1 })
    } finally {
      OUTCOME_FAMILIES.pop()
    }
  })

  const lim = { id: 'lim', match: { ending: '777' }, step: 'init', effect: { error: 'SPENDING_LIMIT_REACHED' } }

  it('a rule added is an outcome at once: an Init code no rule gave before is listed, with the rule as its how', async () => {
    const h = engineAt('2026-01-31T09:00:00')
    expect(h.engine.coverageReport('demo')[0]!.outcomes.map((o) => o.id)).not.toContain('init.SPENDING_LIMIT_REACHED')
    await h.engine.addRule(lim)
    expect(h.engine.coverageReport('demo')[0]!.outcomes.find((o) => o.id === 'init.SPENDING_LIMIT_REACHED')).toEqual({
      id: 'init.SPENDING_LIMIT_REACHED',
      count: 0,
      how: 'Init a number ending 777 (rule lim)',
    })
  })

  it('an outcome a rule added gives is counted', async () => {
    const h = engineAt('2026-01-31T09:00:00')
    await h.engine.addRule(lim)
    const demo = h.engine.authenticate('sandbox-demo-key')!
    const out = await h.engine.init(demo, { msisdn: '60123456777', service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' })
    expect(out.code).toBe('SPENDING_LIMIT_REACHED')
    expect(h.engine.coverageReport('demo')[0]!.outcomes.find((o) => o.id === 'init.SPENDING_LIMIT_REACHED')).toEqual({
      id: 'init.SPENDING_LIMIT_REACHED',
      count: 1,
    })
  })
})
