import { describe, expect, it } from 'vitest'
import { BillingError } from '../src/billing.js'
import { useSandbox } from './sandbox.js'

const suite = useSandbox(import.meta.filename)
const { billing } = suite

describe('subscribing', () => {
  it('subscribes with the OTP the handset received', async () => {
    const started = await billing.start('60123456011', 'STREAMPLUS', 'my')
    if (started.flow !== 'otp') throw new Error(`expected the OTP flow, got ${started.flow}`)
    const { otp } = await suite.sandbox.otp('60123456011')
    const id = await billing.confirm(started.requestId, otp)
    expect(await billing.access(id)).toEqual({ active: true, until: new Date('2026-02-28T00:00:00Z') })
  })

  it('reports a failed first charge (magic ending 201: INSUFFICIENT_FUNDS)', async () => {
    const started = await billing.start('60123456201', 'STREAMPLUS', 'my')
    if (started.flow !== 'otp') throw new Error('expected the OTP flow')
    const { otp } = await suite.sandbox.otp('60123456201')
    await expect(billing.confirm(started.requestId, otp)).rejects.toEqual(new BillingError('INSUFFICIENT_FUNDS', 200))
  })
})
