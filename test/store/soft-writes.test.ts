/**
 * Soft lines of the write-ahead log (`src/store/wal.ts`): changes nobody waits for, such as a
 * Status's coverage counts. Each group the log writes is a durable write on the main thread, so soft
 * lines wait up to SOFT_WAIT_MS to share one; a line someone waits for, `flush` and `close` take
 * them at once. Real files in a temporary folder.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { WriteAheadLog } from '../../src/store/wal.js'

let dir: string | undefined
let log: WriteAheadLog | undefined
/** The writes the log made, by their sizes. */
let writes: number[] = []

/** A log in a new folder, started; `sync: false` writes without zeroing ahead, so no write waits. */
async function started(sync = true): Promise<WriteAheadLog> {
  dir = mkdtempSync(join(tmpdir(), 'dcb-soft-'))
  const folder = dir
  writes = []
  log = new WriteAheadLog({
    pathOf: (gen) => join(folder, `log.${gen}`),
    dir: folder,
    describe: 'the test log',
    sync,
    io: { beforeWrite: (_file, bytes) => void writes.push(bytes) },
  })
  await log.start(1)
  return log
}

const text = () => readFileSync(join(dir!, 'log.1'), 'utf8').replace(/\0+$/, '')
/** One turn of the event loop. */
const turn = () => new Promise((r) => setImmediate(r))

afterEach(async () => {
  await log?.close()
  log = undefined
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('soft lines of the write-ahead log', () => {
  it('appended in turns of their own are written in one write', async () => {
    const wal = await started()
    const done = [wal.append('a\n', undefined, true)]
    await turn()
    done.push(wal.append('b\n', undefined, true))
    await turn()
    done.push(wal.append('c\n', undefined, true))
    await Promise.all(done)
    expect(writes).toEqual([6])
    expect(text()).toBe('a\nb\nc\n')
  })

  it('go with a line someone waits for, in the order appended', async () => {
    const wal = await started()
    const soft = wal.append('soft\n', undefined, true)
    await turn()
    await wal.append('hard\n')
    await soft
    expect(writes).toEqual([10])
    expect(text()).toBe('soft\nhard\n')
  })

  it('are written by flush without waiting for a group', async () => {
    const wal = await started()
    let written = false
    void wal.append('soft\n', undefined, true).then(() => (written = true))
    await wal.flush()
    expect(text()).toBe('soft\n')
    await turn()
    expect(written).toBe(true)
  })

  it('are written by flush when no write of the group waits', async () => {
    const wal = await started(false)
    await wal.append('first\n')
    const soft = wal.append('soft\n', undefined, true)
    await wal.flush()
    await soft
    // The log is still written to after it (a flush that never ended would have left it stuck).
    await wal.append('after\n')
    expect(text()).toBe('first\nsoft\nafter\n')
  })

  it('are written by close', async () => {
    const wal = await started()
    const soft = wal.append('soft\n', undefined, true)
    await wal.close()
    log = undefined
    await soft
    expect(text()).toBe('soft\n')
  })
})
