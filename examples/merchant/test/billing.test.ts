import { readFileSync, writeFileSync } from 'node:fs'
import { coverageJUnit, createSandbox, mergeCoverage, SandboxError, type CoverageAnswer, type CoveragePolicy, type Sandbox } from 'dcb-sandbox'
import { sandboxHandlers } from 'dcb-sandbox/msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { BillingError, CarrierBilling } from '../src/billing.js'

const BASE_URL = 'https://dcb.carrier.example/v1'
const billing = new CarrierBilling(BASE_URL, 'sandbox-demo-key')

let sandbox: Sandbox
const server = setupServer()

beforeAll(async () => {
  sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
  server.use(...sandboxHandlers(sandbox, { baseUrl: BASE_URL }))
  server.listen({ onUnhandledRequest: 'error' })
})
// Each test starts afresh; its coverage is kept first (a reset starts the counts over), to gate the suite as a whole.
const reports: CoverageAnswer[] = []
afterEach(async () => {
  reports.push(await sandbox.coverage(), await sandbox.session('worker-2').coverage())
  await sandbox.reset()
})
afterAll(async () => {
  server.close()
  await sandbox.close()
})

describe('carrier billing', () => {
  it('subscribes with the OTP the handset received', async () => {
    const started = await billing.start('60123456011', 'STREAMPLUS', 'my')
    if (started.flow !== 'otp') throw new Error(`expected the OTP flow, got ${started.flow}`)
    const { otp } = await sandbox.otp('60123456011')
    const id = await billing.confirm(started.requestId, otp)
    expect(await billing.access(id)).toEqual({ active: true, until: new Date('2026-02-28T00:00:00Z') })
  })

  it('reports a failed first charge (magic ending 201: INSUFFICIENT_FUNDS)', async () => {
    const started = await billing.start('60123456201', 'STREAMPLUS', 'my')
    if (started.flow !== 'otp') throw new Error('expected the OTP flow')
    const { otp } = await sandbox.otp('60123456201')
    await expect(billing.confirm(started.requestId, otp)).rejects.toEqual(new BillingError('INSUFFICIENT_FUNDS', 200))
  })

  it('keeps access after the monthly renewal', async () => {
    const started = await billing.start('60123456012', 'STREAMPLUS', 'my')
    if (started.flow !== 'otp') throw new Error('expected the OTP flow')
    const id = await billing.confirm(started.requestId, (await sandbox.otp('60123456012')).otp)
    const moved = await sandbox.advance('P1M')
    expect(moved.events.map((e) => e.type)).toContain('renewed')
    expect(await billing.access(id)).toEqual({ active: true, until: new Date('2026-03-31T00:00:00Z') })
  })

  it('loses access when the renewal fails (magic ending 301)', async () => {
    const started = await billing.start('60123456301', 'STREAMPLUS', 'my')
    if (started.flow !== 'otp') throw new Error('expected the OTP flow')
    const id = await billing.confirm(started.requestId, (await sandbox.otp('60123456301')).otp)
    await sandbox.advance('P1M')
    expect((await billing.access(id)).active).toBe(false)
  })

  it('isolates parallel work in sessions', async () => {
    const worker = sandbox.session('worker-2')
    server.use(...sandboxHandlers(sandbox, { baseUrl: 'https://worker-2.carrier.example', session: 'worker-2' }))
    const other = new CarrierBilling('https://worker-2.carrier.example', 'sandbox-demo-key')
    const started = await other.start('60123456011', 'STREAMPLUS', 'my')
    expect(started.flow).toBe('otp')
    expect((await worker.otp('60123456011')).otp).toMatch(/^\d{4}$/)
    const err = await sandbox.otp('60123456011').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SandboxError)
    expect((err as SandboxError).code).toBe('NO_OTP')
  })
})

// Last: the suite's coverage, merged over its tests, against the policy CI holds it to (coverage-policy.json).
describe('coverage', () => {
  it('meets coverage-policy.json: every outcome it requires seen, no finding', () => {
    const policy = JSON.parse(readFileSync(new URL('../coverage-policy.json', import.meta.url), 'utf8')) as CoveragePolicy
    const xml = coverageJUnit(mergeCoverage(...reports), policy)
    writeFileSync(new URL('../coverage-report.xml', import.meta.url), xml)
    expect(xml).toMatch(/<testsuites name="dcb coverage" tests="\d+" failures="0"/)
  })
})
