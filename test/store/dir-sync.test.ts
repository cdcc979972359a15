/**
 * The folder's fsync, which makes a renamed snapshot and a new write-ahead log's name durable: a compaction
 * whose folder cannot be synced keeps the write-ahead logs (a power loss could bring the old snapshot back
 * without them), and no line is acknowledged in a new write-ahead log before its name is durable. Real
 * files; the faults come through the store's fault seam (StoreIo), below the store.
 */
import { existsSync, readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { State } from '../../src/core/state.js'
import { Tx } from '../../src/core/tx.js'
import { FileStore } from '../../src/store/file.js'
import { SessionWal } from '../../src/store/session-wal.js'
import type { StoreIo } from '../../src/store/wal.js'
import { tempDir } from '../helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const eio = () => Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })

/** A seam whose folder fsync fails while `failDir` is set; it records the syncs and writes in order. */
function seam(dir: string) {
  const events: string[] = []
  const s = {
    failDir: false,
    failSnapshot: false,
    events,
    io: {
      beforeWrite(file) {
        events.push(`write ${basename(file)}`)
        if (file.endsWith('.tmp') && s.failSnapshot) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
      },
      beforeSync(file) {
        events.push(`sync ${file === dir ? '<folder>' : basename(file)}`)
        if (file === dir && s.failDir) throw eio()
      },
    } as StoreIo,
  }
  return s
}

function counter(state: State, id: string, v: number) {
  const tx = new Tx(state)
  tx.put('counters', id, v)
  return tx.changes
}

describe('the data file: a folder that cannot be synced', () => {
  it('a compaction that fails there keeps the write-ahead log it would replace, so a restart recovers every write', async () => {
    const path = join(tmp.dir, 'sandbox.json')
    const f = seam(tmp.dir)
    const state = new State()
    const store = new FileStore(path, { io: f.io })
    await store.open(state)
    await store.append(counter(state, 'a', 1))
    f.failDir = true
    await expect(store.compact()).rejects.toThrow(/EIO/)
    expect(existsSync(`${path}.journal.0`)).toBe(true)
    f.failDir = false
    await store.append(counter(state, 'b', 2))
    await store.close()

    const again = new State()
    const back = new FileStore(path)
    await back.open(again)
    expect(Object.fromEntries(again.counters)).toEqual({ a: 1, b: 2 })
    await back.close()
  })

  it('acknowledges no line in a new write-ahead log before the folder holding its name is synced', async () => {
    const path = join(tmp.dir, 'sandbox.json')
    const f = seam(tmp.dir)
    const state = new State()
    const store = new FileStore(path, { io: f.io })
    await store.open(state)
    await store.append(counter(state, 'a', 1))
    // A compaction that fails at its snapshot leaves the new write-ahead log in use: the next write goes there.
    f.failSnapshot = true
    f.events.length = 0
    await expect(store.compact()).rejects.toThrow(/ENOSPC/)
    await store.append(counter(state, 'b', 2))
    const firstLine = f.events.indexOf('write sandbox.json.journal.1')
    expect(firstLine).toBeGreaterThan(0)
    expect(f.events.slice(0, firstLine)).toContain('sync <folder>')
    f.failSnapshot = false
    await store.close()
  })
})

describe('the sessions: a folder that cannot be synced', () => {
  it('a compaction that fails there keeps the write-ahead log it would replace, so a restart recovers every write', async () => {
    const folder = join(tmp.dir, 'sandbox.json.sessions')
    const f = seam(folder)
    const j = new SessionWal(folder, { io: f.io })
    await j.open()
    const a = await j.store('a')
    await a.append(counter(a.state, 'x', 1))
    f.failDir = true
    await expect(j.compact()).rejects.toThrow(/EIO/)
    expect(readdirSync(folder)).toContain('journal.0')
    f.failDir = false
    await a.append(counter(a.state, 'y', 2))
    await j.close()

    const again = new SessionWal(folder)
    expect(await again.open()).toEqual(['a'])
    expect(Object.fromEntries(again.stateOf('a')!.counters)).toEqual({ x: 1, y: 2 })
    await again.close()
  })

  it('acknowledges no line in a new write-ahead log before the folder holding its name is synced', async () => {
    const folder = join(tmp.dir, 'sandbox.json.sessions')
    const f = seam(folder)
    const j = new SessionWal(folder, { io: f.io })
    await j.open()
    const a = await j.store('a')
    await a.append(counter(a.state, 'x', 1))
    f.failSnapshot = true
    f.events.length = 0
    await expect(j.compact()).rejects.toThrow(/ENOSPC/)
    await a.append(counter(a.state, 'y', 2))
    const firstLine = f.events.indexOf('write journal.1')
    expect(firstLine).toBeGreaterThan(0)
    expect(f.events.slice(0, firstLine)).toContain('sync <folder>')
    f.failSnapshot = false
    await j.close()
  })
})
