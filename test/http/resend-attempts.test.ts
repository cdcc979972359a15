/**
 * Where the spec is silent, what the sandbox does: a resend (a second Init for the same number and
 * service) makes a second verification, and both stay valid, each with its own code; wrong OTPs
 * count per verification, and a Verify whose client went away during a held-back answer counts as
 * one that waited. Through `dcb serve` over loopback.
 */
import { describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'
import { closed, nextRequest, withFakeTimers } from '../wait.js'

const c = useSandbox({ clock: '2026-01-31T09:00:00' })
const MSISDN = '60123456011'
const INIT = { msisdn: MSISDN, service_code: 'STREAMPLUS', country_code: 'my' }

/** Two Inits for the same number and service, their OTPs fixed by rules (1111, then 2222): the two verification ids. */
async function twoInits(): Promise<[string, string]> {
  await c.control('/rules', { id: 'otp-1', step: 'otp', match: { msisdn: MSISDN }, nth: 1, effect: { otp: '1111' } })
  await c.control('/rules', { id: 'otp-2', step: 'otp', match: { msisdn: MSISDN }, nth: 2, effect: { otp: '2222' } })
  const first = await c.api('/subscriptions/init', INIT)
  const second = await c.api('/subscriptions/init', INIT)
  return [first.body.payload.verif_request_id, second.body.payload.verif_request_id]
}
const verify = async (verif_request_id: string, otp: string) => {
  const r = await c.api('/subscriptions/verify', { verif_request_id, otp })
  return `${r.status} ${r.body.message || r.body.status}`
}

describe('a resend: a second Init makes a second verification', () => {
  it('sends a second OTP with its own id', async () => {
    const [a, b] = await twoInits()
    expect(a).not.toBe(b)
    const sms = (await c.control(`/sms?msisdn=${MSISDN}`)).body.messages.filter((m: { kind: string }) => m.kind === 'otp')
    expect(sms.map((m: { verif_request_id: string; otp: string }) => [m.verif_request_id, m.otp])).toEqual([
      [b, '2222'],
      [a, '1111'],
    ])
    // The newest OTP is the one GET /_sandbox/otp shows.
    expect((await c.control(`/otp?msisdn=${MSISDN}`)).body).toMatchObject({ verif_request_id: b, otp: '2222' })
  })

  it('each code works on its own verification only', async () => {
    const [a, b] = await twoInits()
    expect(await verify(a, '2222')).toBe('200 INVALID_PIN')
    expect(await verify(b, '1111')).toBe('200 INVALID_PIN')
  })

  it('the first code still activates after the resend', async () => {
    const [a] = await twoInits()
    expect(await verify(a, '1111')).toBe('200 SUCCESS')
  })

  it('the second verification answers ALREADY_SUBSCRIBED once the first code activated', async () => {
    const [a, b] = await twoInits()
    await verify(a, '1111')
    expect(await verify(b, '2222')).toBe('200 ALREADY_SUBSCRIBED')
    expect((await c.control(`/subscriptions?msisdn=${MSISDN}`)).body.subscriptions).toHaveLength(1)
  })

  it('the second code activates too, the first one then answering ALREADY_SUBSCRIBED', async () => {
    const [a, b] = await twoInits()
    expect(await verify(b, '2222')).toBe('200 SUCCESS')
    expect(await verify(a, '1111')).toBe('200 ALREADY_SUBSCRIBED')
    expect((await c.control(`/subscriptions?msisdn=${MSISDN}`)).body.subscriptions).toHaveLength(1)
  })
})

describe('OTP attempts count per verification', () => {
  it('three wrong OTPs lock one verification (MAX_PIN_RETRIES, its right code too)', async () => {
    const [a] = await twoInits()
    expect([await verify(a, '0000'), await verify(a, '0000'), await verify(a, '0000')]).toEqual(['200 INVALID_PIN', '200 INVALID_PIN', '200 INVALID_PIN'])
    expect(await verify(a, '1111')).toBe('200 MAX_PIN_RETRIES')
  })

  it('a verification locked by three wrong OTPs leaves the other its own count', async () => {
    const [a, b] = await twoInits()
    for (let i = 0; i < 3; i++) await verify(a, '0000')
    expect(await verify(b, '0000')).toBe('200 INVALID_PIN')
    expect(await verify(b, '2222')).toBe('200 SUCCESS')
  })

  it('a Verify whose client went away while its answer was held back counts as an attempt', async () => {
    const [a] = await twoInits()
    await c.control('/rules', { id: 'slow-verify', step: 'verify', match: { msisdn: MSISDN }, effect: { delay_ms: 1000 } })
    for (let i = 0; i < 3; i++) {
      const abort = new AbortController()
      const onServer = nextRequest(c.sandbox.server, '/subscriptions/verify')
      await withFakeTimers(async (t) => {
        const gone = fetch(`${c.url}/subscriptions/verify`, {
          method: 'POST',
          headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
          body: JSON.stringify({ verif_request_id: a, otp: '0000' }),
          signal: abort.signal,
        }).catch((e: Error) => e.name)
        // The engine decided (the wrong OTP counted) and holds the answer back; the client gives up.
        expect(await Promise.race([t.next(), gone])).toBe(1000)
        const { res } = await onServer
        abort.abort()
        expect(await gone).toBe('AbortError')
        await closed(res)
      })
    }
    const gave = (await c.control(`/requests?msisdn=${MSISDN}&limit=10`)).body.requests.filter((e: { client_closed: boolean }) => e.client_closed)
    expect(gave.map((e: { message: string }) => e.message)).toEqual(['INVALID_PIN', 'INVALID_PIN', 'INVALID_PIN'])
    await c.control('/rules/slow-verify', undefined, { method: 'DELETE' })
    expect(await verify(a, '1111')).toBe('200 MAX_PIN_RETRIES')
  })
})
