/**
 * The data file's lock on a disk with no room (a small tmpfs that is full; CI runs as root): the
 * start is refused by name and leaves no lock behind, and once there is room the next start works.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dcb, serve } from '../cli/run.js'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dcb-lock-full-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir])
})
afterAll(() => {
  execFileSync('umount', [dir])
  rmSync(dir, { recursive: true, force: true })
})

/** Fills the filesystem: files written until the next byte does not fit. */
function fillUp(file: string): void {
  for (let i = 0; ; i++) {
    try {
      writeFileSync(`${file}.${i}`, Buffer.alloc(i < 64 ? 4096 : 1))
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOSPC') return
      throw e
    }
  }
}

describe('the lock on a full disk', () => {
  // Ordered steps on one disk: the refused start, then the start once there is room.
  const dataFile = () => join(dir, 'sandbox.json')

  it('refuses the start naming ENOSPC without leaving a lock (empty or not) behind', async () => {
    const data = dataFile()
    fillUp(join(dir, 'fill'))
    const r = await dcb(['serve', '--data', data, '--port', '0', '--quiet'])
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe(`dcb: cannot lock ${data}: its lock file ${data}.lock cannot be written (ENOSPC: the disk is full)`)
    expect(readdirSync(dir).filter((f) => !f.startsWith('fill'))).toEqual([])
  })

  it('starts once there is room', async () => {
    for (const f of readdirSync(dir)) rmSync(join(dir, f))
    const s = await serve(['--data', dataFile()])
    expect((await fetch(`${s.url}/_sandbox/health`)).status).toBe(200)
    expect(await s.stop('SIGTERM')).toBe(0)
  })
})
