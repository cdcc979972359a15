/**
 * A carrier cancel (the control API's cancel, an MO STOP) of a subscription that has ended. An EXPIRED
 * subscription with no carrier retry left was made CANCELED, with a cancellation SMS to the handset
 * and `canceled_dt` on its Status, as if it had been running. Now it is refused as a second cancel
 * is (409), and STOP passes it by. One the carrier still retries can be canceled: the retry would
 * charge it again.
 */
import { describe, expect, it } from 'vitest'
import { engineAt } from './harness.js'

const T = (s: string) => `${s}.000000`

describe('a carrier cancel of an EXPIRED subscription', () => {
  /** Two subscriptions whose first renewal failed, each with its one retry pending. */
  const failedOnce = async () => {
    const { engine, subscribe } = engineAt('2026-01-31T09:00:00')
    // Ending 303: every renewal and retry fails (INSUFFICIENT_FUNDS); the default carrier retries once, a day later.
    const ended = await subscribe('60123457303')
    const retrying = await subscribe('60123458303')
    await engine.advance('P1M')
    return { engine, ended, retrying }
  }

  it('with a retry pending it cancels, the retry never coming', async () => {
    const { engine, ended, retrying } = await failedOnce()
    // The view says which a cancel is taken for (`cancelable`, what the console's Cancel button follows).
    expect(engine.subscription(retrying)).toMatchObject({ status: 'EXPIRED', next_retry_dt: T('2026-03-01T09:00:00'), cancelable: true })
    const canceled = await engine.cancel(retrying)
    expect(canceled).toMatchObject({
      status: 'CANCELED',
      cancel_reason: 'carrier',
      canceled_dt: T('2026-02-28T09:00:00'),
      next_retry_dt: null,
      cancelable: false,
    })
    expect(engine.smsFor('60123458303')[0]).toMatchObject({ kind: 'canceled' })

    const moved = await engine.advance('P1D')
    // The retry of the one canceled never ran; the other's did, and failed: no retry left.
    expect(moved.events.map((e) => [e.type, e.subscription_id])).toEqual([['retry_failed', ended]])
  })

  it('with no retry left is refused ALREADY_EXPIRED (409), changing nothing', async () => {
    const { engine, ended, retrying } = await failedOnce()
    await engine.cancel(retrying)
    await engine.advance('P1D')
    const before = engine.subscription(ended)
    expect(before).toMatchObject({ status: 'EXPIRED', next_retry_dt: null, canceled_dt: null, cancelable: false })
    const sms = engine.smsFor('60123457303').length
    await expect(engine.cancel(ended)).rejects.toMatchObject({
      status: 409,
      code: 'ALREADY_EXPIRED',
      message: `subscription ${ended} expired at ${T('2026-02-28T09:00:00')} and the carrier has no retry left: there is nothing to cancel`,
    })
    expect(engine.subscription(ended)).toEqual(before)
    expect(engine.smsFor('60123457303')).toHaveLength(sms)
  })

  /** Two PSMS subscriptions a month apart whose renewals fail: one with no retry left, one the carrier still retries. */
  const psmsEnded = async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    const subscribed = async (msisdn: string) => {
      const r = await engine.mo({ msisdn, short_code: '32123', text: 'STREAM' })
      expect(r).toMatchObject({ action: 'subscribed' })
      return (r as { subscription_id: string }).subscription_id
    }
    const ended = await subscribed('60131237303')
    await engine.advance('P1M')
    const retrying = await subscribed('60131238303')
    await engine.advance('P1M')
    const retryingView = engine.subscription(retrying)
    await engine.advance('PT1H')
    return { engine, ended, retrying, retryingView }
  }

  it('MO STOP passes by a PSMS subscription that expired with no retry left', async () => {
    const { engine, ended } = await psmsEnded()
    expect(engine.subscription(ended)).toMatchObject({ status: 'EXPIRED', next_retry_dt: null })
    expect(await engine.mo({ msisdn: '60131237303', short_code: '32123', text: 'STOP' })).toEqual({
      action: 'stop',
      canceled: [],
      message: 'no PSMS subscription of 60131237303 on 32123 to cancel',
    })
    expect(engine.subscription(ended)).toMatchObject({ status: 'EXPIRED', canceled_dt: null })
  })

  it('MO STOP cancels a PSMS subscription the carrier still retries', async () => {
    const { engine, retrying, retryingView } = await psmsEnded()
    expect(retryingView).toMatchObject({ status: 'EXPIRED', next_retry_dt: T('2026-03-29T09:00:00') })
    await engine.mo({ msisdn: '60131237303', short_code: '32123', text: 'STOP' })
    expect(await engine.mo({ msisdn: '60131238303', short_code: '32123', text: 'STOP' })).toEqual({
      action: 'stop',
      canceled: [retrying],
      subscription_id: retrying,
    })
    expect(engine.subscription(retrying)).toMatchObject({ status: 'CANCELED', cancel_reason: 'mo_stop', next_retry_dt: null })
  })
})
