/** A subscription's timeline over loopback: `GET /_sandbox/subscriptions/ID` carries it, oldest first, and /openapi.json says so. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, useSandbox, type Client } from '../helpers.js'

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

describe('GET /_sandbox/subscriptions/ID: timeline of the MO scenario (MO, a failed renewal, MO again superseding it, its retry dropped)', () => {
  // One scenario played once on a server of its own (useSandbox resets before each test); each test reads one part of it.
  let s: Client
  let first: string
  let again: string
  let status: Awaited<ReturnType<Client['api']>>
  beforeAll(async () => {
    s = await startClient()
    await s.control('/reset', { clock: '2026-01-28T09:00:00', frozen: true })
    const mo = (text: string) => s.control('/mo', { msisdn: '60133456302', short_code: '32123', text })
    first = (await mo('STREAM')).body.subscription_id as string
    await s.control('/clock/advance', { by: 'P1M' })
    again = (await mo('STREAM')).body.subscription_id as string
    await s.control('/clock/advance', { by: 'P1D' })
    status = await s.api('/subscriptions/status', { subscription_id: first })
  })
  afterAll(() => s.close())

  it('the second MO makes a new subscription', () => {
    expect(again).not.toBe(first)
  })

  it('the superseded subscription is EXPIRED, the new one the only ACTIVE', async () => {
    expect(status.body.payload.status).toBe('EXPIRED')
    const active = await s.control('/subscriptions?msisdn=60133456302&status=ACTIVE')
    expect(active.body.subscriptions.map((x: any) => x.subscription_id)).toEqual([again])
  })

  it('the answer keeps its existing fields beside the timeline', async () => {
    const old = await s.control(`/subscriptions/${first}`)
    expect(old.status).toBe(200)
    expect(old.body).toMatchObject({ subscription_id: first, status: 'EXPIRED', next_retry_dt: null, cancelable: false, charge_count: 2 })
    expect(old.body.charges).toHaveLength(2)
  })

  it('lists every request, charge, state, message of the old subscription in order', async () => {
    const old = await s.control(`/subscriptions/${first}`)
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
  })

  it('a charge entry carries its amount, currency, reason', async () => {
    const old = await s.control(`/subscriptions/${first}`)
    const charge = old.body.timeline.find((e: any) => e.type === 'charge' && e.kind === 'renewal')
    expect(charge).toMatchObject({ amount: '9.90', currency: 'MYR', reason: expect.stringContaining('renewal-302') })
  })

  it('a request entry points at its request log entry, with its outcome', async () => {
    const old = await s.control(`/subscriptions/${first}`)
    const request = old.body.timeline.find((e: any) => e.path === '/subscriptions/status')
    const log = await s.control(`/requests?subscription=${first}`)
    expect(log.body.requests.map((r: any) => r.id)).toContain(request.request_id)
    expect(request).toMatchObject({ method: 'POST', http_status: 200, reason: null })
  })

  it("the new subscription's timeline starts at the second MO", async () => {
    const now = await s.control(`/subscriptions/${again}`)
    expect(now.body.timeline.map(short)).toEqual([
      ['request', T('2026-02-28T09:00:00'), 'POST', '/_sandbox/mo'],
      ['charge', T('2026-02-28T09:00:00'), 'first', 'SUCCESS'],
      ['state', T('2026-02-28T09:00:00'), null, 'ACTIVE', 'mo'],
      ['message', T('2026-02-28T09:00:00'), 'welcome'],
    ])
  })
})

describe('GET /_sandbox/subscriptions/ID: timeline of a retried OTP subscription canceled, a PSMS one stopped', () => {
  // Played once on a server of its own; each test reads one part of it.
  let s: Client
  let otp: string
  let psms: string
  const states = async (id: string) => (await s.control(`/subscriptions/${id}`)).body.timeline.filter((e: any) => e.type === 'state').map(short)
  beforeAll(async () => {
    s = await startClient()
    await s.control('/reset', { clock: '2026-01-28T09:00:00', frozen: true })
    otp = await s.subscribe('60123456302')
    await s.control('/clock/advance', { by: 'P1M' })
    await s.control('/clock/advance', { by: 'P1D' })
    await s.control(`/subscriptions/${otp}/cancel`, {})
    psms = (await s.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'STREAM' })).body.subscription_id
    await s.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'STOP' })
  })
  afterAll(() => s.close())

  it('a retried, then canceled, subscription reads each state change with its cause (retry EXPIRED -> ACTIVE, cancel)', async () => {
    expect(await states(otp)).toEqual([
      ['state', T('2026-01-28T09:00:00'), null, 'ACTIVE', 'verify'],
      ['state', T('2026-02-28T09:00:00'), 'ACTIVE', 'EXPIRED', 'renewal'],
      ['state', T('2026-03-01T09:00:00'), 'EXPIRED', 'ACTIVE', 'retry'],
      ['state', T('2026-03-01T09:00:00'), 'ACTIVE', 'CANCELED', 'cancel'],
    ])
  })

  it("an OTP subscription's requests start at Init, Verify, its control API cancel among them", async () => {
    const paths = (await s.control(`/subscriptions/${otp}`)).body.timeline.filter((e: any) => e.type === 'request').map((e: any) => e.path)
    expect(paths.slice(0, 2)).toEqual(['/subscriptions/init', '/subscriptions/verify'])
    expect(paths).toContain(`/_sandbox/subscriptions/${otp}/cancel`)
  })

  it('a STOP reads cause stop, told apart from a control API cancel', async () => {
    expect(await states(psms)).toEqual([
      ['state', T('2026-03-01T09:00:00'), null, 'ACTIVE', 'mo'],
      ['state', T('2026-03-01T09:00:00'), 'ACTIVE', 'CANCELED', 'stop'],
    ])
  })
})

describe('GET /_sandbox/subscriptions/ID: timeline', () => {
  it('/openapi.json describes the timeline of the subscription answer', async () => {
    const doc = (await c.api('/openapi.json', undefined, { method: 'GET' })).body
    const text = JSON.stringify(doc)
    expect(text).toContain('"timeline"')
    expect(text).toContain('superseded_by')
  })
})
