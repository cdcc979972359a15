/** coverage() in the library (in-process, per session) and in the HTTP client: the control API's answer, the same either way. */
import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/index.js'
import { DcbClient } from '../../src/client/index.js'
import { startSandbox } from '../../src/server.js'

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }

describe('coverage()', () => {
  it('in-process: counts the calls made through sandbox.fetch, per session; reset starts over; an unknown merchant throws', async () => {
    const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
    const init = (msisdn: string, headers: Record<string, string> = {}) =>
      sandbox.fetch('http://localhost/subscriptions/init', {
        method: 'POST',
        headers: { ...H, ...headers },
        body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' }),
      })
    await init('60123456001')
    await init('60123456104', { 'x-dcb-session': 'lib' })
    const all = await sandbox.coverage()
    expect(all.coverage.map((m) => [m.merchant, m.covered, m.outcomes.find((o) => o.id === 'init.otp')!.count])).toEqual([['demo', 1, 1]])
    const inSession = await sandbox.session('lib').coverage({ merchant: 'demo' })
    expect(inSession.coverage[0]!.outcomes.filter((o) => o.count)).toEqual([{ id: 'init.FAILED_INIT_SUB', count: 1 }])
    await expect(sandbox.coverage({ merchant: 'nobody' })).rejects.toMatchObject({ code: 'MERCHANT_NOT_FOUND', status: 404 })
    await sandbox.reset()
    expect((await sandbox.coverage()).coverage).toEqual([])
    expect((await sandbox.session('lib').coverage()).coverage).toHaveLength(1)
    await sandbox.close()
  })

  it('over HTTP: the client answers what the control API answers', async () => {
    const server = await startSandbox({ port: 0, inMemory: true, clock: '2026-01-31T00:00:00', onError: () => {} })
    try {
      const client = new DcbClient({ baseUrl: server.url, apiKey: 'sandbox-demo-key' })
      await client.init({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
      const got = await client.coverage()
      expect(got).toEqual(await (await fetch(`${server.url}/_sandbox/coverage`)).json())
      expect(got.coverage[0]).toMatchObject({ merchant: 'demo', covered: 1, total: 51, percent: 1, since: '2026-01-31T00:00:00.000000', findings: [] })
      expect((await client.coverage({ merchant: 'other' })).coverage[0]).toMatchObject({ merchant: 'other', covered: 0 })
      await expect(client.coverage({ merchant: 'nobody' })).rejects.toMatchObject({ code: 'MERCHANT_NOT_FOUND', status: 404 })
    } finally {
      await server.close()
    }
  })
})
