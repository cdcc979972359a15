import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
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

  it('runs a check where a command is not enough: a python3 without pytest lacks python3-pytest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dcb-needs-'))
    try {
      // A python3 first on PATH whose every import fails, as one without pytest fails `import pytest`;
      // Debian's is the same (this machine's may have pytest).
      writeFileSync(join(dir, 'python3'), '#!/bin/sh\nexit 1\n')
      chmodSync(join(dir, 'python3'), 0o755)
      const python = join(dir, 'python3')
      const r = run({ PATH: `${dir}${delimiter}${process.env.PATH}`, DCB_TEST_NEEDS_NO_INSTALL: '1', DCB_TEST_NEEDS_SYSTEM_PYTHON: python })
      expect(r.status).toBe(1)
      expect(r.stderr).toContain('the tests need python3-pytest: install with `sudo apt-get install python3-pytest`')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
