import { SandboxError } from 'dcb-sandbox'
import { describe, expect, it } from 'vitest'
import { useSandbox } from './sandbox.js'

const suite = useSandbox(import.meta.filename, { workers: ['worker-2'] })

describe('sessions', () => {
  it('isolates parallel work in sessions', async () => {
    const worker = suite.worker('worker-2')
    const started = await worker.billing.start('60123456014', 'STREAMPLUS', 'my')
    expect(started.flow).toBe('otp')
    expect((await worker.sandbox.otp('60123456014')).otp).toMatch(/^\d{4}$/)
    // The file's own session never saw that SMS.
    const err = await suite.sandbox.otp('60123456014').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SandboxError)
    expect((err as SandboxError).code).toBe('NO_OTP')
  })
})
