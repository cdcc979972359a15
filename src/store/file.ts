/**
 * The file-backed store: a lowdb snapshot (`sandbox.json`) plus an append-only journal of changes
 * (`sandbox.json.journal.G`). Each transaction is one JSON line, written and fdatasync'd before the
 * answer leaves (concurrent transactions share one fsync: group commit), so the cost of a write does
 * not grow with the data. The snapshot is rewritten only by compaction (when the journal grows past
 * a size, and at shutdown), under a new journal generation so appends never wait for it.
 *
 * Recovery: load the snapshot (seq S, generation G), replay every journal of generation >= G in
 * order, skipping lines with seq <= S; a torn last line is cut off, never fatal.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, unlinkSync, writeSync, ftruncateSync, existsSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { basename, dirname, resolve } from 'node:path'
import { Low } from 'lowdb'
import { COLLECTIONS, type Change, type CollectionName, type State } from '../core/state.js'
import { StreamingSnapshotFile, type SnapshotData } from './snapshot-file.js'
import { StoreError, type Store } from './types.js'

type Snapshot = SnapshotData

export interface FileStoreOptions {
  /** Compact when the current journal passes this many bytes. */
  compactBytes?: number
  /** Skip fsync (only for benchmarks that want to see the cost of it). */
  unsafeNoSync?: boolean
}

export class FileStore implements Store {
  readonly kind = 'file' as const
  readonly path: string
  private readonly dir: string
  private readonly lockPath: string
  private db!: Low<Snapshot | null>
  private state!: State
  private seq = 0
  private generation = 0
  private journal: FileHandle | null = null
  private journalBytes = 0
  private pending: string[] = []
  private pendingWaiters: { resolve: () => void; reject: (e: Error) => void }[] = []
  private flushing: Promise<void> | null = null
  private compacting: Promise<void> | null = null
  private locked = false
  private closed = false
  private failed: Error | null = null
  private readonly compactBytes: number
  private readonly unsafeNoSync: boolean
  recovered = { replayed: 0, tornBytes: 0 }

  constructor(path: string, opts: FileStoreOptions = {}) {
    this.path = resolve(path)
    this.dir = dirname(this.path)
    this.lockPath = `${this.path}.lock`
    this.compactBytes = opts.compactBytes ?? 64 * 1024 * 1024
    this.unsafeNoSync = opts.unsafeNoSync ?? false
  }

  private journalPath(gen: number): string {
    return `${this.path}.journal.${gen}`
  }

  /** Journal generations on disk, ascending. */
  private generations(): number[] {
    const prefix = `${basename(this.path)}.journal.`
    return readdirSync(this.dir)
      .filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
      .map((n) => Number(n.slice(prefix.length)))
      .sort((a, b) => a - b)
  }

  async open(state: State): Promise<void> {
    this.state = state
    try {
      mkdirSync(this.dir, { recursive: true })
    } catch (e) {
      throw new StoreError(`cannot create the data folder ${this.dir}: ${(e as NodeJS.ErrnoException).code}`)
    }
    this.lock()
    this.db = new Low<Snapshot | null>(new StreamingSnapshotFile(this.path, !this.unsafeNoSync), null)
    try {
      await this.db.read()
    } catch (e) {
      this.unlock()
      throw new StoreError(`the data file ${this.path} is not a dcb snapshot (${(e as Error).message}); move it away or pick another --data file`)
    }
    const snap = this.db.data
    if (snap && snap.format !== 'dcb-sandbox/1') {
      this.unlock()
      throw new StoreError(`the data file ${this.path} is not a dcb snapshot; move it away or pick another --data file`)
    }
    state.load((snap?.collections ?? {}) as Partial<Record<CollectionName, Record<string, unknown>>>)
    this.seq = snap?.seq ?? 0
    const base = snap?.generation ?? 0
    let gens = this.generations().filter((g) => g >= base)
    try {
      for (const g of gens) this.replay(g)
    } catch (e) {
      this.unlock()
      throw e
    }
    this.generation = gens.length ? gens[gens.length - 1]! : base
    // Older generations are covered by the snapshot.
    for (const g of this.generations()) if (g < base) unlinkSync(this.journalPath(g))
    gens = []
    this.journal = await open(this.journalPath(this.generation), 'a')
    this.journalBytes = (await this.journal.stat()).size
    if (!this.unsafeNoSync) fsyncDir(this.dir)
  }

