/**
 * dcb mo: an MO that did nothing (a keyword no service has on that short code, a short code the
 * handset's carrier does not have) says why on stderr and exits 1, so a script does not go on as if
 * it had subscribed; one that did something exits 0. Through the binary against a real server.
 */
import { describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const run = (args: string[]) => dcb(['mo', ...args], { env: { DCB_BASE_URL: c.url, DCB_SESSION: undefined } })

describe('dcb mo', () => {
  it('a keyword no service has there: the reason on stderr, exit 1 (with --json too)', async () => {
    const r = await run(['60133456001', '32123', 'STREMA'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^• unknown_keyword\n/)
    expect(r.stderr).toMatch(/^dcb: the MO did nothing \(unknown_keyword\): "STREMA" is not a keyword on 32123 \(keywords there: [A-Z, ]*STREAM[A-Z, ]*\)\n$/)
    const json = await run(['60133456001', '32123', 'STREMA', '--json'])
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout).action).toBe('unknown_keyword')
    expect(json.stderr).toMatch(/^dcb: the MO did nothing \(unknown_keyword\): /)
  })

  it("a short code the handset's carrier does not have: the reason on stderr, exit 1", async () => {
    const r = await run(['60133456001', '80880', 'STREAM'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('dcb: the MO did nothing (ignored): sbx-my-psms has no short code 80880 (its short code is 32123)\n')
    expect((await c.control('/subscriptions?msisdn=60133456001')).body.subscriptions).toEqual([])
  })

  it('an MO that subscribes, or a STOP that ends the subscription, exits 0 with nothing on stderr', async () => {
    const sub = await run(['60133456002', '32123', 'STREAM'])
    expect([sub.code, sub.stderr]).toEqual([0, ''])
    expect(sub.stdout).toMatch(/^✔ subscribed\n/)
    const stop = await run(['60133456002', '32123', 'STOP'])
    expect([stop.code, stop.stderr]).toEqual([0, ''])
    expect(stop.stdout).toMatch(/^✔ stop\n/)
  })
})
