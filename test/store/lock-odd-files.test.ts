/**
 * The data file's lock among files it did not write: a lock path that cannot be read is refused by
 * name, files a takeover left behind when its process died go once the lock is taken, and a lock of
 * another host says which file to remove and why.
 */
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
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

const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
const host = encodeURIComponent(hostname())
/** A lock's line of this host: a pid gone unless told otherwise. */
const line = (o: { pid?: number; started?: string; host?: string; token: string }) =>
  `${o.pid ?? 999999999} ${o.started ?? '12345'} host=${o.host ?? host} boot=${boot} token=${o.token}\n`

describe('the data file lock among files it did not write', () => {
  it('a lock path that cannot be read (a folder in its place) is refused naming it, not thrown as it came', () => {
    const data = join(tmp.dir, 'sandbox.json')
    mkdirSync(`${data}.lock`)
    const take = () => new DataFileLock(data).take()
    expect(take).toThrow(StoreError)
    expect(take).toThrow(`cannot lock ${data}: its lock file ${data}.lock cannot be read (EISDIR); if no dcb server runs on ${data}, remove it`)
  })

  /** Leaves a dead takeover's files, a live one's guard and an unrelated file by the lock, then takes it. */
  function takeAmongLeftovers(): { data: string; live: string; lock: DataFileLock } {
    const data = join(tmp.dir, 'sandbox.json')
    // The process that died had renamed its lock over the stale one, but not yet removed its guard
    // (named after the lock it replaced) nor, in another try, its own file before linking it.
    writeFileSync(`${data}.lock`, line({ token: 'deaddeaddeaddead' }))
    writeFileSync(`${data}.lock.takeover-2049-123456`, line({ token: 'deaddeaddeaddead' }))
    writeFileSync(`${data}.lock.deaddeaddeaddead`, line({ token: 'deaddeaddeaddead' }))
    // pid 1 runs and started when it says: its guard is in use.
    const live = line({ pid: 1, started: startTimeOf(1), token: 'a1a1a1a1a1a1a1a1' })
    writeFileSync(`${data}.lock.takeover-2049-654321`, live)
    // Not files of the lock: never touched.
    writeFileSync(`${data}.lock.notes`, line({ token: 'deaddeaddeaddead' }))
    const lock = new DataFileLock(data)
    lock.take()
    expect(readFileSync(`${data}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} `))
    return { data, live, lock }
  }

  it('the files of a process that died taking a lock over (its guard, its half-made lock) go once the lock is taken', () => {
    const { lock } = takeAmongLeftovers()
    expect(readdirSync(tmp.dir).sort()).toEqual(['sandbox.json.lock', 'sandbox.json.lock.notes', 'sandbox.json.lock.takeover-2049-654321'])
    lock.release()
  })

  it('the takeover guard of a live process stays as it was once the lock is taken', () => {
    const { data, live, lock } = takeAmongLeftovers()
    expect(readFileSync(`${data}.lock.takeover-2049-654321`, 'utf8')).toBe(live)
    lock.release()
  })

  it('a file beside the lock that is not of the lock is left untouched once the lock is taken', () => {
    const { data, lock } = takeAmongLeftovers()
    expect(readFileSync(`${data}.lock.notes`, 'utf8')).toBe(line({ token: 'deaddeaddeaddead' }))
    lock.release()
  })

  it('a lock of another host (a container made anew over the same volume has a host name of its own) is refused by a message telling which file to remove once that server is gone', () => {
    const data = join(tmp.dir, 'sandbox.json')
    const other = line({ pid: 1, host: 'a3f9c2d1e0b7', token: 'feedfacefeedface' })
    writeFileSync(`${data}.lock`, other)
    utimesSync(`${data}.lock`, new Date('2026-11-27T10:00:00Z'), new Date('2026-11-27T10:00:00Z'))
    const take = () => new DataFileLock(data).take()
    expect(take).toThrow(StoreError)
    expect(take).toThrow(
      `${data} is locked by a dcb server on host a3f9c2d1e0b7 (pid 1, lock written 2026-11-27T10:00:00.000Z), and a server of another host cannot be checked from here (another machine, or a container with a host name of its own, as one made anew over the same volume): if that server is gone, remove ${data}.lock and start again; else stop it or pick another --data file`,
    )
    expect(readFileSync(`${data}.lock`, 'utf8')).toBe(other)
  })
})
