/** coverage() in the library (in-process, per session) and in the HTTP client: the control API's answer, the same either way. */
import { beforeAll, describe, expect, it } from 'vitest'
import { coverageJUnit, coverageVerdict, createSandbox, mergeCoverage } from '../../src/index.js'
import { DcbClient } from '../../src/client/index.js'
import { startSandbox } from '../../src/server.js'

/** A coverage answer, as mergeCoverage takes and gives it. */
type Coverage = ReturnType<typeof mergeCoverage>

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }

describe('coverage()', () => {
  describe('in-process, over calls made through sandbox.fetch', () => {
    /** A sandbox with one Init in the default session and one in session "lib". */
    async function seeded() {
      const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
      const init = (msisdn: string, headers: Record<string, string> = {}) =>
        sandbox.fetch('http://localhost/subscriptions/init', {
          method: 'POST',
          headers: { ...H, ...headers },
          body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' }),
        })
      await init('60123456001')
      await init('60123456104', { 'x-dcb-session': 'lib' })
      return sandbox
    }

    it('counts the calls of the default session', async () => {
      const sandbox = await seeded()
      const all = await sandbox.coverage()
      expect(all.coverage.map((m) => [m.merchant, m.covered, m.outcomes.find((o) => o.id === 'init.otp')!.count])).toEqual([['demo', 1, 1]])
      await sandbox.close()
    })

    it('counts the calls of a named session apart', async () => {
      const sandbox = await seeded()
      const inSession = await sandbox.session('lib').coverage({ merchant: 'demo' })
      expect(inSession.coverage[0]!.outcomes.filter((o) => o.count)).toEqual([{ id: 'init.FAILED_INIT_SUB', count: 1 }])
      await sandbox.close()
    })

    it('throws MERCHANT_NOT_FOUND for an unknown merchant', async () => {
      const sandbox = await seeded()
      await expect(sandbox.coverage({ merchant: 'nobody' })).rejects.toMatchObject({ code: 'MERCHANT_NOT_FOUND', status: 404 })
      await sandbox.close()
    })

    it('starts over on reset, other sessions kept', async () => {
      const sandbox = await seeded()
      await sandbox.reset()
      expect((await sandbox.coverage()).coverage).toEqual([])
      expect((await sandbox.session('lib').coverage()).coverage).toHaveLength(1)
      await sandbox.close()
    })
  })

  it('over HTTP: the client answers what the control API answers', async () => {
    const server = await startSandbox({ port: 0, inMemory: true, clock: '2026-01-31T00:00:00', onError: () => {} })
    try {
      const client = new DcbClient({ baseUrl: server.url, apiKey: 'sandbox-demo-key' })
      await client.init({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
      const got = await client.coverage()
      expect(got).toEqual(await (await fetch(`${server.url}/_sandbox/coverage`)).json())
      const total = got.coverage[0]!.outcomes.length
      expect(got.coverage[0]).toMatchObject({
        merchant: 'demo',
        covered: 1,
        total,
        percent: Math.floor(100 / total),
        since: '2026-01-31T00:00:00.000000',
        findings: [],
      })
      expect((await client.coverage({ merchant: 'other' })).coverage[0]).toMatchObject({ merchant: 'other', covered: 0 })
      await expect(client.coverage({ merchant: 'nobody' })).rejects.toMatchObject({ code: 'MERCHANT_NOT_FOUND', status: 404 })
    } finally {
      await server.close()
    }
  })

  describe('merged sessions (a, then b with a day passed and a refused merchant)', () => {
    let a: Coverage
    let b: Coverage
    let merged: Coverage
    beforeAll(async () => {
      const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
      const init = (msisdn: string, session: string, key = 'sandbox-demo-key') =>
        sandbox.fetch('http://localhost/subscriptions/init', {
          method: 'POST',
          headers: { ...H, 'api-key': key, 'x-dcb-session': session },
          body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' }),
        })
      await init('60123456001', 'a')
      await init('60123456001', 'b')
      await init('60123456104', 'b')
      await sandbox.session('b').advance('P1D')
      await init('60123456001', 'b', 'sandbox-inactive-key')
      a = await sandbox.session('a').coverage()
      b = await sandbox.session('b').coverage()
      merged = mergeCoverage(a, b)
      await sandbox.close()
    })

    it('mergeCoverage sums the sessions per merchant, since the earliest', () => {
      expect(merged.coverage.map((m) => m.merchant)).toEqual(['demo', 'inactive'])
      const demo = merged.coverage[0]!
      expect(demo.outcomes.filter((o) => o.count)).toEqual([
        { id: 'init.otp', count: 2 },
        { id: 'init.FAILED_INIT_SUB', count: 1 },
      ])
      expect(demo).toMatchObject({ covered: 2, total: a.coverage[0]!.total, since: '2026-01-31T00:00:00.000000' })
      expect(demo.outcomes.find((o) => o.id === 'verify.SUCCESS')!.how).toMatch(/^Verify/)
    })

    it('coverageJUnit gates on a policy as --junit does', () => {
      // A policy: the outcome required and seen passes, the other never seen is skipped, the refused merchant is not held.
      const xml = coverageJUnit(merged, { require: ['init.otp', 'init.FAILED_INIT_SUB'], allow: ['AUTH_FAILURE'] })
      expect(xml).toMatch(/<testsuites name="dcb coverage" tests="\d+" failures="0" skipped="\d+">/)
      expect(xml).toContain('<testcase classname="dcb.coverage.demo" name="verify.SUCCESS"><skipped message="never seen, not required" /></testcase>')
      expect(xml).toContain('name="finding AUTH_FAILURE"><system-out>')
      const failing = coverageJUnit(merged, { require: ['verify.*'] })
      expect(failing).toContain('name="verify.SUCCESS"><failure message="never seen" type="uncovered">')
    })

    it('coverageVerdict gives the reasons dcb coverage --policy prints', () => {
      expect(coverageVerdict(merged, { require: ['init.otp'], allow: ['AUTH_FAILURE'] })).toEqual([])
      const reasons = coverageVerdict(merged, { require: ['verify.*'], allow: [] })
      expect(reasons).toContainEqual(expect.stringMatching(/^demo: required outcome verify\.SUCCESS was never seen; Verify /))
      // The refused merchant is not held to what is required; its finding is not allowed.
      expect(reasons.filter((r) => !r.startsWith('demo: required outcome verify.'))).toEqual([
        expect.stringMatching(/^inactive: finding AUTH_FAILURE x1 is not allowed: /),
      ])
      expect(() => coverageVerdict(merged, { allow: ['NOPE'] })).toThrow(/allow: "NOPE" is not a finding code/)
    })

    it('coverageJUnit refuses a bad policy by what is wrong with it', () => {
      // A policy file's own checks: an unknown finding, a glob matching nothing, an unknown key.
      expect(() => coverageJUnit(merged, { allow: ['NOPE'] })).toThrow(/allow: "NOPE" is not a finding code/)
      expect(() => coverageJUnit(merged, { require: ['nope.*'] })).toThrow(/the glob "nope\.\*" matches no outcome/)
      expect(() => coverageJUnit(merged, { mni: 3 } as never)).toThrow(/unknown key "mni"/)
    })
  })
})
