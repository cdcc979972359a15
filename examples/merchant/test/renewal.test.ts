import { describe, expect, it } from 'vitest'
import { useSandbox } from './sandbox.js'

const suite = useSandbox(import.meta.filename)
const { billing } = suite

describe('renewal', () => {
  it('keeps access after the monthly renewal', async () => {
    const started = await billing.start('60123456012', 'STREAMPLUS', 'my')
    if (started.flow !== 'otp') throw new Error('expected the OTP flow')
    const id = await billing.confirm(started.requestId, (await suite.sandbox.otp('60123456012')).otp)
    const moved = await suite.sandbox.advance('P1M')
    expect(moved.events.map((e) => e.type)).toContain('renewed')
    expect(await billing.access(id)).toEqual({ active: true, until: new Date('2026-03-31T00:00:00Z') })
  })

  it('loses access when the renewal fails (magic ending 301)', async () => {
    const started = await billing.start('60123456301', 'STREAMPLUS', 'my')
    if (started.flow !== 'otp') throw new Error('expected the OTP flow')
    const id = await billing.confirm(started.requestId, (await suite.sandbox.otp('60123456301')).otp)
    await suite.sandbox.advance('P1M')
    expect((await billing.access(id)).active).toBe(false)
  })
})
