/**
 * The packed package in a CommonJS project, as a merchant's CommonJS suite loads it: plain require()
 * with and without require(esm) (Node 20.11-20.18 and 22.11 have none; --no-experimental-require-module
 * stands for them), the repository's jest 30 with its default config as a subprocess, and tsc with
 * "module": "node16". The library reference's examples (CommonJS and jest) run as written. msw 2.15
 * (the repository's msw) needs require(esm) for its ES-module-only dependencies; msw 2.11.2 (msw-2.11)
 * is CommonJS throughout.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { LIBRARY_EXPORTS, MODULES, packedConsumer, ROOT, run } from './packed.js'

const NO_REQUIRE_ESM = '--no-experimental-require-module'
const JEST = join(MODULES, 'jest', 'bin', 'jest.js')
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
/** Jest requires ES modules in its ESM mode from Node 24.9 (vm modules that evaluate synchronously). */
const jestRequiresEsm = major > 24 || (major === 24 && minor >= 9)

/** The code blocks of the library reference's section "CommonJS and jest" in one language, in order. */
function examples(lang: 'js' | 'ts'): string[] {
  const page = readFileSync(join(ROOT, 'docs', 'reference', 'library.md'), 'utf8')
  const start = page.indexOf('\n## CommonJS and jest\n')
  const end = page.indexOf('\n## ', start + 1)
  const section = page.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!)
}

/** The main entry by require(): an OTP flow in process, a refused option, a server on a data file (the file store), its console. */
const MAIN = `const fs = require('node:fs')
const lib = require('dcb-sandbox')
;(async () => {
  const sandbox = await lib.createSandbox({ clock: '2026-01-31T00:00:00' })
  const post = (op, body) => sandbox.fetch('http://localhost/subscriptions/' + op, { method: 'POST',
    headers: { 'API-KEY': 'sandbox-demo-key', 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).then((res) => res.json())
  const init = await post('init', { msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' })
  const { otp } = await sandbox.otp('60123456011')
  const verify = await post('verify', { verif_request_id: init.payload.verif_request_id, otp })
  const refused = await lib.createSandbox({ clok: '2026-01-31T00:00:00' }).then(() => 'taken', (e) => e instanceof lib.SandboxError && e.code)
  const sources = [...new Set((await sandbox.rules.list()).rules.map((r) => r.source))]
  const server = await lib.startSandbox({ port: 0, data: 'data/sandbox.json' })
  const page = await fetch(server.url + '/')
  const served = await lib.createClient({ baseUrl: server.url }).init({ msisdn: '60123456012', service_code: 'STREAMPLUS', country_code: 'my' })
  await server.close()
  console.log(JSON.stringify({ entry: require.resolve('dcb-sandbox').split('dcb-sandbox/')[1], exports: Object.keys(lib).sort(), verify: verify.status,
    refused, sources, console: [page.status, page.headers.get('content-type')], served: served.envelope.status, data: fs.existsSync('data/sandbox.json') }))
})()`

const MAIN_OUT = {
  entry: 'dist/cjs/index.cjs',
  exports: LIBRARY_EXPORTS,
  verify: 'SUCCESS',
  refused: 'BAD_REQUEST',
  sources: ['fixtures/world.json'],
  console: [200, 'text/html; charset=utf-8'],
  served: 'SUCCESS',
  data: true,
}

/** dcb-sandbox/msw by require(), with msw's setupServer and the global fetch. */
const MSW = `const { createSandbox } = require('dcb-sandbox')
const { sandboxHandlers } = require('dcb-sandbox/msw')
const { setupServer } = require('msw/node')
;(async () => {
  const sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
  const server = setupServer(...sandboxHandlers(sandbox, { baseUrl: 'https://api.carrier.test/v1' }))
  server.listen({ onUnhandledRequest: 'error' })
  const post = (op, body) => fetch('https://api.carrier.test/v1/subscriptions/' + op, { method: 'POST',
    headers: { 'API-KEY': 'sandbox-demo-key', 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).then((res) => res.json())
  const init = await post('init', { msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' })
  const { otp } = await sandbox.otp('60123456011')
  const verify = await post('verify', { verif_request_id: init.payload.verif_request_id, otp })
  server.close()
  console.log(JSON.stringify({ entry: require.resolve('dcb-sandbox/msw').split('dcb-sandbox/')[1], verify: verify.status }))
})()`

