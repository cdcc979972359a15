/**
 * Over HTTP: while a long clock move runs, merchant calls that change state wait for it (and run
 * at the moved time), reads answer at once (at a batch boundary).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { startClient, type Client } from '../helpers.js'

let c: Client | undefined
afterEach(() => c?.close())

/** A promise and the order it settled in, among others of the same `order` list. */
function settleOrder<T>(p: Promise<T>, name: string, order: string[]): Promise<T> {
  return p.finally(() => order.push(name))
}

describe('a long clock move over HTTP', () => {
  it('keeps a merchant Init waiting until it ends (the Init runs at the moved time), while a read answers during it', async () => {
    c = await startClient({ clock: '2026-01-01T00:00:00' })
    const id = await c.subscribe('60123456001', 'QUICKTEST')
    const order: string[] = []
    // Some 2.4 million hourly renewals: over a hundred batches (the answer lists the first 64 MiB of events).
    const move = settleOrder(c.control('/clock/set', { to: '2300-01-01T00:00:00' }), 'move', order)
    // Once the move is under way (the clock has left its start)...
    for (;;) {
      const now = (await c.control('/clock')).body.now as string
      if (now !== '2026-01-01T00:00:00.000000') break
    }
    const init = settleOrder(c.api('/subscriptions/init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' }), 'init', order)
    const read = settleOrder(c.control(`/subscriptions?msisdn=60123456001`), 'read', order)
    const [m, i, r] = await Promise.all([move, init, read])
    // The read answered during the move (before its answer); the Init waited (below).
    expect(order[0]).toBe('read')
    expect(m.status).toBe(200)
    expect(m.body.clock.now).toBe('2300-01-01T00:00:00.000000')
    // The answer as for any long move: the first 64 MiB of events listed, the rest counted.
    const hours = (Date.UTC(2300, 0, 1) - Date.UTC(2026, 0, 1)) / 3_600_000
    expect(m.body.events_omitted).toBeGreaterThan(0)
    expect(m.body.events.length + m.body.events_omitted).toBe(hours)
    expect(m.body.events[0]).toMatchObject({ at: '2026-01-01T01:00:00.000000', type: 'renewed', subscription_id: id })
    const journal = (await c.control('/requests?limit=5')).body
    // The request log keeps the count, as for any move of more than 100 events.
    const entry = journal.requests.find((x: { path: string }) => x.path === '/_sandbox/clock/set')
    expect(entry.response).toEqual({ clock: m.body.clock, event_count: hours, events_kept: false })
    expect(r.status).toBe(200)
    expect(r.body.subscriptions[0].subscription_id).toBe(id)
    expect(i.body.status).toBe('SUCCESS')
    // The Init ran after the move: its OTP was sent at the moved time.
    const sms = (await c.control('/sms?msisdn=60123456002')).body
    expect(JSON.stringify(sms)).toContain('2300-01-01T00:00:00.000000')
  }, 120_000)
})
