/**
 * Taking over a stale lock writes twice (the takeover's guard, then this server's lock line to rename
 * over the stale lock). A disk that fills between the two refuses the start with one line naming the
 * lock file and the cause, leaves the stale lock as it was and nothing of its own beside it, and once
 * there is room the next start takes the lock over. A small tmpfs (CI runs as root) with one page
 * free: the guard's line takes it, the second line finds none (ENOSPC).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dcb, serve } from '../cli/run.js'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dcb-lock-takeover-full-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir])
})
afterAll(() => {
  execFileSync('umount', [dir])
  rmSync(dir, { recursive: true, force: true })
})

/** Fills the filesystem with pages (4 KiB files until the next one does not fit), then frees `free` of them. */
function leavePages(free: number): void {
  const made: string[] = []
  for (let i = 0; ; i++) {
    const file = join(dir, `fill.${i}`)
    try {
      writeFileSync(file, Buffer.alloc(4096))
      made.push(file)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e
      rmSync(file, { force: true })
      break
    }
  }
  for (const file of made.slice(-free)) rmSync(file)
}

describe('taking over a stale lock on a disk that fills meanwhile', () => {
  // Ordered steps on one disk: the refused takeover, then the takeover once there is room.
  const dataFile = () => join(dir, 'sandbox.json')
  const lockFile = () => `${dataFile()}.lock`
  // A lock of this host from another boot of the machine: stale.
  const staleLine = () => `4242 - host=${encodeURIComponent(hostname())} boot=another-boot token=00000000000000ff\n`

  it("refuses the start in one line naming the lock file's ENOSPC, touching nothing of the stale lock", async () => {
    const data = dataFile()
    const lock = lockFile()
    const stale = staleLine()
    writeFileSync(lock, stale)
    leavePages(1)

    const r = await dcb(['serve', '--data', data, '--port', '0', '--quiet'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`dcb: cannot lock ${data}: its lock file ${lock} cannot be written (ENOSPC: the disk is full); the stale lock is left as it was\n`)
    expect(readFileSync(lock, 'utf8')).toBe(stale)
    expect(readdirSync(dir).filter((f) => !f.startsWith('fill.'))).toEqual(['sandbox.json.lock'])
  })

  it('takes the stale lock over once there is room', async () => {
    for (const f of readdirSync(dir).filter((f) => f.startsWith('fill.'))) rmSync(join(dir, f))
    const s = await serve(['--data', dataFile()])
    expect((await fetch(`${s.url}/_sandbox/health`)).status).toBe(200)
    expect(readFileSync(lockFile(), 'utf8')).not.toBe(staleLine())
    expect(await s.stop('SIGTERM')).toBe(0)
  })
})
