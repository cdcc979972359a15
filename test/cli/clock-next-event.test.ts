/**
 * `dcb clock` without a move prints the time and the next event due, as GET /_sandbox/clock has it:
 * "no event due" on an empty sandbox, a subscription's renewal at its expiry once there is one, the
 * renewal after it once the clock passes the first. Through the binary against a real server.
 */
import { describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const clock = () => dcb(['clock'], { env: { DCB_BASE_URL: c.url, DCB_SESSION: undefined, NO_COLOR: '1' } })

describe('dcb clock: the next event due', () => {
  it('says none is due, then shows the renewal the control API has next, in one line', async () => {
    await c.control('/reset', { clock: '2026-01-28T09:00:00', frozen: true })
    const empty = await clock()
    expect([empty.code, empty.stderr]).toEqual([0, ''])
    expect(empty.stdout).toBe('2026-01-28T09:00:00.000000 (frozen)  no event due\n')

    const id = await c.subscribe('60123456001')
    const sub = (await c.control(`/subscriptions/${id}`)).body
    const view = (await c.control('/clock')).body
    expect(view.next_event_dt).toBe(sub.expiry_dt)
    expect((await clock()).stdout).toBe(`2026-01-28T09:00:00.000000 (frozen)  next event ${sub.expiry_dt}\n`)

    // Past the first renewal, the next one is due: never a time before the clock.
    await c.control('/clock/advance', { by: 'P1M' })
    const renewed = (await c.control(`/subscriptions/${id}`)).body
    expect(renewed.charge_count).toBe(2)
    expect((await clock()).stdout).toBe(`2026-02-28T09:00:00.000000 (frozen)  next event ${renewed.expiry_dt}\n`)
    expect(renewed.expiry_dt > '2026-02-28T09:00:00.000000').toBe(true)
  })
})
