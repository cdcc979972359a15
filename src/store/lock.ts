/**
 * One server per data file: a lock file beside it (`sandbox.json.lock`) names its owner by a line of
 * its pid, when that process started (where the system tells it: Linux), the host's name, the
 * machine's boot and a random token of its own. A lock whose owner is gone is stale and taken over.
 *
 * Who owns a lock. The pid alone is not enough: after a crash another program may get the same pid
 * (in a container, soon after), and every restart would be refused for a process that is not a dcb
 * server; a process with the lock's pid but another start time is not its owner. Nor is a lock with
 * this process's pid its own (containers sharing a volume all run as pid 1): the token says whose it
 * is, and one with our pid but another token is another process's, stale only when it started at
 * another time (this container's run before a crash). A lock written on another host (another
 * machine, or a container with a host name of its own, as one made anew over the same volume)
 * cannot be checked from here: it holds, and the refusal names the file to remove once that server
 * is gone. One from before the machine last started is stale. A lock of pid alone, or pid and start
 * time (written by an older dcb), is judged by them.
 *
 * Taking over. Servers that find the same stale lock at once must not each remove it and make their
 * own (both would hold it): the one that makes the takeover's guard file, named after that very lock
 * file (device and inode), replaces it by renaming its own lock over it if it is still that file;
 * the others find the guard or the new lock, and are refused naming its owner. A process that dies
 * between making such a file and removing it leaves it behind: the next server to take the lock
 * removes those whose owner is gone.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, fstatSync, linkSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { StoreError } from './types.js'

/** What a lock's line says of the process that wrote it (older dcb wrote the pid and start time only). */
interface Owner {
  pid: number
  started?: string
  host?: string
  boot?: string
  token?: string
}

/** A lock file as read: its line, and which file it was (a file put in its place since is another). */
interface Found {
  text: string
  id: string
  /** When it was last written (ms since the epoch). */
  written: number
}

export class DataFileLock {
  private held = false
  /** This process, and the line it writes in the lock. */
  private readonly me: Owner = thisProcess()
  private readonly own = ownerLine(this.me)

  constructor(
    /** The data file the lock guards (named in messages). */
    private readonly dataFile: string,
    readonly lockPath = `${dataFile}.lock`,
  ) {}

