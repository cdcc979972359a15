/**
 * The scripting guide's pytest example (examples/pytest/test_otp_flow.py) is the file the guide shows,
 * and it passes: python3 and pytest run it against the single executable (dist/dcb-linux-x64, which
 * `npm run build:binary` writes). A missing executable or pytest fails here: it is never skipped.
 */
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const EXE = resolve('dist', 'dcb-linux-x64')
const EXAMPLE = 'examples/pytest/test_otp_flow.py'

describe("the scripting guide's pytest example", () => {
  it('is the file the guide shows', () => {
    const guide = readFileSync('docs/guides/scripting-and-ci.md', 'utf8')
    expect(guide).toContain('```python\n' + readFileSync(EXAMPLE, 'utf8') + '```\n')
  })

  it('passes under pytest against the single executable', async () => {
    expect(existsSync(EXE), `${EXE} is missing: npm run build:binary writes it`).toBe(true)
    const run = await new Promise<{ code: number; out: string }>((done) =>
      execFile(
        pythonWithPytest(),
        ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', EXAMPLE],
        { env: { ...process.env, DCB_EXE: EXE, PYTHONDONTWRITEBYTECODE: '1' }, timeout: 60_000 },
        (err, stdout, stderr) => done({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
      ),
    )
    expect(run.out).toMatch(/\b2 passed\b/)
    expect(run.code).toBe(0)
  }, 90_000)
})

/** The python3 on the PATH when it has pytest, else Debian's (where npm test installs python3-pytest). */
function pythonWithPytest(): string {
  try {
    execFileSync('python3', ['-c', 'import pytest'], { stdio: 'ignore' })
    return 'python3'
  } catch {
    return '/usr/bin/python3'
  }
}
