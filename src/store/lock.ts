/**
 * One server per data file: a lock file beside it (`sandbox.json.lock`) holds its owner's pid and,
 * where the system tells it (Linux), when that process started. A lock whose owner is gone is stale
 * and taken over. The pid alone is not enough: after a crash another program may get the same pid
 * (in a container, soon after), and every restart would be refused for a process that is not a dcb
 * server; a process with the lock's pid but another start time is not its owner. A lock of pid alone
 * (written by an older dcb) is judged by its pid, as before.
 */
import { closeSync, existsSync, linkSync, openSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs'
import { StoreError } from './types.js'

export class DataFileLock {
  private held = false
  /** What this process writes in the lock: its pid and start time (when known). */
  private readonly own = ownerLine(process.pid)

  constructor(
    /** The data file the lock guards (named in messages). */
    private readonly dataFile: string,
    readonly lockPath = `${dataFile}.lock`,
  ) {}

  /** Takes the lock, or throws a StoreError naming the live owner; a stale lock is taken over. */
  take(): void {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        this.create()
        this.held = true
        return
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new StoreError(`cannot lock ${this.dataFile}: ${(e as NodeJS.ErrnoException).code}`)
      }
      let text: string
      try {
        text = readFileSync(this.lockPath, 'utf8')
      } catch {
        continue
      }
      const owner = liveOwner(text)
      if (owner !== undefined) throw new StoreError(`${this.dataFile} is in use by another dcb server (pid ${owner}); stop it or pick another --data file`)
      // A stale lock from a server that is gone: take it over.
      try {
        unlinkSync(this.lockPath)
      } catch {
        /* another process took it over first; try again */
      }
    }
    throw new StoreError(`cannot lock ${this.dataFile}: the lock file ${this.lockPath} keeps changing`)
  }

  /**
   * Makes the lock file whole or not at all (EEXIST: it is there): its line is written to a file of
   * this process's own and linked into place. A lock made empty and then written (a full disk fails
   * the write) was left behind by a start that failed, and a server starting meanwhile read it empty,
   * took it for stale and took it over. Where links are not supported, it is made and written in place.
   */
  private create(): void {
    const own = `${this.lockPath}.${process.pid}`
    const write = (file: string, flags: string) => {
      const fd = openSync(file, flags)
      try {
        const line = Buffer.from(`${this.own}\n`)
        if (writeSync(fd, line) !== line.length) throw Object.assign(new Error('short write'), { code: 'ENOSPC' })
      } catch (e) {
        rmSync(file, { force: true })
        throw e
      } finally {
        closeSync(fd)
      }
    }
    write(own, 'w')
    try {
      linkSync(own, this.lockPath)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw e
      write(this.lockPath, 'wx')
    } finally {
      rmSync(own, { force: true })
    }
  }

  /** Removes the lock if this process holds it. */
  release(): void {
    if (!this.held) return
    this.held = false
    try {
      if (existsSync(this.lockPath) && readFileSync(this.lockPath, 'utf8').trim() === this.own) unlinkSync(this.lockPath)
    } catch {
      /* already gone */
    }
  }
}

/** The pid of a lock's owner while that process runs (not this one), else undefined: the lock is stale. */
function liveOwner(text: string): number | undefined {
  const [pidText, started] = text.trim().split(/\s+/)
  const pid = Number(pidText)
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !processAlive(pid)) return undefined
  // The pid is taken: by the lock's owner only if it started when the lock says (unknown: assume so).
  const now = started === undefined ? undefined : startTimeOf(pid)
  return now === undefined || now === started ? pid : undefined
}

/** A lock's line for process `pid`: the pid, then its start time where known. */
function ownerLine(pid: number): string {
  const started = startTimeOf(pid)
  return started === undefined ? String(pid) : `${pid} ${started}`
}

/**
 * When a process started, in clock ticks since boot (the 22nd field of /proc/PID/stat), or
 * undefined where there is no /proc. Read after the command's closing parenthesis: a command
 * name may hold spaces and parentheses.
 */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}