  /** Takes the lock, or throws a StoreError naming its owner; a stale lock is taken over. */
  take(): void {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        this.create(this.lockPath)
        return this.taken()
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw this.cannot(e)
      }
      const found = this.read(this.lockPath)
      if (!found) continue
      this.refuseHeld(found)
      if (this.replace(this.lockPath, found)) return this.taken()
    }
    throw new StoreError(`cannot lock ${this.dataFile}: the lock file ${this.lockPath} keeps changing`)
  }

  /**
   * Replaces the stale lock file `file` (as read: `stale`) by this process's line. Only the process
   * that makes the guard of that very file does, and only while `file` is still it; answers whether
   * this one did (false: it changed meanwhile, read it again). A guard left by a process that died
   * taking over is stale in turn, and replaced the same way.
   */
  private replace(file: string, stale: Found, depth = 0): boolean {
    const guard = `${this.lockPath}.takeover-${stale.id}`
    try {
      this.create(guard)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw this.cannot(e)
      const taker = this.read(guard)
      if (!taker) return false
      // Another server is taking it over now: it is that server's.
      this.refuseHeld(taker)
      if (depth >= 2 || !this.replace(guard, taker, depth + 1)) return false
    }
    try {
      if (fileId(file) !== stale.id) return false
      // The takeover's second write: a disk that filled since the guard's is refused as the first would be.
      let mine: string
      try {
        mine = this.writeOwn()
      } catch (e) {
        throw this.cannot(e, STALE_KEPT)
      }
      try {
        renameSync(mine, file)
      } catch (e) {
        rmSync(mine, { force: true })
        throw this.cannot(e, STALE_KEPT)
      }
      return true
    } finally {
      rmSync(guard, { force: true })
    }
  }

  /** The lock is this process's now: files that dead takers left beside it go. */
  private taken(): void {
    this.held = true
    try {
      this.sweep()
    } catch {
      /* litter stays: the lock is held all the same */
    }
  }

  /** Throws a StoreError naming the owner of a lock while it may run (see the top of this file); returns when it is stale. */
  private refuseHeld(found: Found): void {
    const o = parseOwner(found.text)
    const holder = o && this.holder(o)
    if (!o || holder === undefined) return
    if (holder === OTHER_HOST)
      throw new StoreError(
        `${this.dataFile} is locked by a dcb server on host ${o.host} (pid ${o.pid}, lock written ${new Date(found.written).toISOString()}), and a server of another host cannot be checked from here (another machine, or a container with a host name of its own, as one made anew over the same volume): if that server is gone, remove ${this.lockPath} and start again; else stop it or pick another --data file`,
      )
    throw new StoreError(`${this.dataFile} is in use by ${holder}; stop it or pick another --data file`)
  }

  /** Who holds a lock of owner `o` while it may run (OTHER_HOST: one that cannot be checked), or undefined when it is stale. */
  private holder(o: Owner): string | undefined {
    if (o.token !== undefined && o.token === this.me.token) return undefined
    if (o.host !== undefined && o.host !== this.me.host) return OTHER_HOST
    if (o.boot !== undefined && this.me.boot !== undefined && o.boot !== this.me.boot) return undefined
    if (o.pid === this.me.pid) {
      // Not this process: an earlier one with this pid (it started at another time), or one of another container sharing the folder.
      if (o.started !== undefined && this.me.started !== undefined && o.started !== this.me.started) return undefined
      if (o.token === undefined && o.started === undefined) return undefined
      return `another dcb server (pid ${o.pid}, as this one: a process of another container sharing this folder)`
    }
    if (!processAlive(o.pid)) return undefined
    // The pid is taken: by the lock's owner only if it started when the lock says (unknown: assume so).
    const now = o.started === undefined ? undefined : startTimeOf(o.pid)
    return now === undefined || now === o.started ? `another dcb server (pid ${o.pid})` : undefined
  }

  /**
   * Removes the takeover guards and half-made locks (`LOCK.takeover-DEV-INO`, `LOCK.TOKEN`) whose
   * process is gone: it died between making one and removing it. One whose line does not read (a
   * process between making and writing it, where links are not supported) or whose owner may run stays.
   */
  private sweep(): void {
    const dir = dirname(this.lockPath)
    const prefix = `${basename(this.lockPath)}.`
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix) || !/^(takeover-\d+-\d+|[0-9a-f]{16})$/.test(name.slice(prefix.length))) continue
      const path = join(dir, name)
      const found = readLock(path, true)
      const o = found && parseOwner(found.text)
      if (!o || this.holder(o) !== undefined || o.token === this.me.token) continue
      if (fileId(path) === found.id) rmSync(path, { force: true })
    }
  }

  /** A lock file as read (undefined: there is none now); one that cannot be read is a StoreError naming it. */
  private read(file: string): Found | undefined {
    try {
      return readLock(file)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message
      throw new StoreError(`cannot lock ${this.dataFile}: its lock file ${file} cannot be read (${code}); if no dcb server runs on ${this.dataFile}, remove it`)
    }
  }

  /**
   * Makes `path` hold this process's line, whole or not at all (EEXIST: it is there): the line is
   * written to a file of this process's own and linked into place. A lock made empty and then written
   * (a full disk fails the write) was left behind by a start that failed, and a server starting
   * meanwhile read it empty, took it for stale and took it over. Where links are not supported, it is
   * made and written in place.
   */
  private create(path: string): void {
    const mine = this.writeOwn()
    try {
      linkSync(mine, path)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw e
      writeLine(path, 'wx', this.own)
    } finally {
      rmSync(mine, { force: true })
    }
  }

  /** This process's line in a file of its own (named by its token: another container's process may have the same pid). */
  private writeOwn(): string {
    const mine = `${this.lockPath}.${this.me.token}`
    writeLine(mine, 'w', this.own)
    return mine
  }

  /** A lock file that cannot be written, in one line naming it and why (`then`: what was left). */
  private cannot(e: unknown, then = ''): StoreError {
    const code = (e as NodeJS.ErrnoException).code
    const cause = code ? (WHY[code] ? `${code}: ${WHY[code]}` : code) : (e as Error).message
    return new StoreError(`cannot lock ${this.dataFile}: its lock file ${this.lockPath} cannot be written (${cause})${then}`)
  }

  /** Removes the lock if this process holds it. */
  release(): void {
    if (!this.held) return
    this.held = false
    try {
      if (readFileSync(this.lockPath, 'utf8').trim() === this.own) unlinkSync(this.lockPath)
    } catch {
      /* already gone */
    }
  }
}

