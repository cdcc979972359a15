/**
 * dcb logs shows each entry's client address and, for a Status call, the subscription state it
 * answered, still one line per entry; dcb world shows each service's return_url. Through the binary
 * against a real server (a proxy trusted on loopback, so a forwarded address is the client's).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir, useSandbox, writeJson } from '../helpers.js'
import { dcb } from './run.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())
// QUICKTEST without a return_url, GAMECLUB with the merchant's own: the world shows both as they are.
const fixtures = writeJson(tmp.dir, 'returns.json', {
  services: [
    { code: 'QUICKTEST', return_url: null },
    { code: 'GAMECLUB', return_url: 'https://shop.example/back?from=dcb' },
  ],
})
const c = useSandbox({ trustProxy: 'loopback', fixtures: [fixtures] })
const run = (args: string[]) => dcb(args, { env: { DCB_BASE_URL: c.url, DCB_SESSION: undefined } })

describe('dcb logs', () => {
  it('shows on one line per entry its client address, the state a Status answered', async () => {
    const id = await c.subscribe('60123456001')
    await c.api('/subscriptions/status', { subscription_id: id })
    await c.control(`/subscriptions/${id}/cancel`, {})
    await c.api('/subscriptions/status', { subscription_id: id })
    // Through the trusted proxy: the address it names is the client's (and not in demo's allowlist).
    await c.api('/subscriptions/status', { subscription_id: id }, { headers: { 'x-forwarded-for': '203.0.113.7' } })
    const r = await run(['logs'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    // One line per entry; a failure's reason goes under it (why:), as before.
    const all = r.stdout.trim().split('\n')
    const lines = all.filter((l) => !l.startsWith('    why: '))
    expect(lines.every((l) => /^\d{4}-\d\d-\d\dT/.test(l))).toBe(true)
    expect(lines).toHaveLength(6)
    expect(all.at(-1)).toBe('    why: source IP 203.0.113.7 is not in the allowlist of merchant demo')
    expect(lines[0]).toMatch(/ POST \/subscriptions\/init 200 SUCCESS demo 60123456001 from 127\.0\.0\.1 [\d.]+ ms$/)
    expect(lines[2]).toMatch(/ POST \/subscriptions\/status 200 SUCCESS ACTIVE demo 60123456001 from 127\.0\.0\.1 [\d.]+ ms$/)
    expect(lines[3]).toMatch(/ POST \/_sandbox\/subscriptions\/\S+\/cancel 200 SUCCESS 60123456001 from 127\.0\.0\.1 /)
    expect(lines[4]).toMatch(/ POST \/subscriptions\/status 200 SUCCESS CANCELED demo 60123456001 from 127\.0\.0\.1 /)
    expect(lines[5]).toMatch(/ POST \/subscriptions\/status 403 UNAUTHORIZED demo from 203\.0\.113\.7 [\d.]+ ms$/)
    // A Status that failed answered no state; nor does any other call.
    expect(lines.filter((l) => / (ACTIVE|CANCELED|EXPIRED) /.test(l))).toHaveLength(2)
    // What the line shows is the request log's own (GET /_sandbox/requests).
    const kept = (await c.control('/requests?limit=10')).body.requests
    expect(kept.map((e: { ip: string }) => e.ip)).toEqual(['203.0.113.7', '127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1'])
  })

  it('an expired subscription reads EXPIRED', async () => {
    const id = await c.subscribe('60123456301')
    await c.control('/clock/advance', { by: 'P1M' })
    await c.api('/subscriptions/status', { subscription_id: id })
    const r = await run(['logs', '--limit', '1'])
    expect(r.stdout).toMatch(/^\S+ POST \/subscriptions\/status 200 SUCCESS EXPIRED demo 60123456301 from 127\.0\.0\.1 [\d.]+ ms\n$/)
  })
})

describe('dcb world', () => {
  it("shows each service's return_url, and says when one has none", async () => {
    const r = await run(['world'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    const service = (code: string) => r.stdout.split('\n').find((l) => l.startsWith(`  ${code} of `))
    expect(service('STREAMPLUS')).toMatch(/; return_url \/_sandbox\/return {2}\(/)
    expect(service('GAMECLUB')).toMatch(/; return_url https:\/\/shop\.example\/back\?from=dcb {2}\(.*returns\.json\)$/)
    expect(service('QUICKTEST')).toMatch(/; no return_url {2}\(/)
    const world = (await c.control('/world')).body
    expect(world.services.find((s: { code: string }) => s.code === 'NEWSDAILY').return_url).toBe('/_sandbox/return')
    expect(service('NEWSDAILY')).toContain('; return_url /_sandbox/return')
  })
})
