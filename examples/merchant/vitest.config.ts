import { defineConfig } from 'vitest/config'

// The gate: after every test file has run, test/gate.ts checks the suite's coverage as a whole.
export default defineConfig({ test: { globalSetup: ['test/gate.ts'] } })
