/**
 * Issue 14: damaged data files refuse the start naming file and line and change nothing on disk; a
 * start that fails for any reason leaves the data files byte-identical and no lock behind.
 */
import { execFileSync } from 'node:child_process'
import { appendFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
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

/** Every file of the folder with its bytes. */
function snapshotDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const n of readdirSync(dir, { recursive: true }) as string[]) {
    // A FIFO or a link to a device is kept as what it is: reading it would hang or never end.
    if (!lstatSync(join(dir, n)).isFile() && !lstatSync(join(dir, n)).isDirectory()) {
      out[n] = '<special>'
      continue
    }
    try {
      out[n] = readFileSync(join(dir, n), 'base64')
    } catch {
      out[n] = '<dir>'
    }
  }
  return out
}

/**
 * A data file with one subscription whose default session has a write-ahead log of its own (the earlier
 * layout, as `dcb seed` writes it): the start reads it so, then moves it into the sessions' log.
 * (Damage in that shared log: test/store/session-wal.test.ts, test/store/untouched-files.test.ts.)
 */
async function makeData(): Promise<string> {
  const data = join(tmp.dir, 'sandbox.json')
  expect((await dcb(['seed', '--subscriptions', '1', '--data', data])).code).toBe(0)
  return data
}

const journalOf = (data: string) => {
  const name = readdirSync(tmp.dir).find((n) => n.startsWith('sandbox.json.journal.'))!
  return join(tmp.dir, name)
}

async function refuses(data: string, pattern: RegExp): Promise<string> {
  const before = snapshotDir(tmp.dir)
  const r = await dcb(['serve', '--data', data, '--port', '0', '--quiet'])
  expect(r.code).toBe(1)
  const lines = r.stderr.trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(pattern)
  expect(snapshotDir(tmp.dir)).toEqual(before)
  expect(existsSync(`${data}.lock`)).toBe(false)
  return lines[0]!
}

