/**
 * The support engineer's report, through the binary against a server: an MSISDN subscribed again by
 * MO in the EXPIRED window of its first subscription held two ACTIVE ones once the old retry
 * succeeded. Now the new one supersedes the old one's retries, and `dcb subscription` tells it.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { Result } from './run.js'
import { useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const run = (args: string[]) => dcb(args, { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined, NO_COLOR: '1' } })
const T = (s: string) => `${s}.000000`

describe('one ACTIVE subscription per MSISDN and service (through dcb)', () => {
  // dcb mo, clock advance P1M, dcb mo, clock advance P1D: run once, each test asserts on what it left.
  let first: string, again: string, list: Result, text: Result, shown: Result
  beforeAll(async () => {
    // A frozen clock, so that the times below are exact (dcb reset --clock leaves it running).
    await c.control('/reset', { clock: '2026-01-28T09:00:00', frozen: true })
    const mo = async () => {
      const r = await run(['mo', '60133456302', '32123', 'STREAM', '--json'])
      expect(r.code).toBe(0)
      return JSON.parse(r.stdout).subscription_id as string
    }
    first = await mo()
    expect((await run(['clock', 'advance', 'P1M'])).code).toBe(0)
    again = await mo()
    expect((await run(['clock', 'advance', 'P1D'])).code).toBe(0)
    list = await run(['subscriptions', '--msisdn', '60133456302', '--json'])
    text = await run(['subscriptions', '--msisdn', '60133456302'])
    shown = await run(['subscription', first])
  })

  it('leaves one ACTIVE subscription, the new one', async () => {
    const subs = JSON.parse(list.stdout).subscriptions as { subscription_id: string; status: string }[]
    expect(subs.filter((s) => s.status === 'ACTIVE').map((s) => s.subscription_id)).toEqual([again])
    expect(subs.find((s) => s.subscription_id === first)!.status).toBe('EXPIRED')
    expect(text.stdout.match(/ACTIVE/g)).toHaveLength(1)
  })

  it('the old one names, in its timeline, what superseded it', async () => {
    expect(shown.code).toBe(0)
    const timeline = shown.stdout.slice(shown.stdout.indexOf('\ntimeline '))
    const lines = timeline.split('\n').filter((l) => /^ {2}\d{4}-/.test(l))
    expect(lines.map((l) => l.trim().split(/\s+/).slice(0, 2).join(' '))).toEqual([
      `${T('2026-01-28T09:00:00')} request`,
      `${T('2026-01-28T09:00:00')} charge`,
      `${T('2026-01-28T09:00:00')} state`,
      `${T('2026-01-28T09:00:00')} message`,
      `${T('2026-02-28T09:00:00')} charge`,
      `${T('2026-02-28T09:00:00')} state`,
      `${T('2026-02-28T09:00:00')} message`,
      `${T('2026-02-28T09:00:00')} request`,
      `${T('2026-02-28T09:00:00')} state`,
    ])
    expect(lines[1]).toMatch(/charge +first +SUCCESS +9\.90 MYR/)
    expect(lines[2]).toMatch(/state +new -> ACTIVE \(mo\)/)
    expect(lines[3]).toMatch(/message +welcome +Welcome to Stream Plus/)
    expect(lines[5]).toMatch(/state +ACTIVE -> EXPIRED \(renewal\)/)
    expect(lines[8]).toBe(`  ${T('2026-02-28T09:00:00')} state    EXPIRED -> EXPIRED (superseded by ${again})`)
    expect(timeline).toMatch(/INSUFFICIENT_FUNDS.*\n {4}why: rule renewal-302/)
    // The old lists are gone: one list, oldest first.
    expect(shown.stdout).not.toMatch(/^(charges|events) /m)
    expect(shown.stdout).toMatch(/^ {2}next_retry_dt +null$/m)
  })
})
