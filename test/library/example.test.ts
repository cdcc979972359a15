/**
 * The package as a consumer installs it: `npm pack`, the tarball unpacked into a copy of
 * `examples/merchant` as `node_modules/dcb-sandbox`, the other packages linked from this repository's
 * node_modules (offline, fast). There the example's vitest suite (msw + dcb-sandbox) runs, and
 * `tsc --strict` compiles it against the declarations the package ships. The suite runs a second
 * time against the tarball's `dcb serve`, and its `dcb coverage --policy` gates the sessions it used.
 */
import { execFile, type ChildProcess } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MODULES, packedConsumer, ROOT, run, servePacked } from './packed.js'

describe('the packed package in a consumer project (examples/merchant)', () => {
  const packed = packedConsumer()
  const app = packed.app

  it('ships the built entries, their declarations and the fixtures, and no sources or tests', () => {
    for (const f of ['dist/index.js', 'dist/msw.js', 'dist/types/index.d.ts', 'dist/types/msw.d.ts', 'fixtures/world.json', 'bin/dcb.js', 'package.json'])
      expect(packed.files).toContain(f)
    expect(packed.files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('examples/'))).toEqual([])
    const pkg = JSON.parse(readFileSync(join(app, 'node_modules', 'dcb-sandbox', 'package.json'), 'utf8'))
    expect(pkg.peerDependencies).toEqual({ msw: '>=2.0.0' })
    expect(pkg.peerDependenciesMeta).toEqual({ msw: { optional: true } })
  })

  it("runs the example's vitest suite, one file per concept, and its gate holds the files' coverage merged to its policy", async () => {
    const r = await run(process.execPath, [join(MODULES, 'vitest', 'vitest.mjs'), 'run'], app)
    expect(r.out).toMatch(/Test Files\s+3 passed \(3\)/)
    expect(r.out).toMatch(/Tests\s+5 passed \(5\)/)
    expect(r.code).toBe(0)
    // Each file left its own coverage; the gate merged them into the one report.
    expect(readdirSync(join(app, 'dcb-coverage')).sort()).toEqual(['renewal.json', 'sessions.json', 'subscribe.json'])
    expect(readFileSync(join(app, 'coverage-report.xml'), 'utf8')).toMatch(/<testsuites name="dcb coverage" tests="\d+" failures="0"/)
  }, 120_000)

  it('fails the in-process run when the policy does not hold: every test passes, the gate names each required outcome never seen', async () => {
    const file = join(app, 'coverage-policy.json')
    const policy = readFileSync(file, 'utf8')
    const { require } = JSON.parse(policy) as { require: string[] }
    // A stricter policy: a wrong OTP and a canceled subscription, which no test produces.
    writeFileSync(file, JSON.stringify({ require: [...require, 'verify.INVALID_PIN', 'status.CANCELED'] }))
    try {
      const r = await run(process.execPath, [join(MODULES, 'vitest', 'vitest.mjs'), 'run'], app)
      expect(r.out).toMatch(/Tests\s+5 passed \(5\)/)
      expect(r.code).toBe(1)
      const lines = r.stderr.split('\n')
      expect(lines).toContain('coverage-policy.json does not hold over renewal.test.ts, sessions.test.ts, subscribe.test.ts:')
      expect(lines.filter((l) => l.startsWith('  demo: '))).toEqual([
        '  demo: required outcome verify.INVALID_PIN was never seen; Verify with a wrong OTP',
        expect.stringMatching(/^  demo: required outcome status\.CANCELED was never seen; Status after /),
      ])
      expect(readFileSync(join(app, 'coverage-report.xml'), 'utf8')).toMatch(/<testsuites name="dcb coverage" tests="\d+" failures="2"/)
    } finally {
      writeFileSync(file, policy)
    }
  }, 120_000)

  /** A command in the example with DCB_BASE_URL set, as `npm run test:served` runs its steps. */
  const against = (url: string, args: string[]) =>
    new Promise<{ code: number; out: string; stderr: string }>((resolve) =>
      execFile(process.execPath, args, { cwd: app, env: { ...process.env, CI: 'true', NO_COLOR: '1', DCB_BASE_URL: url } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr, stderr }),
      ),
    )
  let server: ChildProcess | undefined
  afterAll(() => {
    server?.kill()
  })

  it("runs the example's suite against the packed dcb serve, then its dcb coverage --policy gates the files' sessions", async () => {
    const bin = join(app, 'node_modules', 'dcb-sandbox', 'bin', 'dcb.js')
    const s = await servePacked(bin, app)
    server = s.child
    // The order npm run test:served documents: the suite, then the gate over its sessions.
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).scripts['test:served']).toBe(
      "vitest run && dcb coverage --sessions 'file-*' --policy coverage-policy.json --junit coverage-report.xml",
    )
    // Twice: each file resets its sessions, so the second run counts only its own calls.
    const counts: { name: string; requests: number }[][] = []
    for (const time of [1, 2]) {
      const suite = await against(s.url, [join(MODULES, 'vitest', 'vitest.mjs'), 'run'])
      expect(suite.out, `run ${time}`).toMatch(/Tests\s+5 passed \(5\)/)
      expect(suite.code).toBe(0)
      const sessions = (await (await fetch(`${s.url}/_sandbox/sessions`)).json()) as { sessions: { name: string; requests: number }[] }
      counts.push(
        sessions.sessions
          .filter((x) => x.name.startsWith('file-'))
          .map(({ name, requests }) => ({ name, requests }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      )
    }
    // One session per test file, and the sessions file's worker beside its own.
    expect(counts[0]!.map((x) => x.name)).toEqual(['file-renewal', 'file-sessions', 'file-sessions-worker-2', 'file-subscribe'])
    expect(counts[1]).toEqual(counts[0])
    const gate = await against(s.url, [bin, 'coverage', '--sessions', 'file-*', '--policy', 'coverage-policy.json', '--junit', 'coverage-report.xml'])
    expect([gate.code, gate.stderr]).toEqual([0, ''])
    expect(readFileSync(join(app, 'coverage-report.xml'), 'utf8')).toMatch(/<testsuites name="dcb coverage" tests="\d+" failures="0"/)

    // The gate can fail: a policy that also requires a wrong OTP, which the suite never sends.
    const policy = JSON.parse(readFileSync(join(app, 'coverage-policy.json'), 'utf8')) as { require: string[] }
    writeFileSync(join(app, 'stricter-policy.json'), JSON.stringify({ ...policy, require: [...policy.require, 'verify.INVALID_PIN'] }))
    const stricter = await against(s.url, [bin, 'coverage', '--sessions', 'file-*', '--policy', 'stricter-policy.json'])
    expect(stricter.code).toBe(1)
    expect(stricter.stderr).toContain('required outcome verify.INVALID_PIN was never seen')
  }, 120_000)

  it("names the default world's rules fixtures/world.json in the installed library, not a node_modules path", async () => {
    const script = `import { createSandbox } from 'dcb-sandbox'
const { rules } = await (await createSandbox()).rules.list()
console.log(JSON.stringify([...new Set(rules.map((r) => r.source))]))`
    const r = await run(process.execPath, ['--input-type=module', '-e', script], app)
    expect(r.out).toBe('["fixtures/world.json"]\n')
  })

  it('the installed library honours AbortSignal and names library calls in its errors', async () => {
    const script = `import { createSandbox } from 'dcb-sandbox'
const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
const init = (signal) => sandbox.fetch('http://localhost/subscriptions/init', { method: 'POST', signal,
  headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
  body: JSON.stringify({ msisdn: '60123456599', service_code: 'STREAMPLUS', country_code: 'my' }) })
const early = await init(AbortSignal.abort(new Error('early'))).catch((e) => e.message)
const controller = new AbortController()
const answer = init(controller.signal).catch((e) => e.message)
await sandbox.otp('60123456599', { wait: 5 })
controller.abort(new Error('late'))
const late = await answer
const [entry] = (await sandbox.requests()).requests
const backwards = await sandbox.setTime('2025-01-01T00:00:00').catch((e) => e.message)
console.log(JSON.stringify({ early, late, client_closed: entry.client_closed, backwards }))`
    const r = await run(process.execPath, ['--input-type=module', '-e', script], app)
    expect(JSON.parse(r.out)).toEqual({
      early: 'early',
      late: 'late',
      client_closed: true,
      backwards: expect.stringMatching(/call sandbox\.reset\(\{ clock: '2025-01-01T00:00:00' \}\)$/),
    })
  })

  it("sandbox.consent on a redirect_url answered through msw under a base URL with a path: the 303 points under that path, as the browser's does", async () => {
    const script = `import { createSandbox } from 'dcb-sandbox'
import { sandboxHandlers } from 'dcb-sandbox/msw'
import { setupServer } from 'msw/node'
const BASE = 'https://gw.test/dcb/v1'
const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
const server = setupServer(...sandboxHandlers(sandbox, { baseUrl: BASE }))
server.listen({ onUnhandledRequest: 'error' })
const init = async (msisdn) => {
  const res = await fetch(BASE + '/subscriptions/init', { method: 'POST',
    headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
    body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'bg' }) })
  return (await res.json()).payload.redirect_url
}
const viaBrowser = await fetch(await init('359881234011'), { method: 'POST', redirect: 'manual',
  headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=deny' })
const viaLibrary = await sandbox.consent(await init('359881234012'), 'approve')
const back = await fetch(new URL(viaLibrary.location, BASE))
const atRoot = await sandbox.consent((await sandbox.init({ msisdn: '359881234013', service_code: 'STREAMPLUS', country_code: 'bg' })).envelope.payload.redirect_url, 'deny')
server.close()
console.log(JSON.stringify({ browser: viaBrowser.headers.get('location'), library: viaLibrary, back: back.status, atRoot: atRoot.location }))`
    const r = await run(process.execPath, ['--input-type=module', '-e', script], app)
    expect(JSON.parse(r.out)).toEqual({
      browser: '/dcb/v1/_sandbox/return?status=FAIL&message=FAILED_INIT_SUB',
      library: { status: 303, location: expect.stringMatching(/^\/dcb\/v1\/_sandbox\/return\?status=SUCCESS&subscription_id=[0-9a-f-]{36}$/) },
      back: 200,
      // sandbox.init is addressed to the sandbox's root: its consent redirects there.
      atRoot: '/_sandbox/return?status=FAIL&message=FAILED_INIT_SUB',
    })
  })

  it('sandboxHandlers names a bad session, a session passed as the sandbox and missing options when it is called, not at each request', async () => {
    const script = `import { createSandbox } from 'dcb-sandbox'
import { sandboxHandlers } from 'dcb-sandbox/msw'
const sandbox = await createSandbox()
const refusal = (...args) => { try { sandboxHandlers(...args); return 'taken' } catch (e) { return e.constructor.name + ': ' + e.message } }
console.log(JSON.stringify([
  refusal(sandbox, { baseUrl: 'https://gw.test/dcb/v1', session: 'checkout tests' }),
  refusal(sandbox.session('w1'), { baseUrl: 'https://gw.test/dcb/v1' }),
  refusal(sandbox),
  refusal(sandbox, { baseUrl: 'https://gw.test/dcb/v1', session: 'w1' }),
]))`
    const r = await run(process.execPath, ['--input-type=module', '-e', script], app)
    expect(JSON.parse(r.out)).toEqual([
      'TypeError: sandboxHandlers: session: "checkout tests" is not a session name: 1-64 characters of A-Z a-z 0-9 . _ -',
      'TypeError: sandboxHandlers: pass the sandbox made by createSandbox(), not a session of it: sandboxHandlers(sandbox, { baseUrl, session: "w1" })',
      "TypeError: sandboxHandlers: options are needed: sandboxHandlers(sandbox, { baseUrl: 'https://…' })",
      'taken',
    ])
  })

  it('createSandbox and startSandbox refuse a wrong option by name before building anything; startSandbox takes one fixture path as createSandbox does', async () => {
    const script = `import { createSandbox, startSandbox } from 'dcb-sandbox'
const refusal = (make) => make().then(async (s) => { await s.close(); return 'taken' }, (e) => e.constructor.name + ' ' + e.code + ': ' + e.message)
const sandbox = (o) => refusal(() => createSandbox(o))
const server = (o) => refusal(() => startSandbox({ inMemory: true, port: 0, ...o }))
console.log(JSON.stringify([
  await sandbox({ journalSize: -1 }),
  await sandbox({ journalSize: 'x' }),
  await sandbox({ maxSessions: 1.5 }),
  await sandbox({ failurePayload: 'none' }),
  await sandbox({ clock: 1769817600000 }),
  await sandbox({ clientIp: 127 }),
  await sandbox({ apiKey: 'ключ' }),
  await sandbox({ apiKey: 5 }),
  await sandbox({ apiKey: 'clé' }),
  await sandbox({ fixtures: [1] }),
  await server({ journalSize: 0 }),
  await server({ fixtures: 'fixtures/scenarios/barred.json' }),
  await sandbox({ journalSize: 5, maxSessions: 0, failurePayload: 'null', clock: '2026-01-31T00:00:00', apiKey: 'sandbox-demo-key', clientIp: '::1' }),
]))`
    const r = await run(process.execPath, ['--input-type=module', '-e', script], join(app, 'node_modules', 'dcb-sandbox'))
    expect(JSON.parse(r.out)).toEqual([
      'SandboxError BAD_REQUEST: journalSize must be a whole number from 1 to 1,000,000 (got number -1)',
      'SandboxError BAD_REQUEST: journalSize must be a whole number from 1 to 1,000,000 (got "x")',
      'SandboxError BAD_REQUEST: maxSessions must be a whole number from 0 to 1,000,000 (got number 1.5)',
      "SandboxError BAD_REQUEST: failurePayload must be 'auto', 'null' or 'absent' (got \"none\")",
      "SandboxError BAD_TIME: clock must be a time as text, e.g. '2026-01-31T00:00:00' (got number 1769817600000)",
      'SandboxError BAD_REQUEST: clientIp must be an IPv4 or IPv6 address as text (got number 127)',
      'SandboxError BAD_REQUEST: apiKey has a character an HTTP header cannot carry: "к" (U+043A); a header carries tab and U+0020 to U+00FF except U+007F (printable ASCII and Latin-1)',
      'SandboxError BAD_REQUEST: apiKey must be text (got number 5)',
      'taken',
      'SandboxError BAD_REQUEST: fixtures must be a path or an array of paths (got an array with other values)',
      'SandboxError BAD_REQUEST: journalSize must be a whole number from 1 to 1,000,000 (got number 0)',
      'taken',
      'taken',
    ])
  })

  it('the example does not skip the library checks', () => {
    expect(JSON.parse(readFileSync(join(app, 'tsconfig.json'), 'utf8')).compilerOptions.skipLibCheck).toBeUndefined()
  })

  /** A strict consumer project beside the example, with these compiler options, compiling `code`. */
  const consumer = async (name: string, options: Record<string, unknown>, code: string) => {
    const dir = join(app, name)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'main.ts'), code)
    const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, ...options }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['main.ts'] }))
    return run(process.execPath, [join(MODULES, 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], app)
  }
  // Every public name used with its type: the factories, the error, the merchant API's types and unions.
  const USES = `
    import { createClient, createSandbox, SandboxError, type Envelope, type InitAnswer, type InitMessage, type SandboxMessage, type VerifyMessage, type StatusMessage, type InitBody, type StatusPayload, type Sandbox, type SandboxClient, type RequestsAnswer } from 'dcb-sandbox'
    const body: InitBody = { msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' }
    export async function both(): Promise<void> {
      const targets: (Sandbox | SandboxClient)[] = [await createSandbox(), createClient({ baseUrl: 'http://127.0.0.1:7700' })]
      for (const t of targets) {
        const r: InitAnswer = await t.init(body)
        const m: InitMessage | SandboxMessage = r.envelope.message
        if (r.envelope.status === 'SUCCESS') console.log(r.envelope.payload.verif_request_id, m)
        const journal: RequestsAnswer = await t.requests({ msisdn: '60123456011' })
        console.log(journal.requests.length)
        try { await t.subscription('x') } catch (e) { if (e instanceof SandboxError) console.log(e.code, e.status) }
      }
    }
    const v: VerifyMessage = 'INVALID_PIN'
    const s: StatusMessage = 'SUBSCRIPTION_NOT_FOUND'
    const e: Envelope<StatusPayload, StatusMessage> = { status: 'FAIL', message: s, status_code: 404, payload: null }
    console.log(v, e)
  `

  it('the main entry compiles under tsc --strict without skipLibCheck: lib ES2022 with @types/node', async () => {
    const r = await consumer('strict-node', { lib: ['ES2022'], types: ['node'] }, USES)
    expect(r.out).toBe('')
    expect(r.code).toBe(0)
  }, 120_000)

  it('the main entry compiles under tsc --strict without skipLibCheck: the DOM lib, no @types/node', async () => {
    const r = await consumer('strict-dom', { lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] }, USES)
    expect(r.out).toBe('')
    expect(r.code).toBe(0)
  }, 120_000)

  it('the msw entry without the DOM lib: no error outside msw’s own declarations', async () => {
    const r = await consumer(
      'strict-msw',
      { lib: ['ES2022'], types: ['node'] },
      `import { sandboxHandlers } from 'dcb-sandbox/msw'\nconsole.log(typeof sandboxHandlers)\n`,
    )
    // msw's own declarations (msw and the packages it brings) need the DOM lib; none of ours, nor the consumer's code, may fail.
    const errors = r.out.split('\n').filter((line) => /error TS/.test(line))
    expect(
      errors.every((line) =>
        /node_modules\/(msw|@mswjs|rettime|@open-draft|headers-polyfill|outvariant|strict-event-emitter|@bundled-es-modules)\//.test(line),
      ),
    ).toBe(true)
    const ours = errors.filter((line) => line.includes('dcb-sandbox') || line.includes('main.ts'))
    expect(ours).toEqual([])
  }, 120_000)

  // A world as a fixture file writes it: every field with a default left out (allowlist, landlines, otp, retry, messages, …).
  const SHOP_WORLD = `{
    merchants: [{ id: 'shop', api_keys: ['shop-key'] }],
    countries: [{ code: 'my', calling_code: '60', lengths: [11, 12] }],
    carriers: [{ code: 'my-otp', country: 'my', prefixes: ['6012'], flow: 'otp' }],
    services: [{ code: 'VIDEO', merchant: 'shop', name: 'Video', period: 'P1M', integrations: [{ country: 'my' }] }],
    rules: [{ id: 'barred', match: { ending: '107' }, step: 'init', effect: { error: 'BARRED' } }],
  }`

  // A layer on the default world: records partial (their key and the fields to change), rules whole.
  const LAYER_WORLD = `{
    extends: 'default',
    services: [{ code: 'STREAMPLUS', return_url: 'https://shop.test/return' }],
    carriers: [{ code: 'sbx-bg-redirect', retry: { max: 2 } }],
    rules: [{ id: 'ticket', match: { msisdn: '60123456011' }, step: 'init', effect: { error: 'NOT_ELIGIBLE' } }],
  }`

  it('World types a world object as a fixture file writes it, for createSandbox and startSandbox; Rule types rules.add', async () => {
    const code = `import { createSandbox, startSandbox, type Rule, type World } from 'dcb-sandbox'
      const world: World = ${SHOP_WORLD}
      const layer: World = ${LAYER_WORLD}
      // @ts-expect-error a world of its own needs whole records (this service has no merchant, name or period)
      export const partial: World = { services: [{ code: 'STREAMPLUS', return_url: '/back' }] }
      const rule: Rule = { match: { msisdn: '60123456013' }, step: 'charge', effect: { error: 'SPENDING_LIMIT_REACHED' } }
      export async function main(): Promise<void> {
        const sandbox = await createSandbox({ world, apiKey: 'shop-key' })
        await sandbox.rules.add(rule)
        await sandbox.rules.add({ id: 'slow', step: 'api', effect: { delay_ms: 10 } } satisfies Rule)
        const server = await startSandbox({ world, inMemory: true, port: 0 })
        await server.close()
        const layered = await createSandbox({ world: layer })
        // world() answers the world as one document: given back, the same world.
        await createSandbox({ world: await layered.world() })
        await (await startSandbox({ world: await layered.world(), inMemory: true, port: 0 })).close()
      }
      // @ts-expect-error an effect goes under "effect"
      export const wrong: Rule = { step: 'charge', error: 'BARRED' }
    `
    const r = await consumer('strict-world', { lib: ['ES2022'], types: ['node'] }, code)
    expect(r.out).toBe('')
    expect(r.code).toBe(0)
    // The same object loads as it is typed: the defaults are the sandbox's.
    const script = `import { createSandbox, startSandbox } from 'dcb-sandbox'
const world = ${SHOP_WORLD}
const sandbox = await createSandbox({ world, apiKey: 'shop-key' })
const answer = (msisdn) => sandbox.init({ msisdn, service_code: 'VIDEO', country_code: 'my' }).then((r) => r.envelope.message || r.envelope.status)
const server = await startSandbox({ world, inMemory: true, port: 0 })
await server.close()
console.log(JSON.stringify([await answer('60123456107'), await answer('60123456001')]))`
    const loaded = await run(process.execPath, ['--input-type=module', '-e', script], app)
    expect(loaded.out).toBe('["BARRED","SUCCESS"]\n')
  }, 120_000)

  it('rules.add takes a Rule on a sandbox, a client and their sessions: a good rule compiles, a misplaced field does not', async () => {
    const targets = `import { createClient, createSandbox } from 'dcb-sandbox'
      const sandbox = await createSandbox()
      const client = createClient({ baseUrl: 'http://127.0.0.1:7700' })
      export const targets = [sandbox, client, sandbox.session('w1'), client.session('w1')] as const
    `
    const good = await consumer(
      'rules-good',
      { lib: ['ES2022'], types: ['node'] },
      `${targets}
      for (const t of targets) {
        await t.rules.add({ match: { msisdn: '60123456013' }, step: 'charge', effect: { error: 'SPENDING_LIMIT_REACHED' } })
        await t.rules.add({ id: 'slow', step: ['init', 'verify'], effect: { delay_ms: 10 } })
      }
      await sandbox.rules.add({ step: 'init', effect: { error: 'BARRED' } })
      await client.rules.add({ step: 'init', effect: { error: 'BARRED' } })
    `,
    )
    expect(good.out).toBe('')
    expect(good.code).toBe(0)
    // An effect beside "effect", a step that is none: refused on each target by name.
    const bad = await consumer(
      'rules-bad',
      { lib: ['ES2022'], types: ['node'] },
      `${targets}
      await sandbox.rules.add({ step: 'charge', error: 'BARRED' })
      await client.rules.add({ step: 'charge', error: 'BARRED' })
      await sandbox.session('w1').rules.add({ step: 'charge', error: 'BARRED' })
      await client.session('w1').rules.add({ step: 'chrage', effect: { error: 'BARRED' } })
    `,
    )
    const errors = bad.out.split('\n').filter((line) => /error TS/.test(line))
    expect(errors.map((line) => /main\.ts\((\d+),/.exec(line)?.[1])).toEqual(['6', '7', '8', '9'])
    expect(errors.slice(0, 3).every((line) => line.includes("'error' does not exist in type"))).toBe(true)
    expect(errors[3]).toContain('"chrage"')
    expect(bad.code).not.toBe(0)
  }, 120_000)

  it("the testing guide's world and rule example compiles as written against the packed package", async () => {
    const guide = readFileSync(join(ROOT, 'docs', 'guides', 'testing-an-integration.md'), 'utf8')
    const example = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.includes("extends: 'default'"))
    expect(example).toBeDefined()
    const r = await consumer('guide-world', { lib: ['ES2022'], types: ['node'] }, `${example}\nexport {}\n`)
    expect(r.out).toBe('')
    expect(r.code).toBe(0)
  }, 120_000)

  it('a world object with extends: "default" is layered on the default world, in createSandbox and startSandbox; world with fixtures is refused', async () => {
    const script = `import { createClient, createSandbox, startSandbox } from 'dcb-sandbox'
const world = ${LAYER_WORLD}
const outcomes = async (sandbox) => {
  const init = (msisdn, country_code = 'my') => sandbox.init({ msisdn, service_code: 'STREAMPLUS', country_code })
  const redirect = (await init('359881234001', 'bg')).envelope.payload.redirect_url
  const { location } = await sandbox.consent(redirect, 'approve')
  return [(await init('60123456011')).envelope.message, (await init('60123456107')).envelope.message, location.replace(/=[0-9a-f-]{36}$/, '=ID')]
}
const inProcess = await outcomes(await createSandbox({ world }))
const again = await outcomes(await createSandbox({ world: await (await createSandbox({ world })).world() }))
const server = await startSandbox({ world, inMemory: true, port: 0 })
const served = await outcomes(createClient({ baseUrl: server.url }))
await server.close()
const both = await createSandbox({ world, fixtures: 'fixtures/scenarios/barred.json' }).catch((e) => e.code + ': ' + e.message)
console.log(JSON.stringify({ inProcess, again, served, both }))`
    const r = await run(process.execPath, ['--input-type=module', '-e', script], join(app, 'node_modules', 'dcb-sandbox'))
    const expected = ['NOT_ELIGIBLE', 'BARRED', 'https://shop.test/return?status=SUCCESS&subscription_id=ID']
    expect(JSON.parse(r.out)).toEqual({
      inProcess: expected,
      again: expected,
      served: expected,
      both: expect.stringMatching(/^BAD_REQUEST: give world or fixtures, not both/),
    })
  })

  it("startSandbox loads a world object as createSandbox does: with extends: 'default', the default world's records and rules name its file", async () => {
    const script = `import { createClient, createSandbox, startSandbox } from 'dcb-sandbox'
const world = ${LAYER_WORLD}
const sources = async (sandbox) => ({ rules: (await sandbox.rules.list()).rules.map((r) => r.id + ' ' + r.source), world: await sandbox.worldSources() })
const inProcess = await sources(await createSandbox({ world }))
const server = await startSandbox({ world, inMemory: true, port: 0 })
const served = await sources(createClient({ baseUrl: server.url }))
await server.close()
console.log(JSON.stringify({ inProcess, served, files: server.files }))`
    const r = await run(process.execPath, ['--input-type=module', '-e', script], join(app, 'node_modules', 'dcb-sandbox'))
    const { inProcess, served, files } = JSON.parse(r.out)
    expect(new Set(inProcess.rules.map((line: string) => line.split(' ')[1]))).toEqual(new Set(['world', 'fixtures/world.json']))
    expect(inProcess.rules).toContain('ticket world')
    expect(served).toEqual(inProcess)
    expect(files).toEqual([])
  })

  it('compiles the example with tsc --strict against the shipped declarations (no TS7016)', async () => {
    const r = await run(process.execPath, [join(MODULES, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--strict'], app)
    expect(r.out).toBe('')
    expect(r.code).toBe(0)
  }, 120_000)
})