describe('damaged data files', () => {
  it('a complete line that does not parse, even the last one, refuses the start naming the damaged line of its file', async () => {
    const data = await makeData()
    const journal = journalOf(data)
    appendFileSync(journal, '{"s":1,"ch":[]}\nnot json at all\n')
    await refuses(data, new RegExp(`^dcb: the write-ahead log ${journal.replace(/[.]/g, '\\.')} is damaged at line 2 \\(not JSON\\)`))
  })

  it('an unknown record type in the write-ahead log refuses the start', async () => {
    const data = await makeData()
    appendFileSync(journalOf(data), '{"s":99,"ch":[{"c":"wallets","id":"w1","v":{}}]}\n')
    await refuses(data, /is damaged at line 1 \(unknown record type "wallets"\)/)
  })

  it('changed fields of a record the write-ahead log never made refuse the start naming the line', async () => {
    const data = await makeData()
    appendFileSync(journalOf(data), '{"s":99,"ch":[{"c":"verifs","id":"nowhere","v":{"attempts":1},"merge":true}]}\n')
    await refuses(data, /is damaged at line 1 \(a change to verifs record "nowhere", which does not exist\)/)
  })

  it('changed fields of a message refuse the start by name', async () => {
    const data = await makeData()
    appendFileSync(journalOf(data), '{"s":99,"ch":[{"c":"sms","id":"m1","v":{"text":"x"},"merge":true}]}\n')
    await refuses(data, /is damaged at line 1 \(fields changed in a sms record \(only subs, verifs and rules records change\)\)/)
  })

  it('changed fields that are not an object refuse the start by name', async () => {
    const data = await makeData()
    appendFileSync(journalOf(data), '{"s":99,"ch":[{"c":"verifs","id":"v1","v":3,"merge":true}]}\n')
    await refuses(data, /is damaged at line 1 \(the changed fields of verifs record "v1" are not an object\)/)
  })

  it('a snapshot with a bad field refuses the start naming the damaged line of the file', async () => {
    const data = await makeData()
    const snap = JSON.parse(readFileSync(data, 'utf8'))
    snap.seq = 'seven'
    writeFileSync(data, JSON.stringify(snap))
    await refuses(data, /^dcb: the data file .*sandbox\.json is damaged at line 1: "seq" is not a whole number/)
    snap.seq = 1
    snap.collections.subs = { x: 'not a record' }
    writeFileSync(data, JSON.stringify(snap))
    await refuses(data, /subs record "x" is not an object/)
    snap.collections.subs = {}
    snap.collections.wallets = {}
    writeFileSync(data, JSON.stringify(snap))
    await refuses(data, /unknown record type "wallets"/)
  })

  it('a data file of JSON that is not an object (null, false, 0, "") is refused by name, not taken for no data and overwritten', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    for (const text of ['null', 'false', '0', '""', ' null\n']) {
      writeFileSync(data, text)
      await refuses(data, /^dcb: the data file .*sandbox\.json is not a dcb snapshot/)
    }
  })

  it('a folder given as the data file is refused naming a file path in it, before a lock is made beside it', async () => {
    const data = join(tmp.dir, 'adir')
    mkdirSync(data)
    const line = await refuses(data, /^dcb: the data file .*adir is a folder: give a file path, e\.g\. --data .*adir\/sandbox\.json$/)
    expect(line).not.toContain('EISDIR')
  })

  it('a FIFO or a link to a device given as the data file is refused unread, before a lock is made', async () => {
    const fifo = join(tmp.dir, 'pipe.json')
    execFileSync('mkfifo', [fifo])
    await refuses(fifo, /^dcb: the data file .*pipe\.json is a FIFO, not a regular file: give a file path$/)
    const zero = join(tmp.dir, 'zero.json')
    symlinkSync('/dev/zero', zero)
    await refuses(zero, /^dcb: the data file \/dev\/zero is a device, not a regular file: give a file path$/)
  })

  it('a FIFO in place of the write-ahead log is refused by name, unread', async () => {
    const data = await makeData()
    const journal = journalOf(data)
    rmSync(journal)
    execFileSync('mkfifo', [journal])
    await refuses(data, /^dcb: cannot read the write-ahead log .* \(it is a FIFO, not a regular file\); nothing was changed: move it away$/)
  })

  it('a torn final line (no newline) is dropped with a note saying so, rather than refusing the start', async () => {
    const data = await makeData()
    appendFileSync(journalOf(data), '{"s":50,"ch":[{"c":"counters","id":"x","v":')
    const s = await serve(['--data', data])
    try {
      expect(s.output()).toMatch(/dcb: dropped the torn last line of .*journal.* \(\d+ bytes without a newline: a write cut short by a crash\)/)
      expect(s.output()).toContain('(1 subscription in the default session)')
    } finally {
      await s.stop()
    }
  })

  it('complete lines past a run of zero bytes (damage, or a write whose later pages reached the disk first) are set aside unreplayed in a copy beside the write-ahead log that the start names', async () => {
    const data = await makeData()
    const journal = journalOf(data)
    const clean = readFileSync(journal).subarray(0, linesEnd(readFileSync(journal)))
    const past = '{"s":50,"ch":[{"c":"counters","id":"x","v":1}]}\n{"s":51,"ch":[]}\n'
    writeFileSync(journal, Buffer.concat([clean, Buffer.alloc(4096), Buffer.from(past), Buffer.alloc(4096)]))
    const s = await serve(['--data', data])
    const copy = `${journal}.cut-${clean.length}`
    try {
      expect(s.output()).toContain(
        `dcb: dropped the torn last line of ${journal} (${4096 + past.length} bytes from byte ${clean.length}, past a run of zero bytes at ${clean.length}, 2 complete lines among them: a write cut short by a crash, or damage); they are kept in ${copy}`,
      )
      expect(s.output()).toContain('(1 subscription in the default session)')
    } finally {
      expect(await s.stop()).toBe(0)
    }
    expect(readFileSync(copy)).toEqual(Buffer.concat([Buffer.alloc(4096), Buffer.from(past)]))
  })

  it('a copy that cannot be made refuses the start by name before anything of the write-ahead log changes', async () => {
    const data = await makeData()
    const journal = journalOf(data)
    const clean = readFileSync(journal).subarray(0, linesEnd(readFileSync(journal)))
    writeFileSync(journal, Buffer.concat([clean, Buffer.alloc(64), Buffer.from('{"s":50,"ch":[]}\n')]))
    // A folder where the copy goes: writing it fails (EISDIR), as a full disk would.
    mkdirSync(`${journal}.cut-${clean.length}`)
    await refuses(data, /^dcb: cannot keep the bytes past a run of zeros in .*sandbox\.json\.journal\.\d+ \(EISDIR.*\): it is kept as it was$/)
  })
})