  /** Replays one journal file; cuts a torn or corrupt tail so later appends start on a clean line. */
  private replay(gen: number): void {
    const file = this.journalPath(gen)
    const buf = readFileSync(file)
    let start = 0
    let good = 0
    let lineNo = 0
    while (start < buf.length) {
      const nl = buf.indexOf(10, start)
      if (nl < 0) break
      lineNo++
      const line = buf.subarray(start, nl).toString('utf8')
      let entry: { s: number; ch: Change[] }
      try {
        entry = JSON.parse(line)
        if (typeof entry.s !== 'number' || !Array.isArray(entry.ch)) throw new Error('not an entry')
      } catch {
        // A bad last line is a write the crash cut short; a bad line with complete lines after it is
        // damage that cutting would make worse: stop and say where.
        if (buf.indexOf(10, nl + 1) >= 0) {
          throw new StoreError(`the journal ${file} is damaged at line ${lineNo} (complete lines follow it); move it away to start from the snapshot alone`)
        }
        break
      }
      if (entry.s > this.seq) {
        for (const ch of entry.ch) this.state.apply(ch)
        this.seq = entry.s
        this.recovered.replayed++
      }
      start = nl + 1
      good = start
    }
    if (good < buf.length) {
      this.recovered.tornBytes += buf.length - good
      const fd = openSync(file, 'r+')
      try {
        ftruncateSync(fd, good)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
    }
  }

  append(changes: Change[]): Promise<void> {
    if (this.failed) return Promise.reject(this.failed)
    if (this.closed) return Promise.reject(new StoreError('the store is closed'))
    this.pending.push(JSON.stringify({ s: ++this.seq, ch: changes }) + '\n')
    const done = new Promise<void>((resolve, reject) => this.pendingWaiters.push({ resolve, reject }))
    if (!this.flushing) this.flushing = this.flushLoop()
    return done
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.pending.length) {
        const lines = this.pending
        const waiters = this.pendingWaiters
        this.pending = []
        this.pendingWaiters = []
        try {
          const data = Buffer.from(lines.join(''), 'utf8')
          const handle = this.journal!
          let off = 0
          while (off < data.length) off += (await handle.write(data, off, data.length - off)).bytesWritten
          if (!this.unsafeNoSync) await handle.datasync()
          this.journalBytes += data.length
          for (const w of waiters) w.resolve()
        } catch (e) {
          this.failed = new StoreError(`cannot write the journal of ${this.path}: ${(e as Error).message}`)
          for (const w of [...waiters, ...this.pendingWaiters]) w.reject(this.failed)
          this.pendingWaiters = []
          this.pending = []
          return
        }
      }
    } finally {
      this.flushing = null
    }
    if (this.journalBytes >= this.compactBytes && !this.compacting && !this.closed) void this.compact().catch(() => {})
  }

  async flush(): Promise<void> {
    while (this.flushing) await this.flushing
    if (this.failed) throw this.failed
  }

  /**
   * Writes a snapshot of the state as of now and starts a new journal generation. Appends go on
   * during the write; the old journal is removed once the snapshot is durable.
   */
  compact(): Promise<void> {
    if (this.compacting) return this.compacting
    this.compacting = (async () => {
      const newGen = this.generation + 1
      const next = await open(this.journalPath(newGen), 'a')
      // From here to the swap nothing awaits: the snapshot holds exactly the changes up to seq, and
      // every later line goes to the new journal.
      // Entries captured now (records are never changed after their transaction), written later.
      const collections: Snapshot['collections'] = {}
      for (const c of COLLECTIONS) collections[c] = [...(this.state[c] as Map<string, unknown>)]
      const snapshot: Snapshot = { format: 'dcb-sandbox/1', seq: this.seq, generation: newGen, saved_at: new Date().toISOString(), collections }
      const oldJournal = this.journal!
      this.journal = next
      this.journalBytes = 0
      this.generation = newGen
      await this.flush()
      await oldJournal.close()
      this.db.data = snapshot
      await this.db.write()
      // The snapshot holds records that later changes replace: let them go.
      this.db.data = null
      if (!this.unsafeNoSync) fsyncDir(this.dir)
      for (const g of this.generations()) if (g < newGen) unlinkSync(this.journalPath(g))
    })().finally(() => {
      this.compacting = null
    })
    return this.compacting
  }

  async close(): Promise<void> {
    if (this.closed) return
    try {
      await this.flush()
      if (this.compacting) await this.compacting
      if (!this.failed) await this.compact()
    } finally {
      this.closed = true
      await this.journal?.close().catch(() => {})
      this.journal = null
      this.unlock()
    }
  }

  info(): Record<string, unknown> {
    return { kind: this.kind, path: this.path, seq: this.seq, generation: this.generation, journal_bytes: this.journalBytes, recovered: this.recovered }
  }

  // ------------------------------------------------------------ one server per data file

  private lock(): void {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(this.lockPath, 'wx')
        writeSync(fd, `${process.pid}\n`)
        closeSync(fd)
        this.locked = true
        return
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new StoreError(`cannot lock ${this.path}: ${(e as NodeJS.ErrnoException).code}`)
      }
      let pid = NaN
      try {
        pid = Number(readFileSync(this.lockPath, 'utf8').trim())
      } catch {
        continue
      }
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid))
        throw new StoreError(`${this.path} is in use by another dcb server (pid ${pid}); stop it or pick another --data file`)
      // A stale lock from a server that is gone: take it over.
      try {
        unlinkSync(this.lockPath)
      } catch {
        /* another process took it over first; try again */
      }
    }
    throw new StoreError(`cannot lock ${this.path}: the lock file ${this.lockPath} keeps changing`)
  }

  private unlock(): void {
    if (!this.locked) return
    this.locked = false
    try {
      if (existsSync(this.lockPath) && readFileSync(this.lockPath, 'utf8').trim() === String(process.pid)) unlinkSync(this.lockPath)
    } catch {
      /* already gone */
    }
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

function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {
    /* some file systems cannot fsync a directory */
  }
}
