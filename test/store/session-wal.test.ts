import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { State } from '../../src/core/state.js'
import { Tx } from '../../src/core/tx.js'
import { FileStore } from '../../src/store/file.js'
import { SessionWal, type SessionStore } from '../../src/store/session-wal.js'
import { linesEnd } from '../../src/store/wal.js'
import { tempDir } from '../helpers.js'
import { counters, crash, put } from './session-helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

describe('SessionWal: the sessions in one write-ahead log', () => {
  it('brings back every acknowledged change of every session after a crash, in one write-ahead log file with no file per session', async () => {
    const folder = join(tmp.dir, 'db.json.sessions')
    const j = new SessionWal(folder)
    expect(await j.open()).toEqual([])
    const stores = await Promise.all(['a', 'b', 'c'].map((n) => j.store(n)))
    await Promise.all(stores.flatMap((s, k) => Array.from({ length: 20 }, (_, i) => put(s, `k${i}`, i * 10 + k))))
    const empty = await j.store('empty')
    void empty
    await crash(j)
    expect(readdirSync(folder)).toEqual(['journal.0'])

    const again = new SessionWal(folder)
    expect(await again.open()).toEqual(['a', 'b', 'c', 'empty'])
    expect(counters(again.stateOf('b'))).toMatchObject({ k0: 1, k19: 191 })
    expect(again.stateOf('b')!.counters.size).toBe(20)
    expect(again.stateOf('empty')!.counters.size).toBe(0)
    expect(again.recovered.replayed).toBe(60)
    await again.close()
  })

  describe('compaction after the write-ahead log passes the size of the sessions snapshots', () => {
    // One folder through a restart: the tests run in order.
    const own = tempDir()
    const folder = join(own.dir, 'db.json.sessions')
    const generation = () => Math.max(...readdirSync(folder).flatMap((f) => (f.startsWith('journal.') ? [Number(f.slice(8))] : [])))
    const bytes = (j: SessionWal) => (j as any).wal.bytes as number
    /** Appends until the write-ahead log holds `until` bytes or a compaction starts a generation; answers the most it held before. */
    const fill = async (j: SessionWal, s: SessionStore, until: number) => {
      const gen = generation()
      let most = 0
      for (let i = 0; bytes(j) < until && generation() === gen; i++) {
        await put(s, `filler-${i % 50}`, i)
        most = Math.max(most, bytes(j))
        await (j as any).compaction.running
      }
      return most
    }
    let j: SessionWal
    let big: SessionStore
    let size: number
    let gen: number
    beforeAll(async () => {
      j = new SessionWal(folder, { compactBytes: 2000 })
      await j.open()
      big = await j.store('big')
      // Snapshots of about 30 KB in all, far past compactBytes.
      for (let i = 0; i < 300; i++) await put(big, `a-counter-with-a-long-name-${i}`.padEnd(90, '-'), i)
      await (j as any).compaction.running
      await j.compact()
      size = statSync(join(folder, 'big.json')).size
      gen = generation()
    })
    afterAll(() => own.cleanup())

    it('is measured against snapshots far larger than compactBytes', () => {
      expect(size).toBeGreaterThan(20_000)
    })

    it('does not start while the write-ahead log is under the snapshots size', async () => {
      await fill(j, big, size - 1000)
      expect(generation()).toBe(gen)
    })

    it('starts once the write-ahead log passes the snapshots size', async () => {
      expect(await fill(j, big, Infinity)).toBeGreaterThanOrEqual(size)
      expect(generation()).toBe(gen + 1)
      await j.close()
    })

    it('takes the snapshots size loaded after a restart as its threshold', async () => {
      const again = new SessionWal(folder, { compactBytes: 2000 })
      await again.open()
      const gen2 = generation()
      await fill(again, await again.store('big'), statSync(join(folder, 'big.json')).size - 1000)
      expect(generation()).toBe(gen2)
      await again.close()
      expect(again.stateOf('big')!.counters.size).toBe(350)
    })
  })

  describe('compaction of changed sessions, with one dropped after it, then a crash', () => {
    // One folder through a compaction, a drop and a crash: the tests run in order.
    const own = tempDir()
    const folder = join(own.dir, 'db.json.sessions')
    let j: SessionWal
    let a: SessionStore
    let gone: SessionStore
    let again: SessionWal
    beforeAll(async () => {
      j = new SessionWal(folder, { compactBytes: 2000 })
      await j.open()
      a = await j.store('a')
      const b = await j.store('b')
      gone = await j.store('gone')
      for (let i = 0; i < 40; i++) await put(i % 2 ? a : b, `k${i}`, i)
      await put(gone, 'x', 1)
      await j.flush()
      while ((j as any).compaction.running) await (j as any).compaction.running
    })
    afterAll(async () => {
      await again?.close()
      own.cleanup()
    })

    it('writes one snapshot per changed session, in the default data file format, under a new generation', () => {
      const files = readdirSync(folder).sort()
      expect(files.filter((f) => f.startsWith('journal.')).length).toBe(1)
      expect(files).toContain('a.json')
      const snap = JSON.parse(readFileSync(join(folder, 'a.json'), 'utf8'))
      expect(snap).toMatchObject({ format: 'dcb-sandbox/1', generation: expect.any(Number), seq: expect.any(Number) })
    })

    it('refuses a write to a dropped session', async () => {
      await j.drop('gone')
      await expect(put(gone, 'y', 2)).rejects.toThrow(/deleted/)
    })

    it('brings back the sessions kept, with the writes after the compaction, once restarted after a crash', async () => {
      await put(a, 'after', 99)
      await crash(j)
      again = new SessionWal(folder)
      expect(await again.open()).toEqual(['a', 'b'])
      expect(again.stateOf('a')!.counters.size).toBe(21)
      expect(counters(again.stateOf('a')).after).toBe(99)
      expect(again.stateOf('b')!.counters.size).toBe(20)
    })

    it('keeps a dropped session dropped across the restart', () => {
      expect(existsSync(join(folder, 'gone.json'))).toBe(false)
    })

    it('starts a session made again under a dropped name empty', async () => {
      const reborn = await again.store('gone')
      expect(reborn.state.counters.size).toBe(0)
    })
  })

  describe('a crash leaving space zeroed ahead of the writes, then a torn last line', () => {
    // One folder through three crashes: the tests run in order.
    const own = tempDir()
    const folder = join(own.dir, 's')
    const file = join(folder, 'journal.0')
    const reopen = async () => {
      const j = new SessionWal(folder)
      expect(await j.open()).toEqual(['a'])
      return j
    }
    let j: SessionWal
    afterAll(async () => {
      await j?.close().catch(() => {})
      own.cleanup()
    })

    it('is not taken for a torn line where the space is zeroed ahead of the writes', async () => {
      j = new SessionWal(folder)
      await j.open()
      await put(await j.store('a'), 'k', 1)
      await crash(j)
      expect(statSync(file).size).toBeGreaterThan(linesEnd(readFileSync(file)))
      j = await reopen()
      expect(j.recovered.tornBytes).toBe(0)
    })

    it('cuts a torn last line (a write the crash cut short), keeping the lines before it', async () => {
      await put(await j.store('a'), 'k2', 2)
      await crash(j)
      // A write cut short, right after the last line.
      const buf = readFileSync(file)
      writeFileSync(file, Buffer.concat([buf.subarray(0, linesEnd(buf)), Buffer.from('{"n":"a","s":3,"ch":[{"c":"coun')]))
      j = await reopen()
      expect(counters(j.stateOf('a'))).toEqual({ k: 1, k2: 2 })
      expect(j.recovered.tornBytes).toBeGreaterThan(0)
    })

    it('goes on writing after the torn line is cut', async () => {
      await put(await j.store('a'), 'k3', 3)
      await crash(j)
      j = await reopen()
      expect(counters(j.stateOf('a'))).toEqual({ k: 1, k2: 2, k3: 3 })
    })
  })

  describe('sessions stored by the first layout (a write-ahead log file per session)', () => {
    // One folder read, written to, then reopened: the tests run in order.
    const own = tempDir()
    const folder = join(own.dir, 'db.json.sessions')
    let j: SessionWal
    beforeAll(async () => {
      for (const name of ['old1', 'old2']) {
        const fs = new FileStore(join(folder, `${name}.json`), { compactBytes: 300 })
        const st = new State()
        await fs.open(st)
        for (let i = 0; i < 10; i++) {
          const tx = new Tx(st)
          tx.put('counters', `k${i}`, i)
          await fs.append(tx.changes)
        }
        await fs.flush()
        // A compaction under way finishes first (a killed server leaves one done or not begun; a reader
        // racing a live writer is not a crash).
        await (fs as any).compaction.running?.catch(() => {})
        ;(fs as any).lock.held = false
        await (fs as any).wal.close()
      }
      expect(readdirSync(folder).some((f) => /\.json\.journal\.\d+$/.test(f))).toBe(true)
    })
    afterAll(() => own.cleanup())

    it('are read', async () => {
      j = new SessionWal(folder)
      expect(await j.open()).toEqual(['old1', 'old2'])
      expect(j.stateOf('old2')!.counters.size).toBe(10)
    })

    it('have their files (write-ahead logs, locks) replaced once read', () => {
      expect(readdirSync(folder).filter((f) => /\.json\.(journal\.\d+|lock)$/.test(f))).toEqual([])
    })

    it('keep what was read, plus a write made after, across a crash', async () => {
      await put(await j.store('old1'), 'new', 1)
      await crash(j)
      const again = new SessionWal(folder)
      await again.open()
      expect(again.stateOf('old1')!.counters.size).toBe(11)
      expect(again.stateOf('old2')!.counters.size).toBe(10)
      await again.close()
    })
  })
})