/** Writes one line to `file`, all of it (a short write is ENOSPC); a file that could not be written whole is removed. */
function writeLine(file: string, flags: string, text: string): void {
  const fd = openSync(file, flags)
  try {
    const line = Buffer.from(`${text}\n`)
    if (writeSync(fd, line) !== line.length) throw Object.assign(new Error('short write'), { code: 'ENOSPC' })
  } catch (e) {
    rmSync(file, { force: true })
    throw e
  } finally {
    closeSync(fd)
  }
}

/** A lock file's line and which file it is (device and inode), or undefined when there is none (or, `quiet`, when it cannot be read). */
function readLock(file: string, quiet = false): Found | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (e) {
    if (quiet || (e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw e
  }
  try {
    const st = fstatSync(fd)
    return { text: readFileSync(fd, 'utf8'), id: `${st.dev}-${st.ino}`, written: st.mtimeMs }
  } catch (e) {
    if (quiet) return undefined
    throw e
  } finally {
    closeSync(fd)
  }
}

/** Which file stands at `path` now (device and inode, as `readLock` sees it), or undefined. */
function fileId(path: string): string | undefined {
  try {
    const st = statSync(path)
    return `${st.dev}-${st.ino}`
  } catch {
    return undefined
  }
}

/** What a takeover refused after the stale lock was found says of it. */
const STALE_KEPT = '; the stale lock is left as it was'

/** The usual reasons a lock file cannot be written, in words. */
const WHY: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'no permission',
  EPERM: 'no permission',
  EIO: 'an I/O error',
}

/** What `holder` answers for a lock of another host (its refusal says more). */
const OTHER_HOST = 'a dcb server of another host'

/** This process as a lock names it. */
function thisProcess(): Owner {
  return { pid: process.pid, started: startTimeOf(process.pid), host: hostname(), boot: bootId(), token: randomBytes(8).toString('hex') }
}

/** A lock's line: `PID START host=NAME boot=ID token=HEX` (START `-` where unknown; older dcb read the first two). */
function ownerLine(o: Owner): string {
  const fields = [String(o.pid), o.started ?? '-', `host=${encodeURIComponent(o.host ?? '')}`]
  if (o.boot) fields.push(`boot=${o.boot}`)
  fields.push(`token=${o.token}`)
  return fields.join(' ')
}

/** What a lock's line says (undefined: not a lock line, as a lock left empty). */
function parseOwner(text: string): Owner | undefined {
  const [pidText, ...rest] = text.trim().split(/\s+/)
  const pid = Number(pidText)
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  const owner: Owner = { pid }
  for (const [i, field] of rest.entries()) {
    const eq = field.indexOf('=')
    if (eq < 0) {
      if (i === 0 && field !== '-') owner.started = field
      continue
    }
    const value = field.slice(eq + 1)
    const key = field.slice(0, eq)
    if (key === 'host') owner.host = decoded(value)
    else if (key === 'boot') owner.boot = value
    else if (key === 'token') owner.token = value
  }
  return owner
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** The machine's boot (Linux), or undefined: a lock from before it is stale. */
function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined
  } catch {
    return undefined
  }
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
