/**
 * What a consumer writes takes effect or is refused by name, in the packed package. Options a function
 * does not take: left out without a word, `clok` ran the sandbox on real time, `apikey` called as the
 * demo merchant, `inMemry` wrote a data file into the project, `sesion` answered from the default
 * session. An OTP wait's signal, and a client's close, did nothing. A misspelt coverage outcome id compiled.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { MODULES, packedConsumer, run } from './packed.js'

describe('options, signals and close in the packed package', () => {
  const packed = packedConsumer()

  describe('an option a function does not take', () => {
    let r: { code: number; out: string; stdout: string }
    let said: string[]
    // One script run for these tests: each reads the refusals of its own function.
    beforeAll(async () => {
      r = await packed.script(`import { createClient, createSandbox, startSandbox } from 'dcb-sandbox'
import { sandboxHandlers } from 'dcb-sandbox/msw'
const said = (e) => e.constructor.name + ' ' + (e.code ?? '') + ': ' + e.message
const refusal = async (make) => { try { const s = await make(); await s.close?.(); return 'taken' } catch (e) { return said(e) } }
const sandbox = await createSandbox()
console.log(JSON.stringify([
  await refusal(() => createSandbox({ clok: '2026-01-31T00:00:00' })),
  await refusal(() => createSandbox({ fixture: 'fixtures/scenarios/barred.json' })),
  await refusal(() => createSandbox(null)),
  await refusal(() => createClient({ baseUrl: 'http://127.0.0.1:7700', apikey: 'sandbox-other-key' })),
  await refusal(() => createClient({ baseURL: 'http://127.0.0.1:7700' })),
  await refusal(() => createClient()),
  await refusal(() => createClient({})),
  await refusal(() => startSandbox({ inMemry: true, port: 0 })),
  await refusal(() => startSandbox({ inMemory: true, port: 0, data: 'kept.json' })),
  await refusal(() => sandboxHandlers(sandbox, { baseUrl: 'https://gw.test', sesion: 'w1' })),
  await refusal(() => createClient({ baseUrl: 'http://127.0.0.1:7700', apiKey: 'sandbox-other-key', adminToken: 't', session: 'w1' })),
  await refusal(() => startSandbox({ inMemory: true, port: 0, clock: '2026-01-31T00:00:00', reasons: false })),
]))`)
      said = JSON.parse(r.stdout) as string[]
    })
    const startOptions =
      'port, host, data, inMemory, store, replaceWorld, fixtures, world, allowIps, trustProxy, adminToken, allowHosts, failurePayload, clock, clockRunning, requestLogSize, requestLogBytes, maxConnections, idleTimeoutMs, headersTimeoutMs, requestTimeoutMs, maxSessions, reasons, smsPerMsisdn, chargesPerSubscription, maxSms, maxVerifications, maxSubscriptions, tickMs, compactBytes, onError, onWarning'

    it('createSandbox refuses it, naming it with the option it is a typo of', () => {
      expect(r.code).toBe(0)
      expect(said.slice(0, 3)).toEqual([
        'SandboxError BAD_REQUEST: createSandbox: unknown option clok (did you mean clock?); it takes world, fixtures, clock, clientIp, failurePayload, requestLogSize, maxSessions, maxSubscriptions, apiKey, baseUrl, onWarning',
        'SandboxError BAD_REQUEST: createSandbox: unknown option fixture (did you mean fixtures?); it takes world, fixtures, clock, clientIp, failurePayload, requestLogSize, maxSessions, maxSubscriptions, apiKey, baseUrl, onWarning',
        'SandboxError BAD_REQUEST: createSandbox: options must be an object such as { world: … } (got null)',
      ])
    })

    it('createClient refuses it, naming it with the option it is a typo of', () => {
      expect(said.slice(3, 7)).toEqual([
        'SandboxError BAD_REQUEST: createClient: unknown option apikey (did you mean apiKey?); it takes baseUrl, apiKey, adminToken, session',
        'SandboxError BAD_REQUEST: createClient: unknown option baseURL (did you mean baseUrl?); it takes baseUrl, apiKey, adminToken, session',
        'SandboxError BAD_REQUEST: createClient: options are needed: createClient({ baseUrl: … })',
        "SandboxError BAD_REQUEST: createClient: baseUrl is needed, e.g. createClient({ baseUrl: 'http://127.0.0.1:7700' })",
      ])
    })

    it('startSandbox refuses it, naming it with the option it is a typo of', () => {
      expect(said.slice(7, 9)).toEqual([
        `SandboxError BAD_REQUEST: startSandbox: unknown option inMemry (did you mean inMemory?); it takes ${startOptions}`,
        'SandboxError BAD_REQUEST: startSandbox: inMemory keeps nothing on disk: it goes with no data file (got data "kept.json"); drop one of them',
      ])
    })

    it('sandboxHandlers refuses it, naming it with the option it is a typo of', () => {
      expect(said.slice(9, 10)).toEqual(['TypeError : sandboxHandlers: unknown option sesion (did you mean session?); it takes baseUrl, session'])
    })

    it('the options each function takes are taken', () => {
      expect(said.slice(10)).toEqual(['taken', 'taken'])
    })
  })

  describe('otp(msisdn, { wait, signal }) on a sandbox or a client', () => {
    let out: Record<'sandbox' | 'client', { typo: string; early: string; late: string; after: string }>
    // One script run for these tests: each reads its own part of what it printed.
    beforeAll(async () => {
      const r = await packed.script(`import { createClient, createSandbox, startSandbox } from 'dcb-sandbox'
const server = await startSandbox({ inMemory: true, port: 0 })
const said = (e) => e.constructor.name + ' ' + (e.code ?? '') + ': ' + e.message
const out = {}
for (const [name, sandbox] of [['sandbox', await createSandbox()], ['client', createClient({ baseUrl: server.url })]]) {
  const typo = await sandbox.otp('60123456001', { wiat: 1 }).then(() => 'taken', said)
  const early = await sandbox.otp('60123456001', { wait: 30, signal: AbortSignal.abort(new Error('early')) }).then(() => 'answered', said)
  // Without the signal this waits 30 s for an OTP that never comes (past the test's timeout).
  const controller = new AbortController()
  const waiting = sandbox.otp('60123456002', { wait: 30, signal: controller.signal }).then(() => 'answered', said)
  setTimeout(() => controller.abort(new Error('gave up')), 50)
  const late = await waiting
  await sandbox.init({ msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' })
  const after = (await sandbox.otp('60123456002', { wait: 5, signal: new AbortController().signal })).msisdn
  out[name] = { typo, early, late, after }
}
await server.close()
console.log(JSON.stringify(out))`)
      out = JSON.parse(r.stdout) as typeof out
    })
    const expected = {
      typo: 'SandboxError BAD_REQUEST: otp: unknown option wiat (did you mean wait?); it takes wait, signal',
      early: 'Error : early',
      late: 'Error : gave up',
      after: '60123456002',
    }

    it('a signal aborted before or during the wait ends it, rejecting with its reason', () => {
      const ended = ({ early, late, after }: typeof expected) => ({ early, late, after })
      expect({ sandbox: ended(out.sandbox), client: ended(out.client) }).toEqual({ sandbox: ended(expected), client: ended(expected) })
    })

    it('an unknown option is refused by name', () => {
      expect([out.sandbox.typo, out.client.typo]).toEqual([expected.typo, expected.typo])
    })
  })

  describe("a client's close(), as a sandbox's", () => {
    let said: { sandbox: string[]; client: string[]; other: boolean }
    const closed = 'SandboxError SANDBOX_CLOSED 410'
    // One script run for both tests: each reads its own part of what it printed.
    beforeAll(async () => {
      const r = await packed.script(`import { createClient, createSandbox, startSandbox } from 'dcb-sandbox'
const server = await startSandbox({ inMemory: true, port: 0 })
const said = (e) => e.constructor.name + ' ' + e.code + ' ' + e.status
const out = {}
for (const [name, sandbox] of [['sandbox', await createSandbox()], ['client', createClient({ baseUrl: server.url })]]) {
  const session = sandbox.session('w1')
  await sandbox.now()
  await sandbox.close()
  out[name] = await Promise.all([
    sandbox.now().then(() => 'answered', said),
    sandbox.init({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }).then(() => 'answered', said),
    session.now().then(() => 'answered', said),
  ])
}
const other = (await createClient({ baseUrl: server.url }).now()).frozen
await server.close()
console.log(JSON.stringify({ ...out, other }))`)
      said = JSON.parse(r.stdout) as typeof said
    })

    it('makes later calls of it, its sessions too, throw SANDBOX_CLOSED', () => {
      expect({ sandbox: said.sandbox, client: said.client }).toEqual({ sandbox: [closed, closed, closed], client: [closed, closed, closed] })
    })

    it('leaves the server going for other clients', () => {
      expect(said.other).toBe(false)
    })
  })

  it('types coverage outcome ids as their union (CoverageOutcomeId): a misspelt one fails to compile under tsc --strict', async () => {
    const dir = join(packed.app, 'outcome-ids')
    mkdirSync(dir, { recursive: true })
    writeFileSync(
      join(dir, 'main.ts'),
      `import { createSandbox, type CoverageOutcomeId } from 'dcb-sandbox'
const [me] = (await (await createSandbox()).coverage()).coverage
const wanted: CoverageOutcomeId[] = ['verify.INSUFFICIENT_FUNDS', 'renewal.failed', 'client.gone']
export const missing = me?.outcomes.filter((o) => wanted.includes(o.id) && o.count === 0)
// @ts-expect-error no such outcome
export const typo: CoverageOutcomeId = 'verify.INSUFFICENT_FUNDS'
// @ts-expect-error a misspelt id is never one of them
export const never = me?.outcomes.find((o) => o.id === 'renewal.fail')
`,
    )
    const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, lib: ['ES2022'], types: ['node'] }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['main.ts'] }))
    const r = await run(process.execPath, [join(MODULES, 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], packed.app)
    expect(r.out).toBe('')
    expect(r.code).toBe(0)
  }, 60_000)
})
