import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, writeJson, type Client } from '../helpers.js'
import { dcb } from './run.js'

// The same run file answered otherwise in process: a failed consent's result had `reason` (the
// redirect's X-DCB-Reason) against a server and none with --fixtures/--clock, so an expectation on it
// passed on one and stopped the run ("missing") on the other.
const tmp = tempDir()
let c: Client
let file: string
beforeAll(async () => {
  c = await startClient()
  file = writeJson(tmp.dir, 'consent.run.json', {
    steps: [
      { rule: { id: 'no-consent', match: { msisdn: '359881234001' }, step: 'consent', effect: { error: 'NOT_ELIGIBLE' } } },
      { init: { msisdn: '359881234001', service_code: 'STREAMPLUS', country_code: 'bg' } },
      { consent: { url: '${init.payload.redirect_url}' } },
      {
        expect: {
          'consent.query.message': 'NOT_ELIGIBLE',
          'consent.reason': 'rule no-consent (MSISDN 359881234001): consent approval NOT_ELIGIBLE',
        },
      },
    ],
  })
})
afterAll(async () => {
  await c.close()
  tmp.cleanup()
})

describe("dcb run: a failed consent's reason", () => {
  it('is in the result in process as against a server', async () => {
    for (const where of [
      ['--clock', '2026-01-31T09:00:00'],
      ['--base-url', c.url],
    ]) {
      const r = await dcb(['run', file, ...where])
      expect(r.stderr, where.join(' ')).toBe('')
      expect(r.stdout).toContain('✔ 4 steps, 2 expectations passed')
      expect(r.code).toBe(0)
    }
  })
})
