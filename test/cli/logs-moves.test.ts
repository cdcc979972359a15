import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, type Client } from '../helpers.js'
import { dcb } from './run.js'

// Following the request log of a renewal ticket: the clock move that renewed (or failed to renew) a
// subscription showed as "POST /_sandbox/clock/advance 200 SUCCESS" and nothing else, in
// `dcb logs` and under `--subscription`; what it ran was only in --json.
let c: Client
let failed: string
beforeAll(async () => {
  c = await startClient({ clock: '2026-01-31T09:00:00' })
  failed = await c.subscribe('60123456301')
  for (const n of ['001', '002', '003', '004', '005', '006']) await c.subscribe(`60123456${n}`)
  expect((await c.control('/clock/advance', { by: 'P1M' })).status).toBe(200)
})
afterAll(() => c.close())

describe('dcb logs: a clock move says what it ran', () => {
  it('under --subscription: the events of that subscription', async () => {
    const r = await dcb(['logs', '--subscription', failed, '--base-url', c.url])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(
      /POST \/_sandbox\/clock\/advance 200 SUCCESS .*\n {4}ran: 2026-02-28T09:00:00\.000000 renewal_failed 60123456301 INSUFFICIENT_FUNDS -> EXPIRED \(why: rule renewal-301 \(ending 301\): renewal INSUFFICIENT_FUNDS\)\n/,
    )
    expect(r.stdout.match(/ran:/g)).toHaveLength(1)
  })

  it('in the whole request log: many events counted by kind', async () => {
    const r = await dcb(['logs', '--limit', '1', '--base-url', c.url])
    expect(r.stdout).toMatch(/POST \/_sandbox\/clock\/advance 200 SUCCESS .*\n {4}ran: 7 events: 6 renewed, 1 renewal_failed INSUFFICIENT_FUNDS\n$/)
  })

  it('--msisdn with --subscription applies both filters, naming both in an empty answer', async () => {
    const r = await dcb(['logs', '--subscription', failed, '--msisdn', '60123456001', '--base-url', c.url])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`no request about subscription ${failed} and 60123456001 (both filters apply) in the request log\n`)
  })

  it('dcb subscription: a failed renewal charge says which rule failed it', async () => {
    const r = await dcb(['subscription', failed, '--base-url', c.url])
    expect(r.stdout).toMatch(/ renewal {2}INSUFFICIENT_FUNDS .*\n {4}why: rule renewal-301 \(ending 301\): renewal INSUFFICIENT_FUNDS\n/)
  })
})
