import { appendFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { State } from '../../src/core/state.js'
import { Tx } from '../../src/core/tx.js'
import { FileStore } from '../../src/store/file.js'
import { SessionWal } from '../../src/store/session-wal.js'
import { linesEnd } from '../../src/store/wal.js'
import { tempDir } from '../helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

/** A sessions folder of the first layout: session `old`'s snapshot and its own write-ahead log of 3 counters; answers the log. */
async function firstLayout(folder: string): Promise<string> {
  const fs = new FileStore(join(folder, 'old.json'))
  const st = new State()
  await fs.open(st)
  for (let i = 0; i < 3; i++) {
    const tx = new Tx(st)
    tx.put('counters', `k${i}`, i)
    await fs.append(tx.changes)
  }
  await fs.flush()
  // Left as a killed server leaves it: the log, no snapshot of its changes.
  ;(fs as any).lock.held = false
  await (fs as any).wal.close()
  const log = readdirSync(folder).find((f) => /^old\.json\.journal\.\d+$/.test(f))!
  const file = join(folder, log)
  const buf = readFileSync(file)
  writeFileSync(file, buf.subarray(0, linesEnd(buf)))
  return file
}

describe("a session's write-ahead log of the first layout replays as the data file's own log", () => {
  it('a complete line that does not parse refuses the start naming the damaged line of its file before anything of the folder changes', async () => {
    const folder = join(tmp.dir, 'db.json.sessions')
    const log = await firstLayout(folder)
    appendFileSync(log, 'not json at all\n{"s":9,"ch":[]}\n')
    const before = readdirSync(folder).sort()
    await expect(new SessionWal(folder).open()).rejects.toThrow(`the write-ahead log ${log} is damaged at line 4 (not JSON)`)
    expect(readdirSync(folder).sort()).toEqual(before)
  })

  it('a replay drops only a torn last line, with a note of it', async () => {
    const folder = join(tmp.dir, 'db.json.sessions')
    const log = await firstLayout(folder)
    appendFileSync(log, '{"s":4,"ch":[{"c":"coun')
    const j = new SessionWal(folder)
    expect(await j.open()).toEqual(['old'])
    expect(j.stateOf('old')!.counters.size).toBe(3)
    expect(j.recovered.tornBytes).toBeGreaterThan(0)
    expect(j.recovered.notes.join('\n')).toContain(`dropped the torn last line of ${log}`)
    await j.close()
  })
})
