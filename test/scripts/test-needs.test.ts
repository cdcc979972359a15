import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'test-needs.mjs')
const run = (env: Record<string, string>) => spawnSync(process.execPath, [SCRIPT], { env: { ...process.env, ...env }, encoding: 'utf8' })

describe('npm test checks what npm does not install', () => {
  it('passes silently when every program is there', () => {
    const r = run({})
    expect(r.status).toBe(0)
    expect(r.stderr).toBe('')
  })

  it('stops at once with one line naming what to install when it cannot install it', () => {
    const r = run({ DCB_TEST_NEEDS_MISSING: 'chromium,jq', DCB_TEST_NEEDS_NO_INSTALL: '1' })
    expect(r.status).toBe(1)
    expect(r.stderr.trim().split('\n')).toEqual([
      "npm test: the tests need chromium, jq: install with `sudo apt-get install chromium jq` (Debian's packages), then run again",
    ])
  })
})
