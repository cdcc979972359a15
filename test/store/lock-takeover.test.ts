/**
 * The data file's lock, taken over when its owner is gone: two servers that find the same stale lock
 * cannot both take it (real processes racing on real files), and a lock this process did not write
 * is not taken for its own because it holds the same pid (containers on a shared volume are pid 1).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { DataFileLock, startTimeOf } from '../../src/store/lock.js'
import { StoreError } from '../../src/store/types.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const LOCK_MODULE = join(import.meta.dirname, '..', '..', 'src', 'store', 'lock.ts')

/**
 * A process that takes locks when told: a line `PATH` makes it take the lock of data file PATH and
 * say `won PATH` or `refused PATH MESSAGE`. It keeps every lock it won until it ends.
 */
const RACER = `
const { createJiti } = require(process.argv[2])
const jiti = createJiti(__filename)
jiti.import(process.argv[3]).then(({ DataFileLock }) => {
  const held = []
  let buf = ''
  process.stdin.on('data', (d) => {
    buf += d
    for (let nl = buf.indexOf('\\n'); nl >= 0; nl = buf.indexOf('\\n')) {
      const path = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      const lock = new DataFileLock(path)
      try {
        lock.take()
        held.push(lock)
        process.stdout.write('won ' + path + '\\n')
      } catch (e) {
        process.stdout.write('refused ' + path + ' ' + e.message + '\\n')
      }
    }
  })
  process.stdout.write('ready\\n')
})
`

interface Racer {
  child: ChildProcess
  lines: string[]
  next(): Promise<string>
}

function startRacer(script: string): Promise<Racer> {
  const child = spawn(process.execPath, [script, createRequire(import.meta.url).resolve('jiti'), LOCK_MODULE], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines: string[] = []
  const waiting: ((line: string) => void)[] = []
  let buf = ''
  child.stdout!.on('data', (d) => {
    buf += d
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      const w = waiting.shift()
      if (w) w(line)
      else lines.push(line)
    }
  })
  const racer: Racer = {
    child,
    lines,
    next: () => (lines.length ? Promise.resolve(lines.shift()!) : new Promise((resolve) => waiting.push(resolve))),
  }
  return racer.next().then((line) => {
    expect(line).toBe('ready')
    return racer
  })
}

/** Resolves once process `pid` waits in the open of a FIFO (for a writer). */
async function readingFifo(pid: number): Promise<void> {
  while (readFileSync(`/proc/${pid}/wchan`, 'utf8') !== 'wait_for_partner') await new Promise((r) => setImmediate(r))
}

describe('taking over a stale lock', () => {
  it('of several processes that find the same stale lock at once, exactly one takes it', async () => {
    const script = join(tmp.dir, 'racer.cjs')
    writeFileSync(script, RACER)
    const racers = await Promise.all([1, 2, 3, 4].map(() => startRacer(script)))
    try {
      for (let round = 0; round < 20; round++) {
        const data = join(tmp.dir, `round-${round}.json`)
        // The stale lock is a FIFO: every racer's read of it waits until the test writes the line of
        // a server that is gone (no such pid), so they all find it stale at the same moment.
        execFileSync('mkfifo', [`${data}.lock`])
        for (const r of racers) r.child.stdin!.write(`${data}\n`)
        await Promise.all(racers.map((r) => readingFifo(r.child.pid!)))
        const fd = openSync(`${data}.lock`, 'w')
        writeSync(fd, '999999999\n')
        closeSync(fd)
        const results = await Promise.all(racers.map((r) => r.next()))
        expect(
          results.filter((line) => line === `won ${data}`),
          `round ${round}: ${results.join(' | ')}`,
        ).toHaveLength(1)
        for (const line of results.filter((l) => !l.startsWith('won ')))
          expect(line).toMatch(new RegExp(`^refused ${data.replace(/[.]/g, '\\.')} .* is in use by another dcb server \\(pid \\d+\\)`))
      }
    } finally {
      for (const r of racers) r.child.kill()
    }
  })
})

const started = startTimeOf(process.pid)!
const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
const host = encodeURIComponent(hostname())
/** The line of a lock, this process's fields unless told otherwise. */
const line = (o: { pid?: number; started?: string; host?: string; boot?: string; token?: string } = {}) =>
  `${o.pid ?? process.pid} ${o.started ?? started} host=${o.host ?? host} boot=${o.boot ?? boot} token=${o.token ?? 'feedfacefeedface'}\n`

