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
    // Dependencies stay in node_modules, loaded per subcommand.
    skipNodeModulesBundle: true,
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
