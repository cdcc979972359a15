/** A subscription's timeline over loopback: `GET /_sandbox/subscriptions/ID` carries it, oldest first, and /openapi.json says so. */
import { describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'

const c = useSandbox()

const T = (s: string) => `${s}.000000`
const short = (e: any) =>
  e.type === 'state'
    ? ['state', e.at, e.from, e.to, e.cause, ...(e.superseded_by ? [e.superseded_by] : [])]
    : e.type === 'charge'
      ? ['charge', e.at, e.kind, e.outcome]
      : e.type === 'message'
        ? ['message', e.at, e.kind]
        : ['request', e.at, e.method, e.path]

describe('GET /_sandbox/subscriptions/ID: timeline', () => {
  it('the MO scenario: MO, a failed renewal, MO again (superseding it), its retry dropped; every request, charge, state and message in order', async () => {
    await c.control('/reset', { clock: '2026-01-28T09:00:00', frozen: true })
    const mo = (text: string) => c.control('/mo', { msisdn: '60133456302', short_code: '32123', text })
    const first = (await mo('STREAM')).body.subscription_id as string
    await c.control('/clock/advance', { by: 'P1M' })
    const again = (await mo('STREAM')).body.subscription_id as string
    expect(again).not.toBe(first)
    await c.control('/clock/advance', { by: 'P1D' })
    const status = await c.api('/subscriptions/status', { subscription_id: first })
    expect(status.body.payload.status).toBe('EXPIRED')
    const active = await c.control('/subscriptions?msisdn=60133456302&status=ACTIVE')
    expect(active.body.subscriptions.map((s: any) => s.subscription_id)).toEqual([again])

    const old = await c.control(`/subscriptions/${first}`)
    expect(old.status).toBe(200)
    // The existing fields are kept.
    expect(old.body).toMatchObject({ subscription_id: first, status: 'EXPIRED', next_retry_dt: null, cancelable: false, charge_count: 2 })
    expect(old.body.charges).toHaveLength(2)
    expect(old.body.timeline.map(short)).toEqual([
      ['request', T('2026-01-28T09:00:00'), 'POST', '/_sandbox/mo'],
      ['charge', T('2026-01-28T09:00:00'), 'first', 'SUCCESS'],
      ['state', T('2026-01-28T09:00:00'), null, 'ACTIVE', 'mo'],
      ['message', T('2026-01-28T09:00:00'), 'welcome'],
      ['charge', T('2026-02-28T09:00:00'), 'renewal', 'INSUFFICIENT_FUNDS'],
      ['state', T('2026-02-28T09:00:00'), 'ACTIVE', 'EXPIRED', 'renewal'],
      ['message', T('2026-02-28T09:00:00'), 'renewal_failed'],
      // The clock move that failed the renewal (a move's entry is at the time it ended).
      ['request', T('2026-02-28T09:00:00'), 'POST', '/_sandbox/clock/advance'],
      ['state', T('2026-02-28T09:00:00'), 'EXPIRED', 'EXPIRED', 'superseded', again],
      ['request', T('2026-03-01T09:00:00'), 'POST', '/subscriptions/status'],
    ])
    const charge = old.body.timeline.find((e: any) => e.type === 'charge' && e.kind === 'renewal')
    expect(charge).toMatchObject({ amount: '9.90', currency: 'MYR', reason: expect.stringContaining('renewal-302') })
    const request = old.body.timeline.find((e: any) => e.path === '/subscriptions/status')
    const log = await c.control(`/requests?subscription=${first}`)
    expect(log.body.requests.map((r: any) => r.id)).toContain(request.request_id)
    expect(request).toMatchObject({ method: 'POST', http_status: 200, reason: null })

    const now = await c.control(`/subscriptions/${again}`)
    expect(now.body.timeline.map(short)).toEqual([
      ['request', T('2026-02-28T09:00:00'), 'POST', '/_sandbox/mo'],
      ['charge', T('2026-02-28T09:00:00'), 'first', 'SUCCESS'],
      ['state', T('2026-02-28T09:00:00'), null, 'ACTIVE', 'mo'],
      ['message', T('2026-02-28T09:00:00'), 'welcome'],
    ])
  })

  it('a retry that succeeded reads EXPIRED -> ACTIVE; a control API cancel and a STOP are told apart', async () => {
    await c.control('/reset', { clock: '2026-01-28T09:00:00', frozen: true })
    const otp = await c.subscribe('60123456302')
    await c.control('/clock/advance', { by: 'P1M' })
    await c.control('/clock/advance', { by: 'P1D' })
    await c.control(`/subscriptions/${otp}/cancel`, {})
    const psms = (await c.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'STREAM' })).body.subscription_id
    await c.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'STOP' })
    const states = async (id: string) => (await c.control(`/subscriptions/${id}`)).body.timeline.filter((e: any) => e.type === 'state').map(short)
    expect(await states(otp)).toEqual([
      ['state', T('2026-01-28T09:00:00'), null, 'ACTIVE', 'verify'],
      ['state', T('2026-02-28T09:00:00'), 'ACTIVE', 'EXPIRED', 'renewal'],
      ['state', T('2026-03-01T09:00:00'), 'EXPIRED', 'ACTIVE', 'retry'],
      ['state', T('2026-03-01T09:00:00'), 'ACTIVE', 'CANCELED', 'cancel'],
    ])
    const verifyFirst = (await c.control(`/subscriptions/${otp}`)).body.timeline.filter((e: any) => e.type === 'request').map((e: any) => e.path)
    expect(verifyFirst.slice(0, 2)).toEqual(['/subscriptions/init', '/subscriptions/verify'])
    expect(verifyFirst).toContain(`/_sandbox/subscriptions/${otp}/cancel`)
    expect(await states(psms)).toEqual([
      ['state', T('2026-03-01T09:00:00'), null, 'ACTIVE', 'mo'],
      ['state', T('2026-03-01T09:00:00'), 'ACTIVE', 'CANCELED', 'stop'],
    ])
  })

  it('/openapi.json describes the timeline of the subscription answer', async () => {
    const doc = (await c.api('/openapi.json', undefined, { method: 'GET' })).body
    const text = JSON.stringify(doc)
    expect(text).toContain('"timeline"')
    expect(text).toContain('superseded_by')
  })
})
