/** One ACTIVE subscription per MSISDN and service: a new one drops the carrier retries of an EXPIRED one (engine level). */
import { describe, expect, it } from 'vitest'
import { SandboxError } from '../../src/core/engine.js'
import { engineAt } from './harness.js'

describe('a new subscription supersedes an EXPIRED one the carrier still retries', () => {
  it('MO, the renewal fails, MO again, the old retry would succeed: it is dropped, one ACTIVE, one charge per time', async () => {
    const { engine } = engineAt('2026-01-28T09:00:00')
    const first = await engine.mo({ msisdn: '60133456302', short_code: '32123', text: 'STREAM' })
    if (first.action !== 'subscribed') throw new Error(JSON.stringify(first))
    await engine.advance('P1M')
    expect(engine.subscription(first.subscription_id)).toMatchObject({ status: 'EXPIRED', next_retry_dt: '2026-03-01T09:00:00.000000', cancelable: true })
    const again = await engine.mo({ msisdn: '60133456302', short_code: '32123', text: 'STREAM' })
    if (again.action !== 'subscribed') throw new Error(JSON.stringify(again))
    const old = engine.subscription(first.subscription_id)
    expect(old).toMatchObject({ status: 'EXPIRED', next_retry_dt: null, cancelable: false })
    const move = await engine.advance('P1D')
    expect(move.events.filter((e) => e.subscription_id === first.subscription_id)).toEqual([])
    const subs = engine.listSubscriptions({ msisdn: '60133456302' })
    expect(subs.filter((s) => s.status === 'ACTIVE').map((s) => s.subscription_id)).toEqual([again.subscription_id])
    expect(engine.subscription(first.subscription_id).charges.map((c) => [c.kind, c.outcome])).toEqual([
      ['first', 'SUCCESS'],
      ['renewal', 'INSUFFICIENT_FUNDS'],
    ])
    const err = await engine.cancel(first.subscription_id).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SandboxError)
    expect((err as SandboxError).message).toContain(`superseded it`)
    expect((err as SandboxError).message).toContain(again.subscription_id)
  })

  const inExpiredWindow = async () => {
    const h = engineAt('2026-01-28T09:00:00')
    const oldId = await h.subscribe('60123456302')
    await h.engine.advance('P1M')
    return { ...h, oldId, newId: await h.subscribe('60123456302') }
  }

  it('an OTP flow in the EXPIRED window supersedes too', async () => {
    const { engine, newId } = await inExpiredWindow()
    await engine.advance('P1D')
    expect(engine.listSubscriptions({ msisdn: '60123456302', status: 'active' }).map((s) => s.subscription_id)).toEqual([newId])
  })

  it('the history of a subscription superseded in the EXPIRED window names the new one', async () => {
    const { state, oldId, newId } = await inExpiredWindow()
    expect(state.subs.get(oldId)!.history).toEqual([
      { at: state.subs.get(oldId)!.charges[1]!.at, from: 'ACTIVE', to: 'EXPIRED', cause: 'renewal' },
      { at: state.subs.get(newId)!.subscribed_at, from: 'EXPIRED', to: 'EXPIRED', cause: 'superseded', superseded_by: newId },
    ])
  })

  it('another service of the same MSISDN keeps its retries', async () => {
    const { engine, subscribe } = engineAt('2026-01-28T09:00:00')
    const stream = await subscribe('60123456302')
    await engine.advance('P1M')
    await subscribe('60123456302', 'GAMECLUB')
    expect(engine.subscription(stream).next_retry_dt).not.toBeNull()
    await engine.advance('P1D')
    expect(engine.subscription(stream).status).toBe('ACTIVE')
  })

  it('a seeded subscription supersedes too (a runtime rule failed the renewal of a seeded number)', async () => {
    const { engine } = engineAt('2026-01-28T09:00:00')
    const [old] = await engine.seed(1, { firstMsisdn: '60123456001' })
    await engine.addRule({ match: { msisdn: '60123456001' }, step: 'renewal', effect: { error: 'INSUFFICIENT_FUNDS' } })
    await engine.advance('P1M')
    expect(engine.subscription(old!).next_retry_dt).not.toBeNull()
    const [seeded] = await engine.seed(1, { firstMsisdn: '60123456001' })
    await engine.advance('P1D')
    expect(engine.listSubscriptions({ msisdn: '60123456001', status: 'active' }).map((s) => s.subscription_id)).toEqual([seeded])
    expect(engine.subscription(old!).timeline.at(-1)).toMatchObject({ type: 'state', cause: 'superseded', superseded_by: seeded })
  })
})
