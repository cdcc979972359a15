/**
 * The SMS channel on purpose, through the control API over loopback: an OTP SMS never delivered
 * (`deliver: false`, ending 631), one delivered late (`deliver_after`, ending 632), a verification
 * request's own OTP (`?verif_request_id=`), coverage, and every refused value of the two effects.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startClient, type Client } from '../helpers.js'
import { nextRequest } from '../wait.js'

const CLOCK = '2026-01-31T00:00:00'
let c: Client
beforeAll(async () => {
  c = await startClient({ clock: CLOCK })
})
afterAll(() => c.close())
beforeEach(async () => {
  await c.control('/reset', {})
})

const init = (msisdn: string) => c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
const verify = (id: string, otp: string) => c.api('/subscriptions/verify', { verif_request_id: id, otp })

describe('deliver: false (ending 631: the first OTP)', () => {
  it('Init answers SUCCESS', async () => {
    const first = await init('60123456631')
    expect(first.body.status).toBe('SUCCESS')
  })

  it('no SMS reaches the inbox', async () => {
    await init('60123456631')
    expect((await c.control('/sms?msisdn=60123456631')).body.messages).toEqual([])
    expect((await c.control('/messages')).body.messages).toEqual([])
  })

  it('the OTP reads answer 404 NO_OTP naming the rule', async () => {
    const first = await init('60123456631')
    const id = first.body.payload.verif_request_id as string
    const byMsisdn = await c.control('/otp?msisdn=60123456631')
    expect(byMsisdn).toEqual({ status: 404, body: { error: 'NO_OTP', message: expect.stringContaining('was never delivered: rule otp-631 (ending 631)') } })
    expect(byMsisdn.body.message).toContain(id)
    // A wait cannot change it: answered at once.
    expect((await c.control('/otp?msisdn=60123456631&wait=30')).body.error).toBe('NO_OTP')
    const byId = await c.control(`/otp?verif_request_id=${id}`)
    expect(byId).toEqual({ status: 404, body: { error: 'NO_OTP', message: expect.stringContaining('rule otp-631') } })
  })

  it('the second Init of the number is delivered', async () => {
    await init('60123456631')
    const second = (await init('60123456631')).body.payload.verif_request_id as string
    const got = await c.control('/otp?msisdn=60123456631')
    expect(got.status).toBe(200)
    expect(got.body.verif_request_id).toBe(second)
    expect(got.body).not.toHaveProperty('delivered_dt')
    expect((await c.control(`/otp?verif_request_id=${second}`)).body.otp).toBe(got.body.otp)
    expect((await verify(second, got.body.otp)).body.status).toBe('SUCCESS')
  })

  it('the first verification request still has no OTP after a second Init', async () => {
    const first = (await init('60123456631')).body.payload.verif_request_id as string
    await init('60123456631')
    expect((await c.control(`/otp?verif_request_id=${first}`)).body.error).toBe('NO_OTP')
  })

  it('with otp in the same rule: a fixed code, never delivered, that verifies', async () => {
    const rule = { match: { msisdn: '60123456077' }, step: 'otp', effect: { otp: '4321', deliver: false } }
    expect((await c.control('/rules', rule)).status).toBe(200)
    const id = (await init('60123456077')).body.payload.verif_request_id as string
    expect((await c.control('/otp?msisdn=60123456077')).body.error).toBe('NO_OTP')
    expect((await verify(id, '4321')).body.status).toBe('SUCCESS')
  })
})

describe('deliver_after (ending 632: every OTP two minutes late)', () => {
  it('is not listed before the clock passes the send time plus the duration', async () => {
    const id = (await init('60123456632')).body.payload.verif_request_id as string
    const early = await c.control('/otp?msisdn=60123456632')
    expect(early).toEqual({
      status: 404,
      body: {
        error: 'NO_OTP',
        message: expect.stringContaining('has not reached the inbox yet: rule otp-632 (ending 632): OTP SMS delivered PT2M late, at 2026-01-31T00:02:00'),
      },
    })
    expect((await c.control(`/otp?verif_request_id=${id}`)).body.error).toBe('NO_OTP')
    expect((await c.control('/sms?msisdn=60123456632')).body.messages).toEqual([])
    await c.control('/clock/advance', { by: 'PT1M59S' })
    expect((await c.control('/otp?msisdn=60123456632')).status).toBe(404)
  })

  it('is delivered by the clock move that passes its time', async () => {
    const id = (await init('60123456632')).body.payload.verif_request_id as string
    await c.control('/clock/advance', { by: 'PT1M59S' })
    const move = await c.control('/clock/advance', { by: 'PT1S' })
    expect(move.body.events).toEqual([
      expect.objectContaining({ type: 'otp_delivered', verif_request_id: id, msisdn: '60123456632', at: '2026-01-31T00:02:00.000000' }),
    ])
  })

  it('once delivered, the OTP carries sent_dt, delivered_dt, as does its SMS', async () => {
    const id = (await init('60123456632')).body.payload.verif_request_id as string
    await c.control('/clock/advance', { by: 'PT2M' })
    const got = await c.control(`/otp?verif_request_id=${id}`)
    expect(got.body).toMatchObject({ verif_request_id: id, sent_dt: '2026-01-31T00:00:00.000000', delivered_dt: '2026-01-31T00:02:00.000000' })
    const [sms] = (await c.control('/sms?msisdn=60123456632')).body.messages
    expect(sms).toMatchObject({
      kind: 'otp',
      at: '2026-01-31T00:02:00.000000',
      sent_dt: '2026-01-31T00:00:00.000000',
      delivered_dt: '2026-01-31T00:02:00.000000',
    })
  })

  it('a late OTP verifies once delivered', async () => {
    const id = (await init('60123456632')).body.payload.verif_request_id as string
    await c.control('/clock/advance', { by: 'PT2M' })
    const got = await c.control(`/otp?verif_request_id=${id}`)
    expect((await verify(id, got.body.otp)).body.status).toBe('SUCCESS')
  })

  it('a long poll waits for it until a clock move passes its time', async () => {
    const id = (await init('60123456632')).body.payload.verif_request_id as string
    const arrived = nextRequest(c.sandbox.server, '/_sandbox/otp')
    const waiting = c.control('/otp?msisdn=60123456632&wait=60')
    await arrived
    await c.control('/clock/advance', { by: 'PT3M' })
    expect(await waiting).toMatchObject({ status: 200, body: { verif_request_id: id, delivered_dt: '2026-01-31T00:02:00.000000' } })
  })

  it('a wait that ends before it says so, naming the rule', async () => {
    await init('60123456632')
    const r = await c.control('/otp?msisdn=60123456632&wait=0.2')
    expect(r.body).toEqual({ error: 'NO_OTP', message: expect.stringMatching(/has not reached the inbox yet: rule otp-632 .* \(waited 0.2 s\)$/) })
  })
})

describe('GET /_sandbox/otp?verif_request_id=', () => {
  it("answers that verification request's OTP, whatever later Inits sent", async () => {
    const first = (await init('60123456071')).body.payload.verif_request_id as string
    const firstOtp = (await c.control('/otp?msisdn=60123456071')).body.otp as string
    await init('60123456071')
    const got = await c.control(`/otp?verif_request_id=${first}`)
    expect(got).toMatchObject({ status: 200, body: { verif_request_id: first, otp: firstOtp, msisdn: '60123456071' } })
    expect((await c.control('/otp?msisdn=60123456071')).body.verif_request_id).not.toBe(first)
  })

  it('an unknown id is a 404 naming it', async () => {
    expect(await c.control('/otp?verif_request_id=nope-42')).toEqual({
      status: 404,
      body: { error: 'VERIFICATION_NOT_FOUND', message: expect.stringContaining('no verification request "nope-42"') },
    })
  })

  it('a query giving msisdn as well as verif_request_id is a 400', async () => {
    expect(await c.control('/otp?msisdn=60123456071&verif_request_id=x')).toEqual({
      status: 400,
      body: { error: 'BAD_REQUEST', message: 'give msisdn or verif_request_id, not both' },
    })
  })

  it('neither msisdn nor verif_request_id (or an empty one) is a 400', async () => {
    expect((await c.control('/otp')).body).toEqual({
      error: 'BAD_REQUEST',
      message: expect.stringContaining('give msisdn (the latest OTP sent to it) or verif_request_id'),
    })
    expect((await c.control('/otp?verif_request_id=')).body).toEqual({ error: 'BAD_REQUEST', message: 'verif_request_id: expected a verif_request_id' })
  })

  it('a redirect consent request has no OTP', async () => {
    const r = await c.api('/subscriptions/init', { msisdn: '359881234071', service_code: 'STREAMPLUS', country_code: 'bg' })
    const id = String(r.body.payload.redirect_url).split('/').pop()!
    expect((await c.control(`/otp?verif_request_id=${id}`)).body).toEqual({ error: 'NO_OTP', message: expect.stringContaining('redirect consent request') })
  })

  it('/openapi.json shows the query', async () => {
    const doc = (await (await fetch(`${c.url}/openapi.json`)).json()) as any
    const names = doc.paths['/_sandbox/otp'].get.parameters.map((p: { name: string }) => p.name)
    expect(names).toEqual(expect.arrayContaining(['msisdn', 'verif_request_id', 'wait']))
  })
})

describe('coverage', () => {
  it('counts each undelivered or late OTP under its outcome (otp.undelivered, otp.late) as it happens', async () => {
    await init('60123456631')
    await init('60123456632')
    await init('60123456632')
    const { outcomes } = (await c.control('/coverage?merchant=demo')).body.coverage[0]
    const count = (id: string) => outcomes.find((o: { id: string }) => o.id === id).count
    expect([count('otp.undelivered'), count('otp.late'), count('init.otp')]).toEqual([1, 2, 3])
  })
})

describe('refused values, by name', () => {
  const refused: [string, unknown, string][] = [
    ['deliver true', { deliver: true }, 'effect.deliver: only false (the SMS is never delivered)'],
    ['deliver "false"', { deliver: 'false' }, 'effect.deliver: only false'],
    ['a negative duration', { deliver_after: '-PT2M' }, 'effect.deliver_after: not a duration'],
    ['a malformed duration', { deliver_after: 'soon' }, 'effect.deliver_after: not a duration'],
    ['an ambiguous duration', { deliver_after: '2M' }, 'effect.deliver_after: "2M" is ambiguous'],
    ['a zero duration', { deliver_after: 'PT0S' }, 'effect.deliver_after: "PT0S" is no delay'],
    ['months', { deliver_after: 'P1M' }, 'effect.deliver_after: "P1M" has months or years'],
    ['over the bound', { deliver_after: 'PT24H1S' }, 'effect.deliver_after: "PT24H1S" is longer than the longest an SMS is held back: at most P1D'],
    ['a number', { deliver_after: 120 }, 'effect.deliver_after:'],
    ['both', { deliver: false, deliver_after: 'PT2M' }, 'effect: give either deliver: false (never delivered) or deliver_after (delivered late), not both'],
  ]
  it.each(refused)('%s', async (_name, effect, message) => {
    const r = await c.control('/rules', { step: 'otp', effect })
    expect(r.status).toBe(400)
    expect(r.body).toEqual({ error: 'BAD_RULE', message: expect.stringContaining(message) })
  })

  it('on a step that does not take them', async () => {
    for (const effect of ['deliver', 'deliver_after'] as const) {
      const r = await c.control('/rules', { step: 'init', effect: { [effect]: effect === 'deliver' ? false : 'PT2M' } })
      expect(r.body).toEqual({ error: 'BAD_RULE', message: `effect.${effect}: step init does not take ${effect} (the steps that take it: otp)` })
    }
  })

  it('the bound itself loads', async () => {
    expect((await c.control('/rules', { step: 'otp', effect: { deliver_after: 'P1D' } })).status).toBe(200)
  })
})
