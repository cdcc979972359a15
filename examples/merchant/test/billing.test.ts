import { readFileSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import {
  coverageJUnit,
  createClient,
  createSandbox,
  mergeCoverage,
  SandboxError,
  type CoverageAnswer,
  type CoveragePolicy,
  type Sandbox,
  type SandboxClient,
} from 'dcb-sandbox'
import { sandboxHandlers } from 'dcb-sandbox/msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { BillingError, CarrierBilling } from '../src/billing.js'

// Two ways to run: in process (msw answers from a sandbox in this file), or, with DCB_BASE_URL set, against
// a running `dcb serve`. There this file works in sessions of its own, named from the file
// (file-billing and file-billing-worker-2), and `dcb coverage --sessions 'file-*'` gates them after.
const DCB_BASE_URL = process.env.DCB_BASE_URL
const CLOCK = '2026-01-31T00:00:00'
const FILE = `file-${basename(import.meta.filename, '.test.ts')}`
const WORKER = DCB_BASE_URL ? `${FILE}-worker-2` : 'worker-2'
const BASE_URL = DCB_BASE_URL ?? 'https://dcb.carrier.example/v1'
const billing = new CarrierBilling(BASE_URL, 'sandbox-demo-key', DCB_BASE_URL ? { 'X-DCB-Session': FILE } : {})

let sandbox: Sandbox | SandboxClient
const server = setupServer()

beforeAll(async () => {
  if (DCB_BASE_URL) {
    sandbox = createClient({ baseUrl: DCB_BASE_URL, session: FILE })
    // Sessions from an earlier run would count too: both start over.
    await sandbox.reset({ clock: CLOCK, frozen: true })
    await sandbox.session(WORKER).reset({ clock: CLOCK, frozen: true })
    return
  }
  sandbox = await createSandbox({ clock: CLOCK })
  server.use(...sandboxHandlers(sandbox, { baseUrl: BASE_URL }))
  server.listen({ onUnhandledRequest: 'error' })
})
// In process, each test starts afresh; its coverage is kept first (a reset starts the counts over), to
// gate the suite as a whole. Served, nothing resets: the server keeps the counts for `dcb coverage`.
const reports: CoverageAnswer[] = []
afterEach(async () => {
  if (DCB_BASE_URL) return
  reports.push(await sandbox.coverage(), await sandbox.session(WORKER).coverage())
  await sandbox.reset()
})
afterAll(async () => {
  if (DCB_BASE_URL) return
  server.close()
  await (sandbox as Sandbox).close()
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
    const worker = sandbox.session(WORKER)
    const workerUrl = DCB_BASE_URL ?? 'https://worker-2.carrier.example'
    if (!DCB_BASE_URL) server.use(...sandboxHandlers(sandbox as Sandbox, { baseUrl: workerUrl, session: WORKER }))
    const other = new CarrierBilling(workerUrl, 'sandbox-demo-key', DCB_BASE_URL ? { 'X-DCB-Session': WORKER } : {})
    // A number no other test uses: served, this file's session keeps every earlier test's SMS.
    const started = await other.start('60123456014', 'STREAMPLUS', 'my')
    expect(started.flow).toBe('otp')
    expect((await worker.otp('60123456014')).otp).toMatch(/^\d{4}$/)
    const err = await sandbox.otp('60123456014').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SandboxError)
    expect((err as SandboxError).code).toBe('NO_OTP')
  })
})

// Last, in process only: the suite's coverage, merged over its tests, against the policy CI holds it
// to (coverage-policy.json). Served, `dcb coverage --policy` gates the sessions instead (npm run test:served).
if (!DCB_BASE_URL)
  describe('coverage', () => {
    it('meets coverage-policy.json: every outcome it requires seen, no finding', () => {
      const policy = JSON.parse(readFileSync(new URL('../coverage-policy.json', import.meta.url), 'utf8')) as CoveragePolicy
      const xml = coverageJUnit(mergeCoverage(...reports), policy)
      writeFileSync(new URL('../coverage-report.xml', import.meta.url), xml)
      expect(xml).toMatch(/<testsuites name="dcb coverage" tests="\d+" failures="0"/)
    })
  })
