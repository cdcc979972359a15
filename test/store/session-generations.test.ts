/**
 * The sessions' write-ahead log when its files come from different moments: snapshots newer than every
 * write-ahead log left, a dropped session's snapshot that a crash left behind. Real files, restarts.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SessionWal } from '../../src/store/session-wal.js'
import { tempDir } from '../helpers.js'
import { counters, crash, put } from './session-helpers.js'

let tmp: ReturnType<typeof tempDir>
let folder: string
beforeEach(() => {
  tmp = tempDir()
  folder = join(tmp.dir, 'db.json.sessions')
})
afterEach(() => tmp.cleanup())

const journals = () => readdirSync(folder).filter((f) => f.startsWith('journal.'))

describe('SessionWal: files of different generations', () => {
  it('keeps the writes made after a restart whose snapshots are newer than every write-ahead log left (the write-ahead logs were removed)', async () => {
    const j = new SessionWal(folder)
    await j.open()
    const a = await j.store('a')
    await put(a, 'x', 1)
    await j.compact()
    await put(a, 'x', 2)
    await j.close()
    // A clean shutdown leaves the snapshots and an empty write-ahead log: someone tidies the empty file away.
    expect(journals()).toEqual(['journal.2'])
    for (const f of journals()) rmSync(join(folder, f))

    const k = new SessionWal(folder)
    await k.open()
    await put(await k.store('a'), 'x', 3)
    await put(await k.store('b'), 'y', 1)
    await crash(k)

    const again = new SessionWal(folder)
    expect(await again.open()).toEqual(['a', 'b'])
    expect(counters(again.stateOf('a'))).toEqual({ x: 3 })
    expect(counters(again.stateOf('b'))).toEqual({ y: 1 })
    await again.close()
  })

  it('recovers the writes an earlier dcb appended to a write-ahead log older than the snapshots (after their write-ahead logs were removed)', async () => {
    const j = new SessionWal(folder)
    await j.open()
    await put(await j.store('a'), 'x', 1)
    await j.compact()
    await j.close()
    expect(journals()).toEqual(['journal.1'])
    rmSync(join(folder, 'journal.1'))
    // What an earlier dcb then wrote: journal.0, under the snapshot's generation 1, the seq going on from it.
    const seq = JSON.parse(readFileSync(join(folder, 'a.json'), 'utf8')).seq as number
    const line = (s: number, v: number) => JSON.stringify({ n: 'a', s, ch: [{ c: 'counters', id: 'x', v }] }) + '\n'
    writeFileSync(join(folder, 'journal.0'), line(seq + 1, 2) + line(seq + 2, 3))

    const again = new SessionWal(folder)
    expect(await again.open()).toEqual(['a'])
    expect(counters(again.stateOf('a'))).toEqual({ x: 3 })
    await again.compact()
    await again.close()
    const last = new SessionWal(folder)
    await last.open()
    expect(counters(last.stateOf('a'))).toEqual({ x: 3 })
    await last.close()
  })

  it('a dropped session whose snapshot a crash left behind stays dropped once the write-ahead log holding its drop is compacted away', async () => {
    const j = new SessionWal(folder)
    await j.open()
    await put(await j.store('a'), 'x', 1)
    await j.compact()
    const snapshot = readFileSync(join(folder, 'a.json'))
    await j.drop('a')
    // The drop line is durable; the crash came before its snapshot file went.
    writeFileSync(join(folder, 'a.json'), snapshot)
    await crash(j)

    const k = new SessionWal(folder)
    expect(await k.open()).toEqual([])
    await put(await k.store('b'), 'y', 1)
    await k.compact()
    await k.close()

    const again = new SessionWal(folder)
    expect(await again.open()).toEqual(['b'])
    expect(readdirSync(folder).filter((f) => f.endsWith('.json'))).toEqual(['b.json'])
    await again.close()
  })

  it('a session made again under a dropped name starts empty, whatever the old snapshot a crash left behind', async () => {
    const j = new SessionWal(folder)
    await j.open()
    await put(await j.store('a'), 'old', 1)
    await j.compact()
    const snapshot = readFileSync(join(folder, 'a.json'))
    await j.drop('a')
    writeFileSync(join(folder, 'a.json'), snapshot)
    await crash(j)

    const k = new SessionWal(folder)
    await k.open()
    await k.compact() // nothing changed: the write-ahead log holding the drop goes
    await put(await k.store('a'), 'new', 2)
    await crash(k)

    const again = new SessionWal(folder)
    expect(await again.open()).toEqual(['a'])
    expect(counters(again.stateOf('a'))).toEqual({ new: 2 })
    await again.close()
  })
})
