#!/usr/bin/env node
// Thin entry: loads the built CLI (npm ci builds it through the prepare script).
import module from 'node:module'

// Node 22.1+ keeps the compiled modules in its compile cache (under the OS's temp folder), so every
// start after the first compiles less; Node 20 has no such cache and starts as before.
module.enableCompileCache?.()

import('../dist/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli.js')) {
    console.error('dcb: the CLI is not built; run `npm run build` in the dcb-sandbox folder')
  } else {
    console.error(`dcb: ${err && err.message ? err.message : err}`)
  }
  process.exit(70)
})