describe('a start that fails leaves the data files byte-identical and no lock', () => {
  it('a busy port: the data files are untouched (no catch-up ran, no compaction)', async () => {
    const data = await makeData()
    const blocker = createServer()
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
    const port = (blocker.address() as { port: number }).port
    try {
      // The clock runs from 2026: a catch-up before binding would have renewed the subscription.
      const before = snapshotDir(tmp.dir)
      const r = await dcb(['serve', '--data', data, '--port', String(port), '--clock', '2027-06-01T00:00:00'])
      expect(r.code).toBe(1)
      expect(r.stderr.trim()).toBe(`dcb: port ${port} on 127.0.0.1 is already in use; stop what runs there or pick another --port`)
      expect(snapshotDir(tmp.dir)).toEqual(before)
      expect(existsSync(`${data}.lock`)).toBe(false)
    } finally {
      blocker.close()
    }
  })

  it('a busy port with no data yet: the folders it made for the data file (the default .dcb/ too) are taken back', async () => {
    const blocker = createServer()
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
    const port = String((blocker.address() as { port: number }).port)
    try {
      const busy = `dcb: port ${port} on 127.0.0.1 is already in use; stop what runs there or pick another --port\n`
      const byDefault = await dcb(['serve', '--port', port], { cwd: tmp.dir })
      expect(byDefault.stderr).toBe(busy)
      const nested = await dcb(['serve', '--port', port, '--data', join(tmp.dir, 'a', 'b', 'sandbox.json')])
      expect(nested.stderr).toBe(busy)
      expect(readdirSync(tmp.dir)).toEqual([])
      // A folder that was there before stays.
      mkdirSync(join(tmp.dir, 'mine'))
      expect((await dcb(['serve', '--port', port, '--data', join(tmp.dir, 'mine', 'sandbox.json')])).stderr).toBe(busy)
      expect(readdirSync(tmp.dir)).toEqual(['mine'])
      expect(readdirSync(join(tmp.dir, 'mine'))).toEqual([])
    } finally {
      blocker.close()
    }
  })

  it('a bad option (--trust-proxy, --clock, an unknown flag) touches nothing', async () => {
    const data = await makeData()
    const before = snapshotDir(tmp.dir)
    const bad = await dcb(['serve', '--data', data, '--port', '0', '--trust-proxy', 'my-proxy'])
    // Usage errors (exit 2), as the CLI reference says of a bad option.
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toBe('dcb: --trust-proxy: "my-proxy" is not an address, a CIDR range or one of loopback, linklocal, uniquelocal')
    expect((await dcb(['serve', '--data', data, '--port', '0', '--clock', 'soon'])).code).toBe(2)
    const running = await dcb(['serve', '--data', data, '--port', '0', '--clock-running'])
    expect(running.stderr.trim()).toBe('dcb: --clock-running goes with --clock: the time the clock runs from')
    expect(running.code).toBe(2)
    expect((await dcb(['serve', '--data', data, '--port', '0', '--no-such-flag'])).code).toBe(2)
    expect(snapshotDir(tmp.dir)).toEqual(before)
    expect(existsSync(`${data}.lock`)).toBe(false)
  })

  it('a data path under /proc fails with a clear message', async () => {
    const r = await dcb(['serve', '--data', '/proc/dcb-test/sandbox.json', '--port', '0'])
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(/^dcb: cannot create the data folder \/proc\/dcb-test: E[A-Z]+$/)
    const r2 = await dcb(['serve', '--data', '/proc/sandbox.json', '--port', '0'])
    expect(r2.code).toBe(1)
    expect(r2.stderr.trim()).toMatch(
      /^dcb: cannot lock \/proc\/sandbox\.json: its lock file \/proc\/sandbox\.json\.lock cannot be written \(E[A-Z]+(: [a-z -]+)?\)$/,
    )
  })
})

