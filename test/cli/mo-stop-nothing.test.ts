/**
 * dcb mo … STOP with no PSMS subscription to stop: exit 0 (the carrier answered it with a help SMS,
 * the request log records it as a STOP, and the handset ends as the STOP asked: with none there), but
 * shown as nothing done, with the reason, not as a success. Through the binary against a real server.
 */
import { describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const run = (args: string[]) => dcb(['mo', ...args], { env: { DCB_BASE_URL: c.url, DCB_SESSION: undefined } })

describe('dcb mo STOP with nothing to stop', () => {
  it('exits 0 with nothing on stderr, shown as nothing canceled (• stop) with the reason', async () => {
    const r = await run(['60133456011', '32123', 'STOP'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toMatch(/^• stop\n/)
    expect(r.stdout).toMatch(/message +no PSMS subscription of 60133456011 on 32123 to cancel\n/)
    const json = await run(['60133456011', '32123', 'STOP', '--json'])
    expect([json.code, json.stderr]).toEqual([0, ''])
    expect(JSON.parse(json.stdout)).toMatchObject({ action: 'stop', canceled: [] })
    // The request log records it as a STOP (message ""), as it does one that canceled.
    const { body } = await c.control('/requests?limit=1')
    expect(body.requests[0]).toMatchObject({ path: '/_sandbox/mo', message: '', response: { action: 'stop', canceled: [] } })
  })

  it('a STOP that cancels is a success (✔ stop)', async () => {
    expect((await run(['60133456012', '32123', 'STREAM'])).code).toBe(0)
    const r = await run(['60133456012', '32123', 'STOP'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toMatch(/^✔ stop\n/)
  })
})