describe('whose lock it is', () => {
  it('names this process in its one file (pid, start time, host, boot, a token of its own)', () => {
    const data = join(tmp.dir, 'sandbox.json')
    const lock = new DataFileLock(data)
    lock.take()
    expect(readFileSync(`${data}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} ${started} host=${host} boot=${boot} token=[0-9a-f]{16}\\n$`))
    expect(readdirSync(tmp.dir)).toEqual(['sandbox.json.lock'])
    lock.release()
  })

  it('is removed on release', () => {
    const data = join(tmp.dir, 'sandbox.json')
    const lock = new DataFileLock(data)
    lock.take()
    lock.release()
    expect(existsSync(`${data}.lock`)).toBe(false)
  })

  it('a lock holding our pid but another token is refused by name (a process of another container sharing the folder)', () => {
    const data = join(tmp.dir, 'sandbox.json')
    writeFileSync(`${data}.lock`, line())
    const take = () => new DataFileLock(data).take()
    expect(take).toThrow(StoreError)
    expect(take).toThrow(
      `${data} is in use by another dcb server (pid ${process.pid}, as this one: a process of another container sharing this folder); stop it or pick another --data file`,
    )
    expect(readFileSync(`${data}.lock`, 'utf8')).toBe(line())
  })

  it('a lock written on another host is refused naming that host', () => {
    const data = join(tmp.dir, 'sandbox.json')
    writeFileSync(`${data}.lock`, line({ pid: 1, host: 'other-box' }))
    // The whole message: lock-odd-files.test.ts.
    expect(() => new DataFileLock(data).take()).toThrow(`${data} is locked by a dcb server on host other-box (pid 1, lock written `)
    expect(readFileSync(`${data}.lock`, 'utf8')).toBe(line({ pid: 1, host: 'other-box' }))
  })

  it('the refusal of a lock written on another host says what to do once that server is gone', () => {
    const data = join(tmp.dir, 'sandbox.json')
    writeFileSync(`${data}.lock`, line({ pid: 1, host: 'other-box' }))
    expect(() => new DataFileLock(data).take()).toThrow(
      `: if that server is gone, remove ${data}.lock and start again; else stop it or pick another --data file`,
    )
    expect(readFileSync(`${data}.lock`, 'utf8')).toBe(line({ pid: 1, host: 'other-box' }))
  })

  it("a lock holding our pid from an earlier start (another start time: this container's run before a crash) is taken over", () => {
    const data = join(tmp.dir, 'sandbox.json')
    writeFileSync(`${data}.lock`, line({ started: String(Number(started) - 1) }))
    const lock = new DataFileLock(data)
    lock.take()
    expect(readFileSync(`${data}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} ${started} .* token=(?!feedfacefeedface)[0-9a-f]{16}\\n$`))
    lock.release()
  })

  it('a lock from before the machine last started is taken over, though its pid runs now', () => {
    const data = join(tmp.dir, 'sandbox.json')
    writeFileSync(`${data}.lock`, line({ pid: 1, started: startTimeOf(1), boot: '00000000-0000-0000-0000-000000000000' }))
    expect(() => new DataFileLock(data).take()).not.toThrow()
  })

  it('a live owner on this host keeps its lock, whatever takes it over is refused', () => {
    const data = join(tmp.dir, 'sandbox.json')
    // pid 1 runs, and started when it says.
    writeFileSync(`${data}.lock`, line({ pid: 1, started: startTimeOf(1) }))
    expect(() => new DataFileLock(data).take()).toThrow(`${data} is in use by another dcb server (pid 1); stop it or pick another --data file`)
  })

  it('a takeover guard left by a process that died taking the lock over is gone once the lock is taken over in turn', () => {
    const data = join(tmp.dir, 'sandbox.json')
    writeFileSync(`${data}.lock`, '999999999\n')
    const { dev, ino } = statSync(`${data}.lock`)
    writeFileSync(`${data}.lock.takeover-${dev}-${ino}`, line({ pid: 999999999, token: 'deaddeaddeaddead' }))
    const lock = new DataFileLock(data)
    lock.take()
    expect(readFileSync(`${data}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} `))
    expect(readdirSync(tmp.dir)).toEqual(['sandbox.json.lock'])
    lock.release()
  })
})
