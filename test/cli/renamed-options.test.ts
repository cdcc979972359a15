/**
 * The request log's options say "request log" (`--request-log-size`, `requestLogSize`), and the old
 * names (`--journal-size`, `journalSize`) keep working: scripts and suites written before the rename
 * get the same sandbox. Both names with different values are refused by name.
 */
import { describe, expect, it } from 'vitest'
import { createSandbox, SandboxError } from '../../src/index.js'
import { dcb, serve } from './run.js'

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const INIT = JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })

/** How many entries the request log keeps after three Inits. */
async function keptOfThree(url: string): Promise<number> {
  for (let i = 0; i < 3; i++) await (await fetch(`${url}/subscriptions/init`, { method: 'POST', headers: H, body: INIT })).arrayBuffer()
  const r = (await (await fetch(`${url}/_sandbox/requests?limit=100`)).json()) as { requests: unknown[] }
  return r.requests.length
}

describe('dcb serve', () => {
  it.each([['--request-log-size'], ['--journal-size']])('%s 2 keeps the latest two requests', async (flag) => {
    const s = await serve(['--in-memory', flag, '2'])
    try {
      expect(await keptOfThree(s.url)).toBe(2)
    } finally {
      await s.stop()
    }
  })

  it('refuses the old name given beside the new one with a different value, naming both', async () => {
    const r = await dcb(['serve', '--port', '0', '--in-memory', '--request-log-size', '2', '--journal-size', '3'])
    expect(r).toMatchObject({ code: 2, stdout: '' })
    expect(r.stderr).toBe('dcb: --journal-size is the old name of --request-log-size: give one of them (2 and 3 were given)\n')
  })

  it('says the old names in --help, beside the new ones', async () => {
    const r = await dcb(['serve', '--help'])
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('how many requests the request log keeps (default: 1000; old name: --journal-size)')
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('(default: 32; old name: --journal-mib)')
  })
})

describe('createSandbox', () => {
  it.each([[{ requestLogSize: 2 }], [{ journalSize: 2 }]])('%o keeps the latest two requests', async (opts) => {
    const sandbox = await createSandbox(opts)
    for (let i = 0; i < 3; i++) await sandbox.fetch('http://dcb.test/subscriptions/init', { method: 'POST', headers: H, body: INIT })
    expect((await sandbox.requests()).requests).toHaveLength(2)
  })

  it('refuses the old name given beside the new one with a different value, naming both', async () => {
    await expect(createSandbox({ requestLogSize: 2, journalSize: 3 })).rejects.toThrow(
      new SandboxError('BAD_REQUEST', 'journalSize is the old name of requestLogSize: give one of them (2 and 3 were given)'),
    )
  })
})