/** Not in the docs: startSandbox on a data file (the file store's lowdb, bundled) and a client, under jest. */
const SERVER_TEST = `const { createClient, startSandbox } = require('dcb-sandbox')
test('a server on a data file, through a client', async () => {
  const server = await startSandbox({ port: 0, data: require('node:path').join(__dirname, 'data', 'jest.json'), clock: '2026-01-31T00:00:00' })
  const init = await createClient({ baseUrl: server.url }).init({ msisdn: '60123456013', service_code: 'STREAMPLUS', country_code: 'my' })
  await server.close()
  expect(init.envelope.status).toBe('SUCCESS')
})
`

/** The docs' two jest files and the server one, written into the project; jest run there with these node flags. */
function jest(app: string, nodeFlags: string[] = []) {
  const [withFetch, withMsw] = examples('js')
  writeFileSync(join(app, 'subscribe.test.js'), withFetch!)
  writeFileSync(join(app, 'subscribe-msw.test.js'), withMsw!)
  writeFileSync(join(app, 'server.test.js'), SERVER_TEST)
  return run(process.execPath, [...nodeFlags, JEST, '--rootDir', app, '--no-watchman', '--cacheDirectory', join(app, '..', 'jest-cache')], app)
}

/** tsc on the docs' TypeScript example in the project ("module": "node16", strict, skipLibCheck as given). */
function tsc(app: string, skipLibCheck: boolean) {
  writeFileSync(join(app, 'carrier.ts'), examples('ts')[0]!)
  const compilerOptions = { module: 'node16', moduleResolution: 'node16', target: 'ES2022', strict: true, noEmit: true, types: ['node'], skipLibCheck }
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['carrier.ts'] }))
  return run(process.execPath, [join(MODULES, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], app)
}

