/**
 * The scripting guide's "A server for one job" recipe, run as written by bash with `dcb` on the PATH
 * (the binary as a subprocess): it waits for the URL, the server answers, and the server is stopped
 * when the script ends; a start that fails ends the wait with exit 1 instead of looping forever.
 */
import { spawn } from 'node:child_process'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { BIN } from './run.js'

const GUIDE = join(import.meta.dirname, '..', '..', 'docs', 'guides', 'scripting-and-ci.md')

/** The first sh block of the guide's section "A server for one job". */
function recipe(): string {
  const section = readFileSync(GUIDE, 'utf8').split('## A server for one job')[1]!
  return /```sh\n([\s\S]*?)```/.exec(section)![1]!
}

const t = tempDir()
afterAll(() => t.cleanup())
// `dcb` as an installed package puts it on the PATH: the binary itself (exec, so $! is the server).
writeFileSync(join(t.dir, 'dcb'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
chmodSync(join(t.dir, 'dcb'), 0o755)

/** Runs the script in bash to its end; a hang is killed (code null) rather than failing the run by time. */
function bash(script: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd: t.dir,
      env: { ...process.env, NO_COLOR: '1', PATH: `${t.dir}:${process.env.PATH}`, DCB_STORE: undefined, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(guard)
      resolve({ code, stdout, stderr })
    })
  })
}

describe('scripting guide: a server for one job', () => {
  it('gives the script a server answering at the URL it waited for, stopped when the script ends', async () => {
    const r = await bash(`${recipe()}\necho "$URL"\ndcb clock --base-url "$URL" --json > clock.json && echo answered\necho "$DCB_PID"\n`)
    expect(r.stderr).not.toMatch(/^dcb: /m) // (a progress line of a slow answer may be there)
    expect(r.code).toBe(0)
    const [url, answered, pid] = r.stdout.trim().split('\n')
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(answered).toBe('answered')
    expect(JSON.parse(readFileSync(join(t.dir, 'clock.json'), 'utf8'))).toHaveProperty('now')
    // The trap waited for it: the server's process is gone (its port may already serve another test's server).
    expect(() => process.kill(Number(pid), 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }))
  }, 90_000)

  it('a start that fails ends the wait: exit 1 with the server’s one line, never a loop that waits forever', async () => {
    // A CI environment that names a shared store, with the recipe's --in-memory: dcb serve refuses to start.
    // In the folder of the run above, whose dcb-url.txt is still there: a stale URL must not pass the wait.
    const r = await bash(`${recipe()}\necho "not reached"\n`, { DCB_STORE: 'postgres://ci:ci@127.0.0.1:1/dcb' })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^dcb: DCB_STORE keeps the state in PostgreSQL: it cannot go with --in-memory/)
  }, 90_000)
})
