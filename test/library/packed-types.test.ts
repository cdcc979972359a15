/**
 * The types a consumer compiles against, and `createSandbox({ baseUrl })`, in the packed package. The
 * message unions held SESSION_LIMIT as a Status message and no NOT_FOUND; a subscription's status
 * was closed to values the spec leaves open; a clock event's type was any string; `rules.add` was
 * declared with `RuleInput`, a name the package does not export (it exports `Rule`).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { MODULES, packedConsumer, run } from './packed.js'

/** Every declaration file under `dir`, read. */
function declarations(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.d.ts') || f.endsWith('.d.cts'))
    .map((f) => ({ file: f, text: readFileSync(join(dir, f), 'utf8') }))
}

describe('types and baseUrl in the packed package', () => {
  const packed = packedConsumer()

  it('type-checks as declared in a strict project (no skipLibCheck): message unions, open status, event types, Rule, wrong uses marked @ts-expect-error', async () => {
    const dir = join(packed.app, 'message-types')
    mkdirSync(dir, { recursive: true })
    writeFileSync(
      join(dir, 'main.ts'),
      `import { createSandbox, type InitMessage, type StatusMessage, type VerifyMessage, type SandboxMessage, type PlatformMessage, type StatusPayload, type SubscriptionStatus, type SandboxEvent, type Rule, type World, type Sandbox } from 'dcb-sandbox'
const sandbox: Sandbox = await createSandbox({ baseUrl: 'https://api.carrier.test/v1', world: { extends: 'default' } satisfies World })
const r = await sandbox.status({ subscription_id: 'x' })
if (r.envelope.status === 'FAIL') {
  // Every message status() can answer, the sandbox's own apart: a switch with no default is exhaustive.
  const m: StatusMessage | SandboxMessage = r.envelope.message
  switch (m) {
    case 'BAD_REQUEST': case 'UNAUTHORIZED': case 'MERCHANT_SERVICE_NOT_CONFIGURED': case 'NOT_FOUND':
    case 'METHOD_NOT_ALLOWED': case 'ERROR': case 'SUBSCRIPTION_NOT_FOUND': case 'SESSION_LIMIT': break
    default: { const none: never = m; console.log(none) }
  }
} else {
  const status: SubscriptionStatus = r.envelope.payload.status
  // A status the spec does not list is a value the code must take.
  if (status !== 'ACTIVE' && status !== 'CANCELED' && status !== 'EXPIRED') console.log('unlisted', status)
}
const later: StatusPayload['status'] = 'SUSPENDED'
const init: InitMessage = 'NOT_FOUND'
const verify: VerifyMessage = 'INSUFFICIENT_FUNDS'
const platform: PlatformMessage = 'METHOD_NOT_ALLOWED'
// @ts-expect-error SESSION_LIMIT is the sandbox's own, not a Status message
export const limit: StatusMessage = 'SESSION_LIMIT'
// @ts-expect-error Status answers no carrier code
export const barred: StatusMessage = 'BARRED'
// @ts-expect-error nor does any operation answer a misspelt one
export const typo: InitMessage = 'INSUFICIENT_FUNDS'
const moved = await sandbox.advance('P1M')
const types: SandboxEvent['type'][] = moved.events.map((e) => e.type)
// @ts-expect-error not an event type
export const notEvent: SandboxEvent['type'] = 'renewd'
const rule: Rule = { step: 'charge', match: { msisdn: '60123456011' }, effect: { error: 'BARRED' } }
const added = await sandbox.rules.add(rule)
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const takesRule: Same<Parameters<Sandbox['rules']['add']>[0], Rule> = true
console.log(later, init, verify, platform, types, added.id)
`,
    )
    const compilerOptions = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      lib: ['ES2022'],
      types: ['node'],
    }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['main.ts'] }))
    const r = await run(process.execPath, [join(MODULES, 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], packed.app)
    expect(r.out).toBe('')
    expect(r.code).toBe(0)
  }, 120_000)

  it('declares each public type under the name the package exports: no RuleInput, no WorldInput, in either build', () => {
    const files = declarations(join(packed.app, 'node_modules', 'dcb-sandbox', 'dist'))
    expect(files.length).toBeGreaterThan(10)
    expect(files.filter((f) => /\b(RuleInput|WorldInput)\b/.test(f.text)).map((f) => f.file)).toEqual([])
    expect(files.some((f) => f.text.includes('add(rule: Rule)'))).toBe(true)
  })

  describe('createSandbox({ baseUrl })', () => {
    let r: { code: number; out: string; stdout: string }
    let said: { under: string; otp: string; outside: string; bad: string }
    // One script run for the three tests: each reads its own part of what it printed.
    beforeAll(async () => {
      r = await packed.script(`import { createSandbox } from 'dcb-sandbox'
const said = (e) => e.constructor.name + ' ' + e.code + ': ' + e.message
const sandbox = await createSandbox({ baseUrl: 'https://api.carrier.test/v1' })
const headers = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const body = JSON.stringify({ msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' })
const under = await (await sandbox.fetch('https://api.carrier.test/v1/subscriptions/init', { method: 'POST', headers, body })).json()
const outside = await sandbox.fetch('https://api.carrier.test/subscriptions/init', { method: 'POST', headers, body }).then(() => 'answered', said)
const bad = await createSandbox({ baseUrl: 'api.carrier.test/v1' }).then(() => 'taken', said)
console.log(JSON.stringify({ under: under.status, otp: (await sandbox.otp('60123456011')).msisdn, outside, bad }))`)
      said = JSON.parse(r.stdout) as typeof said
    })

    it('fetch answers under the base with the prefix removed', () => {
      expect(r.code).toBe(0)
      expect([said.under, said.otp]).toEqual(['SUCCESS', '60123456011'])
    })

    it('fetch refuses a URL outside the base by name', () => {
      expect(said.outside).toBe(
        "SandboxError BAD_REQUEST: sandbox.fetch: https://api.carrier.test/subscriptions/init is not under the sandbox's baseUrl https://api.carrier.test/v1 (createSandbox({ baseUrl })): address it as https://api.carrier.test/v1/…",
      )
    })

    it('refuses a bad baseUrl by name', () => {
      expect(said.bad).toBe(
        `SandboxError BAD_REQUEST: createSandbox: baseUrl "api.carrier.test/v1" is not an absolute URL: give an http(s) URL such as 'https://api.carrier.test/v1'`,
      )
    })
  })
})