describe('the packed package in a CommonJS project, with msw 2.15', () => {
  const packed = packedConsumer({ commonjs: true })
  const app = packed.app
  const msw215 = /^Error: dcb-sandbox\/msw: require\('msw'\) cannot load msw 2\.15\.0: it needs rettime, an ES module only, and /m

  it('ships the CommonJS build beside the ES modules, with its declarations', () => {
    for (const f of ['dist/cjs/index.cjs', 'dist/cjs/msw.cjs', 'dist/cjs/package.json', 'dist/cjs/types/index.d.ts', 'dist/cjs/types/msw.d.ts'])
      expect(packed.files).toContain(f)
  })

  it.each([
    ['with require(esm)', []],
    ['without require(esm)', [NO_REQUIRE_ESM]],
  ])('require() %s loads the CommonJS build, which runs the flow, the server and the client', async (_, flags) => {
    const r = await run(process.execPath, [...flags, '-e', MAIN], app)
    expect([flags, r.stderr]).toEqual([flags, ''])
    expect(JSON.parse(r.stdout)).toEqual(MAIN_OUT)
  })

  it('dcb-sandbox/msw works where Node has require(esm)', async () => {
    const ok = await run(process.execPath, ['-e', MSW], app)
    expect(ok.stderr).toBe('')
    expect(JSON.parse(ok.stdout)).toEqual({ entry: 'dist/cjs/msw.cjs', verify: 'SUCCESS' })
  })

  it('dcb-sandbox/msw without require(esm) fails with one error saying why, naming the msw that works', async () => {
    const refused = await run(process.execPath, [NO_REQUIRE_ESM, '-e', MSW], app)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(msw215)
    expect(refused.stderr).toContain(`Node ${process.version} runs with require(esm) turned off (--no-experimental-require-module).`)
    expect(refused.stderr).toContain('msw 2.11.2 and earlier are CommonJS throughout')
  })

  describe('one process with both builds', () => {
    let r: { code: number; out: string; stdout: string; stderr: string }
    let said: { handlers: number; refused: unknown[] }
    // One script run for both tests: each reads its own part of what it printed.
    beforeAll(async () => {
      const script = `const cjs = require('dcb-sandbox')
const { sandboxHandlers } = require('dcb-sandbox/msw')
;(async () => {
  const esm = await import('dcb-sandbox')
  const handlers = sandboxHandlers(await esm.createSandbox(), { baseUrl: 'https://api.carrier.test' }).length
  const refused = await esm.createSandbox({ clok: 1 }).catch((e) => [e instanceof cjs.SandboxError, e instanceof esm.SandboxError, e.code])
  console.log(JSON.stringify({ handlers, refused }))
})()`
      r = await run(process.execPath, ['-e', script], app)
      said = JSON.parse(r.stdout) as typeof said
    })

    it('the ES module sandbox serves the CommonJS handlers', () => {
      expect(r.stderr).toBe('')
      expect(said.handlers).toBe(1)
    })

    it("SandboxError is a class of each build, an error of one not an instance of the other's", () => {
      expect(said.refused).toEqual([false, true, 'BAD_REQUEST'])
    })
  })

  describe("jest's default config", () => {
    let r: { code: number; out: string }
    // One jest run for these tests: each reads the lines of its own file.
    beforeAll(async () => {
      r = await jest(app)
    }, 120_000)

    it("runs the docs' sandbox.fetch example", () => {
      expect(r.out).toMatch(/PASS \.?\/?subscribe\.test\.js/)
    })

    it('runs a server on a data file', () => {
      expect(r.out).toMatch(/PASS \.?\/?server\.test\.js/)
    })

    it("fails the docs' msw example with the error saying why", () => {
      expect(r.out).toMatch(/FAIL \.?\/?subscribe-msw\.test\.js/)
      expect(r.out).toMatch(
        /^\s+dcb-sandbox\/msw: require\('msw'\) cannot load msw 2\.15\.0: it needs rettime, an ES module only, and jest does not require\(\) ES modules here/m,
      )
    })

    it('passes two tests of three, exiting 1', () => {
      expect(r.out).toMatch(/Tests:\s+2 passed, 2 total/)
      expect(r.code).toBe(1)
    })
  })

  it(`jest in its ESM mode (node --experimental-vm-modules) runs the msw example ${jestRequiresEsm ? 'on this Node (24.9+)' : 'only on Node 24.9+: not here'}`, async () => {
    const r = await jest(app, ['--experimental-vm-modules'])
    if (jestRequiresEsm) {
      expect(r.out).toMatch(/Tests:\s+3 passed, 3 total/)
      expect(r.code).toBe(0)
    } else {
      expect(r.out).toMatch(/^\s+dcb-sandbox\/msw: require\('msw'\) cannot load msw 2\.15\.0: .* jest does not require\(\) ES modules here/m)
      expect(r.code).toBe(1)
    }
  }, 120_000)

  it("tsc (node16) with skipLibCheck compiles the docs' TypeScript example clean", async () => {
    const skipped = await tsc(app, true)
    expect(skipped.out).toBe('')
    expect(skipped.code).toBe(0)
  }, 120_000)

  it("tsc (node16) without skipLibCheck finds errors in the docs' TypeScript example inside msw's declarations only", async () => {
    const strict = await tsc(app, false)
    const errors = strict.out.split('\n').filter((line) => / error TS/.test(line))
    expect(errors.length).toBeGreaterThan(0)
    expect(errors.filter((line) => !/node_modules\/msw\/.*error TS1479:/.test(line))).toEqual([])
  }, 120_000)
})

describe('the packed package in a CommonJS project, with msw 2.11.2', () => {
  const app = packedConsumer({ commonjs: true, links: { msw: 'msw-2.11' } }).app

  it('dcb-sandbox/msw loads by require() without require(esm)', async () => {
    const r = await run(process.execPath, [NO_REQUIRE_ESM, '-e', MSW], app)
    expect(r.stderr).toBe('')
    expect(JSON.parse(r.stdout)).toEqual({ entry: 'dist/cjs/msw.cjs', verify: 'SUCCESS' })
  })

  it("jest's default config runs all the docs' examples", async () => {
    const r = await jest(app)
    expect(r.out).toMatch(/Tests:\s+3 passed, 3 total/)
    expect(r.code).toBe(0)
  }, 120_000)

  it("tsc (node16, strict, no skipLibCheck) compiles the docs' TypeScript example", async () => {
    const r = await tsc(app, false)
    expect(r.out).toBe('')
    expect(r.code).toBe(0)
  }, 120_000)
})