describe("damaged files of the sessions' shared write-ahead log", () => {
  /** A data file whose session "alice" has a subscription attempt in the sessions' write-ahead log; answers that log. */
  async function makeSessionData(): Promise<{ data: string; folder: string; journal: string }> {
    const data = join(tmp.dir, 'sandbox.json')
    const s = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json', 'x-dcb-session': 'alice' }
    const r = await fetch(`${s.url}/subscriptions/init`, {
      method: 'POST',
      headers: H,
      body: '{"msisdn":"60123456001","service_code":"STREAMPLUS","country_code":"my"}',
    })
    expect(((await r.json()) as { status: string }).status).toBe('SUCCESS')
    expect(await s.stop('SIGTERM')).toBe(0)
    const folder = `${data}.sessions`
    const journal = join(
      folder,
      readdirSync(folder).find((n) => n.startsWith('journal.'))!,
    )
    return { data, folder, journal }
  }
  const linesOf = (file: string) => readFileSync(file, 'utf8').split('\n').length - 1

  it('a complete line that does not parse, even the last one, refuses the start naming the damaged line of its file', async () => {
    const { data, journal } = await makeSessionData()
    const n = linesOf(journal)
    appendFileSync(journal, '{"n":"alice","s":1,"ch":[]}\nnot json at all\n')
    await refuses(
      data,
      new RegExp(`^dcb: the sessions' write-ahead log ${journal.replace(/[.]/g, '\\.')} is damaged at line ${n + 2} \\(not JSON\\); nothing was changed`),
    )
  })

  it('an unknown record type, a bad change or a line of no session refuses the start', async () => {
    const { data, journal } = await makeSessionData()
    const n = linesOf(journal)
    const clean = readFileSync(journal)
    appendFileSync(journal, '{"n":"alice","s":99,"ch":[{"c":"wallets","id":"w1","v":{}}]}\n')
    await refuses(data, new RegExp(`is damaged at line ${n + 1} \\(unknown record type "wallets"\\)`))
    writeFileSync(journal, Buffer.concat([clean, Buffer.from('{"n":"alice","s":99,"ch":[{"c":"subs","id":"s1","v":"not a record"}]}\n')]))
    await refuses(data, /\(subs record "s1" is not an object\)/)
    writeFileSync(journal, Buffer.concat([clean, Buffer.from('{"s":99,"ch":[]}\n')]))
    await refuses(data, /\(not a sessions' write-ahead log entry \{ n, s, ch \} or \{ n, drop \}\)/)
    writeFileSync(journal, Buffer.concat([clean, Buffer.from('{"n":"alice","drop":true}\n')]))
    await refuses(data, /\(a drop that is not \{ n, drop: 1 \}\)/)
  })

  it("a session's snapshot with a bad field refuses the start naming the file and line", async () => {
    const { data, folder } = await makeSessionData()
    const file = join(folder, 'alice.json')
    const snap = { format: 'dcb-sandbox/1', seq: 'seven', generation: 0, saved_at: '2026-01-31T00:00:00.000Z', collections: {} as Record<string, unknown> }
    writeFileSync(file, JSON.stringify(snap))
    await refuses(
      data,
      new RegExp(`^dcb: the session file ${file.replace(/[.]/g, '\\.')} is damaged at line 1: "seq" is not a whole number; nothing was changed`),
    )
    snap.seq = 1 as unknown as string
    snap.collections = { wallets: {} }
    writeFileSync(file, JSON.stringify(snap))
    await refuses(data, /the session file .*alice\.json is damaged at line 1: unknown record type "wallets"/)
  })

  it('a torn final line (no newline) is cut off at the last newline with a note, rather than refusing the start of the session', async () => {
    const { data, journal } = await makeSessionData()
    const clean = readFileSync(journal)
    appendFileSync(journal, '{"n":"alice","s":50,"ch":[{"c":"counters","id":"x","v":')
    const s = await serve(['--data', data])
    try {
      expect(s.output()).toContain(`dcb: dropped the torn last line of ${journal} (`)
      expect(s.output()).toMatch(/\(\d+ bytes without a newline: a write cut short by a crash\)/)
      const sessions = (await (await fetch(`${s.url}/_sandbox/sessions`)).json()) as { sessions: { name: string }[] }
      expect(sessions.sessions.map((x) => x.name)).toContain('alice')
    } finally {
      expect(await s.stop()).toBe(0)
    }
    // Cut at the last newline: the lines before it are as they were.
    expect(readFileSync(journal).subarray(0, clean.length)).toEqual(clean)
    expect(readFileSync(journal, 'utf8')).not.toContain('"s":50')
  })

  it("in the sessions' write-ahead log too: complete lines past a run of zero bytes are kept in a copy, not replayed, and the start says where", async () => {
    const { data, journal } = await makeSessionData()
    const clean = readFileSync(journal).subarray(0, linesEnd(readFileSync(journal)))
    const past = '{"n":"alice","s":50,"ch":[{"c":"counters","id":"x","v":1}]}\n'
    writeFileSync(journal, Buffer.concat([clean, Buffer.alloc(100), Buffer.from(past)]))
    const s = await serve(['--data', data])
    const copy = `${journal}.cut-${clean.length}`
    try {
      expect(s.output()).toContain(
        `past a run of zero bytes at ${clean.length}, 1 complete line among them: a write cut short by a crash, or damage); they are kept in ${copy}`,
      )
      const sessions = (await (await fetch(`${s.url}/_sandbox/sessions`)).json()) as { sessions: { name: string }[] }
      expect(sessions.sessions.map((x) => x.name)).toContain('alice')
    } finally {
      expect(await s.stop()).toBe(0)
    }
    expect(readFileSync(copy)).toEqual(Buffer.concat([Buffer.alloc(100), Buffer.from(past)]))
  })
})
