#!/usr/bin/env node
// Thin entry: loads the built CLI (npm ci builds it through the prepare script).
import('../dist/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli.js')) {
    console.error('dcb: the CLI is not built; run `npm run build` in the dcb-sandbox folder')
  } else {
    console.error(`dcb: ${err && err.message ? err.message : err}`)
  }
  process.exit(70)
})
