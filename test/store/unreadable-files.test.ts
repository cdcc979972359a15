/**
 * Files in the data folder that cannot be read as what their name says (a folder named like a
 * write-ahead log, a file where the sessions folder goes), or written (a write-ahead log owned by another user),
 * refuse the start by name, through the binary, not as an unexpected error; nothing on disk
 * changes and no lock is left.
 */
import { spawn } from 'node:child_process'
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BIN, dcb } from '../cli/run.js'
import { tempDir } from '../helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

async function refuses(pattern: RegExp): Promise<void> {
  const before = readdirSync(tmp.dir, { recursive: true }).sort()
  const r = await dcb(['serve', '--data', join(tmp.dir, 'sandbox.json'), '--port', '0', '--quiet'])
  expect(r.code).toBe(1)
  const lines = r.stderr.trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(pattern)
  expect(lines[0]).not.toMatch(/unexpected error/)
  expect(readdirSync(tmp.dir, { recursive: true }).sort()).toEqual(before)
}

describe('unreadable store files refuse the start by name', () => {
  it('a folder named like a write-ahead log of the data file', async () => {
    mkdirSync(join(tmp.dir, 'sandbox.json.journal.3'))
    await refuses(/cannot read the write-ahead log .*sandbox\.json\.journal\.3 \(EISDIR/)
  })

  it("a folder named like the sessions' write-ahead log", async () => {
    mkdirSync(join(tmp.dir, 'sandbox.json.sessions', 'journal.2'), { recursive: true })
    await refuses(/cannot read the sessions' write-ahead log .*sandbox\.json\.sessions\/journal\.2 \(EISDIR/)
  })

  it("a folder named like a session's write-ahead log of the earlier layout (one per session)", async () => {
    mkdirSync(join(tmp.dir, 'sandbox.json.sessions', 'alice.json.journal.0'), { recursive: true })
    await refuses(/cannot read a session's write-ahead log .*sandbox\.json\.sessions\/alice\.json\.journal\.0 \(EISDIR/)
  })

  it('a file where the sessions folder goes', async () => {
    writeFileSync(join(tmp.dir, 'sandbox.json.sessions'), 'not a folder\n')
    await refuses(/cannot read the sessions folder .*sandbox\.json\.sessions \(ENOTDIR/)
  })
})

/** Whether every folder on the way to `file` lets others through and the file lets others run it. */
function othersMayRun(file: string): boolean {
  for (let p = file; ; p = dirname(p)) {
    if ((statSync(p).mode & 0o001) === 0) return false
    if (p === dirname(p)) return true
  }
}

/**
 * The Node that nobody may run: this one, or a copy of it where nobody reaches (CI's Node 24 is
 * installed in a folder only root may enter).
 */
let nobodysNode: string | undefined
let nodeCopyDir: string | undefined
function nodeForNobody(): string {
  if (nobodysNode) return nobodysNode
  if (othersMayRun(process.execPath)) return (nobodysNode = process.execPath)
  nodeCopyDir = mkdtempSync(join(tmpdir(), 'dcb-node-'))
  chmodSync(nodeCopyDir, 0o755)
  nobodysNode = join(nodeCopyDir, 'node')
  copyFileSync(process.execPath, nobodysNode)
  chmodSync(nobodysNode, 0o755)
  return nobodysNode
}
afterAll(() => {
  if (nodeCopyDir) rmSync(nodeCopyDir, { recursive: true, force: true })
})

/** The binary run as the unprivileged user nobody (the tests run as root, who may write any file). */
function serveAsNobody(data: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(nodeForNobody(), [BIN, 'serve', '--data', data, '--port', '0', '--quiet'], {
      uid: 65534,
      gid: 65534,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stderr }))
  })
}

describe('a write-ahead log that cannot be written refuses the start by name', () => {
  /** A data folder the server's user owns, with a write-ahead log it may read but not write (it has a torn last line to cut). */
  function folderWith(journal: string, text: string): { data: string; file: string } {
    chmodSync(tmp.dir, 0o755)
    const folder = join(tmp.dir, 'data')
    mkdirSync(folder)
    const file = join(folder, journal)
    mkdirSync(join(file, '..'), { recursive: true })
    for (const d of [folder, join(file, '..')]) chownSync(d, 65534, 65534)
    writeFileSync(file, text, { mode: 0o644 })
    return { data: join(folder, 'sandbox.json'), file }
  }

  it("the data file's write-ahead log", async () => {
    const { data, file } = folderWith('sandbox.json.journal.0', '{"s":1,"ch":[]}\n{"s":2,"ch":[')
    const r = await serveAsNobody(data)
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(/^dcb: cannot cut the torn last line of .*sandbox\.json\.journal\.0 \(EACCES/)
    expect(readFileSync(file, 'utf8')).toBe('{"s":1,"ch":[]}\n{"s":2,"ch":[')
  })

  it("the sessions' write-ahead log", async () => {
    const { data, file } = folderWith('sandbox.json.sessions/journal.0', '{"n":"a","s":0,"ch":[]}\n{"n"')
    const r = await serveAsNobody(data)
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(/^dcb: cannot cut the torn last line of .*sandbox\.json\.sessions\/journal\.0 \(EACCES/)
    expect(readFileSync(file, 'utf8')).toBe('{"n":"a","s":0,"ch":[]}\n{"n"')
  })

  it('a write-ahead log with no torn line: it cannot be opened for writing', async () => {
    // The log every session writes (the default one's too): the data file's own write-ahead log is only read, and moved.
    const { data } = folderWith('sandbox.json.sessions/journal.0', '{"n":"a","s":0,"ch":[]}\n')
    const r = await serveAsNobody(data)
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(/^dcb: cannot open the sessions' write-ahead log in .*sandbox\.json\.sessions for writing: EACCES/)
  })
})
