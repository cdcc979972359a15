/** The lockout of wrong admin tokens in time: it ends after a minute, and the count starts over then. */
import { describe, expect, it } from 'vitest'
import { AdminAttempts, LOCKOUT_MS, MAX_WRONG_TOKENS } from '../../src/http/admin-attempts.js'

describe('AdminAttempts', () => {
  it('refuses an address for LOCKOUT_MS after MAX_WRONG_TOKENS wrong tokens, then takes tokens again', () => {
    let now = 1_000_000
    const attempts = new AdminAttempts(() => now)
    for (let i = 0; i < MAX_WRONG_TOKENS; i++) {
      expect(() => attempts.check('198.51.100.4')).not.toThrow()
      attempts.given('198.51.100.4', false)
    }
    expect(() => attempts.check('198.51.100.4')).toThrow(`10 wrong admin tokens in a row from 198.51.100.4: no token is taken from it for 60 s more`)
    // Another address is not concerned.
    expect(() => attempts.check('198.51.100.5')).not.toThrow()
    now += LOCKOUT_MS - 1
    expect(() => attempts.check('198.51.100.4')).toThrow(/for 1 s more/)
    now += 1
    expect(() => attempts.check('198.51.100.4')).not.toThrow()
    // The count started over: nine more wrong ones do not refuse it.
    for (let i = 0; i < MAX_WRONG_TOKENS - 1; i++) attempts.given('198.51.100.4', false)
    expect(() => attempts.check('198.51.100.4')).not.toThrow()
  })
})
