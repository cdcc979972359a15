/**
 * The package as a consumer installs it: `npm pack` of the build as it is (no second build), the
 * tarball unpacked into a copy of `examples/merchant` (or a bare CommonJS project) as
 * `node_modules/dcb-sandbox`, the other packages linked from this repository's node_modules (offline,
 * fast). Call `packedConsumer()` inside a `describe`: it packs before the file's tests and removes the
 * folder after them.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect } from 'vitest'
import { tempDir } from '../helpers.js'

export const ROOT = join(import.meta.dirname, '..', '..')
export const MODULES = join(ROOT, 'node_modules')

/** What the package's main entry exports, by name, sorted: the same through import and require. */
export const LIBRARY_EXPORTS = [
  'CONTROL_ERRORS',
  'DEFAULT_BASE_URL',
  'DEFAULT_HOST',
  'DEFAULT_PORT',
  'DEMO_API_KEY',
  'FixtureError',
  'SandboxError',
  'coverageJUnit',
  'coverageVerdict',
  'createClient',
  'createSandbox',
  'mergeCoverage',
  'startSandbox',
]

export function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; out: string; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(cmd, args, { cwd, env: { ...process.env, CI: 'true', NO_COLOR: '1' }, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr, stdout, stderr }),
    ),
  )
}

export interface ConsumerOptions {
  /** A bare CommonJS project (a package.json without "type") instead of a copy of examples/merchant. */
  commonjs?: boolean
  /** A package linked from another folder of this repository's node_modules: `{ msw: 'msw-2.11' }`. */
  links?: Record<string, string>
}

export interface PackedConsumer {
  /** The consumer project: a copy of examples/merchant with the package installed. */
  readonly app: string
  /** The files the tarball holds (read once it is packed). */
  readonly files: string[]
  /** Runs an ES module script in the consumer project, importing the package as its own code would. */
  script(code: string): Promise<{ code: number; out: string; stdout: string }>
}

export function packedConsumer(opts: ConsumerOptions = {}): PackedConsumer {
  const t = tempDir()
  const app = join(t.dir, 'merchant')
  let files: string[] = []
  beforeAll(async () => {
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', t.dir], ROOT)
    expect(packed.code).toBe(0)
    const info = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[]
    files = info[0]!.files.map((f) => f.path)
    if (opts.commonjs) {
      mkdirSync(app)
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'commonjs-merchant', private: true }))
    } else cpSync(join(ROOT, 'examples', 'merchant'), app, { recursive: true })
    const installed = join(app, 'node_modules', 'dcb-sandbox')
    mkdirSync(installed, { recursive: true })
    expect((await run('tar', ['-xzf', join(t.dir, info[0]!.filename), '-C', installed, '--strip-components=1'], t.dir)).code).toBe(0)
    for (const name of readdirSync(MODULES)) {
      if (name === 'dcb-sandbox' || name === '.package-lock.json') continue
      symlinkSync(join(MODULES, opts.links?.[name] ?? name), join(app, 'node_modules', name))
    }
  }, 60_000)
  afterAll(() => t.cleanup())
  return {
    app,
    get files() {
      return files
    },
    script: (code) => run(process.execPath, ['--input-type=module', '-e', code], app),
  }
}

/** The tarball's `dcb serve` (`bin`) on a free port in memory, run in `cwd` with `args` more; answers its URL once it prints it. */
export function servePacked(bin: string, cwd: string, args: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--in-memory', ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    const seen = (d: Buffer) => {
      out += d
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) resolve({ url: m[1]!, child })
    }
    child.stdout.on('data', seen)
    child.stderr.on('data', seen)
    child.on('exit', (code) => reject(new Error(`dcb serve exited ${code}: ${out}`)))
  })
}
