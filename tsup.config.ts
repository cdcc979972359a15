import { cpSync } from 'node:fs'
import { defineConfig } from 'tsup'

export default defineConfig({
  entry: { cli: 'src/cli/main.ts', index: 'src/index.ts', msw: 'src/msw.ts', 'check-world': 'src/world/check-shipped.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  splitting: true,
  clean: true,
  sourcemap: false,
  // Type declarations come from tsc (tsconfig.build.json: faster than a bundled .d.ts).
  dts: false,
  // Dependencies stay in node_modules, loaded per subcommand.
  skipNodeModulesBundle: true,
  // The console's files (plain HTML, CSS, JavaScript) ship as they are, next to the bundle.
  onSuccess: async () => cpSync('src/console', 'dist/console', { recursive: true }),
})
