import { execFile } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { LIBRARY_EXPORTS } from './library/packed.js'

describe('the package as a library', () => {
  it("runs the library reference's example (docs/reference/library.md) through the package's own name (built dist)", async () => {
    const script = `
      import { createClient, startSandbox } from 'dcb-sandbox'
      const sandbox = await startSandbox({ port: 0, inMemory: true, clock: '2026-01-31T00:00:00' })
      const r = await fetch(sandbox.url + '/subscriptions/init', { method: 'POST', headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }, body: JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }) })
      const init = await r.json()
      const moved = await createClient({ baseUrl: sandbox.url }).advance('P1M')
      await sandbox.close()
      console.log(JSON.stringify({ status: init.status, now: moved.clock.now, events: moved.events.length, count: moved.events.length + (moved.events_omitted ?? 0) }))
    `
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd() }, (err, stdout, stderr) =>
        err ? reject(new Error(stderr)) : resolve(stdout),
      ),
    )
    // The OTP of the Init expires within the month: one event.
    expect(JSON.parse(out)).toEqual({ status: 'SUCCESS', now: '2026-02-28T00:00:00.000000', events: 1, count: 1 })
  })

  it('the main entry exports the public API only (no engine, stores, request log or HTTP app)', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--input-type=module', '-e', "console.log(Object.keys(await import('dcb-sandbox')).sort().join(' '))"],
        (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout.trim())),
      ),
    )
    expect(out.split(' ')).toEqual(LIBRARY_EXPORTS)
  })
})
