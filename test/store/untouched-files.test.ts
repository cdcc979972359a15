/**
 * Files a server has no reason to write stay as they were, through the binary: a server started and
 * stopped without a write leaves the snapshot alone (bytes and mtime), and a start refused once the
 * port is bound (by the sessions' store) leaves every file as it was.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { dcb, serve } from '../cli/run.js'
import { tempDir } from '../helpers.js'
import { linesEnd } from '../../src/store/wal.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const INIT = '{"msisdn":"60123456001","service_code":"STREAMPLUS","country_code":"my"}'

/** The digest of a file's bytes and its mtime to the nanosecond. */
const fileState = (file: string) => ({
  sha256: createHash('sha256').update(readFileSync(file)).digest('hex'),
  mtime: statSync(file, { bigint: true }).mtimeNs,
})

describe('shutdown writes a snapshot only of what changed', () => {
  it('a server run without a write leaves the snapshot byte-identical, its mtime unchanged', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const first = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    expect((await fetch(`${first.url}/subscriptions/init`, { method: 'POST', headers: H, body: INIT })).status).toBe(200)
    expect(await first.stop('SIGTERM')).toBe(0)
    const before = fileState(data)

    const second = await serve(['--data', data])
    // Reads only: a Status of nothing, the health.
    expect((await fetch(`${second.url}/_sandbox/health`)).status).toBe(200)
    expect((await fetch(`${second.url}/_sandbox/subscriptions`)).status).toBe(200)
    expect(await second.stop('SIGTERM')).toBe(0)
    expect(fileState(data)).toEqual(before)
  })

  it('a write after the restart is in the snapshot written at shutdown', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const first = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    expect(await first.stop('SIGTERM')).toBe(0)
    const before = fileState(data)

    const second = await serve(['--data', data])
    expect((await fetch(`${second.url}/subscriptions/init`, { method: 'POST', headers: H, body: INIT })).status).toBe(200)
    expect(await second.stop('SIGTERM')).toBe(0)
    expect(fileState(data).sha256).not.toBe(before.sha256)
    expect(Object.keys(JSON.parse(readFileSync(data, 'utf8')).collections.verifs)).toHaveLength(1)
  })
})

/** Every file under the folder with its bytes and mtime. */
function folderState(dir: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const n of readdirSync(dir, { recursive: true }) as string[]) {
    const file = join(dir, n)
    out[n] = statSync(file).isDirectory() ? '<folder>' : fileState(file)
  }
  return out
}

describe('a start refused by the sessions store once the port is bound', () => {
  it('leaves every file as it was: the default data file, its write-ahead log of writes since the snapshot, the sessions folder', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const s = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    for (const session of [undefined, 'alice']) {
      const headers = session ? { ...H, 'x-dcb-session': session } : H
      expect((await fetch(`${s.url}/subscriptions/init`, { method: 'POST', headers, body: INIT })).status).toBe(200)
    }
    // Killed: both write-ahead logs hold writes no snapshot has (a clean stop would have folded them in).
    await s.stop('SIGKILL')
    rmSync(`${data}.lock`)
    const folder = `${data}.sessions`
    const journal = join(
      folder,
      readdirSync(folder).find((n) => n.startsWith('journal.'))!,
    )
    // The sessions' write-ahead log has bytes past a run of zeros, and a folder stands where their copy goes:
    // that store refuses once the server is bound, when it cuts its write-ahead log's tail.
    const buf = readFileSync(journal)
    const good = linesEnd(buf)
    writeFileSync(journal, Buffer.concat([buf.subarray(0, good), Buffer.alloc(64), Buffer.from('{"n":"alice","s":9,"ch":[]}\n')]))
    mkdirSync(`${journal}.cut-${good}`)
    const before = folderState(tmp.dir)

    const r = await dcb(['serve', '--data', data, '--port', '0', '--quiet'])
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(
      /^dcb: cannot keep the bytes past a run of zeros in .*sandbox\.json\.sessions\/journal\.\d+ \(EISDIR.*\): it is kept as it was$/,
    )
    expect(folderState(tmp.dir)).toEqual(before)
    expect(existsSync(`${data}.lock`)).toBe(false)
  })

  it("the default store refusing after the sessions' store was made ready: the sessions folder it made is taken back", async () => {
    // The default session in a log of its own (the earlier layout, as dcb seed writes it): its store
    // is the one that refuses, when the start cuts that log's tail to move it into the sessions' log.
    const data = join(tmp.dir, 'sandbox.json')
    expect((await dcb(['seed', '--subscriptions', '1', '--data', data])).code).toBe(0)
    // No sessions folder yet: the start makes one (and its write-ahead log) before the default store refuses.
    rmSync(`${data}.sessions`, { recursive: true, force: true })
    const journal = join(
      tmp.dir,
      readdirSync(tmp.dir).find((n) => n.startsWith('sandbox.json.journal.'))!,
    )
    const buf = readFileSync(journal)
    const good = linesEnd(buf)
    writeFileSync(journal, Buffer.concat([buf.subarray(0, good), Buffer.alloc(64), Buffer.from('{"s":9,"ch":[]}\n')]))
    mkdirSync(`${journal}.cut-${good}`)
    const before = folderState(tmp.dir)

    const r = await dcb(['serve', '--data', data, '--port', '0', '--quiet'])
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(/^dcb: cannot keep the bytes past a run of zeros in .*sandbox\.json\.journal\.\d+ \(EISDIR.*\): it is kept as it was$/)
    expect(folderState(tmp.dir)).toEqual(before)
    expect(existsSync(`${data}.lock`)).toBe(false)
  })
})
