import { cpSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { defineConfig } from 'tsup'

/** In the CommonJS build, msw is required by src/library/msw-peer-require.ts (it says why when it cannot be). */
const mswByRequire = {
  name: 'msw-by-require',
  setup(build: { onResolve(o: { filter: RegExp }, f: () => { path: string }): void }) {
    build.onResolve({ filter: /\/msw-peer\.js$/ }, () => ({ path: resolve('src/library/msw-peer-require.ts') }))
  },
}

export default defineConfig([
  {
    entry: { cli: 'src/cli/main.ts', index: 'src/index.ts', msw: 'src/msw.ts', 'check-world': 'src/world/check-shipped.ts' },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    splitting: true,
    // dist/cjs is the other build's, written at the same time.
    clean: ['!cjs/**'],
    sourcemap: false,
    // Type declarations come from tsc (tsconfig.build.json: faster than a bundled .d.ts).
    dts: false,
    // The dependencies every start loads (commander, chalk, proxy-addr, re2js, and zod, loaded in the
    // background) are bundled: one chunk each instead of up to ninety files to resolve and read, about
    // 10 ms of `dcb serve`'s start. The others stay in node_modules, loaded by the commands that use
    // them: pg (the shared store), listhen, the prompts, lowdb (the file store), msw (a peer).
    external: ['pg', 'listhen', '@inquirer/prompts', 'lowdb', 'msw'],
    noExternal: ['commander', 'chalk', 'proxy-addr', 're2js', 'zod'],
    // commander and proxy-addr are CommonJS: their require() of Node's modules needs a require here.
    banner: { js: "import { createRequire as __dcbRequire } from 'node:module'; const require = __dcbRequire(import.meta.url);" },
    // The console's files (plain HTML, CSS, JavaScript) ship as they are, next to the bundle.
    onSuccess: async () => cpSync('src/console', 'dist/console', { recursive: true }),
  },
  {
    // The library's entries for require() (CommonJS suites: jest, Node without require(esm)); the CLI
    // stays ESM. dist/cjs/package.json makes the declarations copied there CommonJS.
    entry: { index: 'src/index.ts', msw: 'src/msw.ts' },
    outDir: 'dist/cjs',
    format: ['cjs'],
    target: 'node20',
    platform: 'node',
    // One file per entry, as esbuild writes CommonJS (tsup's split CommonJS goes through sucrase, which
    // rewrote a class field named as an export). The msw entry imports none of the library.
    splitting: false,
    clean: true,
    sourcemap: false,
    dts: false,
    // lowdb and its steno are ESM only (the file store of startSandbox loads them): bundled, so
    // require() never meets an ES module. Other dependencies ship CommonJS and stay external.
    noExternal: ['lowdb', 'steno'],
    // import() of a dependency left in CommonJS is an ES module load (jest refuses it): require() instead.
    esbuildOptions: (options) => {
      options.supported = { ...options.supported, 'dynamic-import': false }
    },
    // import.meta.url (the package's folder, the console's files) as the bundle's file URL.
    define: { 'import.meta.url': 'importMetaUrl' },
    inject: ['scripts/cjs-import-meta.js'],
    esbuildPlugins: [mswByRequire],
    onSuccess: async () => writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n'),
  },
])
