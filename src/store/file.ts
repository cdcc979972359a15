/**
 * A data file with a write-ahead log of its own: a lowdb snapshot (`sandbox.json`) plus an
 * append-only log of changes (`sandbox.json.journal.G`). `dcb seed` writes data files so; `dcb
 * serve` reads them (and those of earlier versions) and moves their default session into the
 * sessions' one write-ahead log (`file-sessions.ts`), using this store for the lock and the read. Each transaction is one JSON line, written and fdatasync'd before the
 * answer leaves (concurrent transactions share one fsync: group commit), so the cost of a write does
 * not grow with the data. The snapshot is rewritten only by compaction (compaction.ts says when, and at
 * shutdown), under a new log generation so appends never wait for it.
 *
 * Recovery: load the snapshot (seq S, generation G), replay every log of generation >= G in
 * order (`replay.ts`), skipping lines with seq <= S. A torn last line (no newline) is cut off and reported; any other
 * damage (a complete line that does not parse, an unknown record, a bad snapshot field) refuses the
 * start naming file and line, and nothing on disk changes.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, unlinkSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import type { Low } from 'lowdb'
import { COLLECTIONS, type Change, type CollectionName, type State } from '../core/state.js'
import { Compaction } from './compaction.js'
import { StreamingSnapshotFile, type SnapshotData } from './snapshot-file.js'
import { StoreError, type Store } from './types.js'
import { makeDirs, removeMadeDirs } from './folders.js'
import { DataFileLock } from './lock.js'
import { cutTornTails, type TornTail } from './torn-tail.js'
import { replayLog, type LogFormat } from './replay.js'
import { describeError, fsyncDir, WriteAheadLog, type StoreIo } from './wal.js'
import { fileKind, readOrRefuse, sizeOf } from './read-files.js'

export { fileKind, listOrRefuse, readOrRefuse, sizeOf } from './read-files.js'

type Snapshot = SnapshotData

export interface FileStoreOptions {
  /** Compact when the current log passes this many bytes (or the snapshot's size, when larger). */
  compactBytes?: number
  /** Skip fsync (only for benchmarks that want to see the cost of it). */
  unsafeNoSync?: boolean
  /** Where writes and fsyncs can be made to fail (tests). */
  io?: StoreIo
}

export class FileStore implements Store {
  readonly kind = 'file' as const
  readonly path: string
  private readonly dir: string
  private readonly lock: DataFileLock
  private db!: Low<Snapshot | null>
  private state!: State
  private seq = 0
  private generation = 0
  private readonly wal: WriteAheadLog
  private readonly compaction: Compaction
  private closed = false
  private readonly io: StoreIo | undefined
  private readonly unsafeNoSync: boolean
  recovered = { replayed: 0, tornBytes: 0, notes: [] as string[] }
  /** Torn log tails found by `load`, cut by `activate`. */
  private torn: TornTail[] = []
  /** The generation of the loaded snapshot. */
  private base = 0
  /** The seq of the snapshot on disk (undefined: none yet). Changed since it: shutdown writes a new one. */
  private saved: number | undefined
  /** The folders `load` made for the data file: removed again if the start fails and they are empty. */
  private madeDirs: string[] = []
  /** What `load` found: a snapshot whose generation counts the sessions' log (`sessions`), this store's own layout, or nothing. */
  found: 'sessions' | 'own' | 'none' = 'none'

  constructor(path: string, opts: FileStoreOptions = {}) {
    this.path = throughLink(resolve(path))
    this.dir = dirname(this.path)
    this.lock = new DataFileLock(this.path)
    this.unsafeNoSync = opts.unsafeNoSync ?? false
    this.io = opts.io
    this.wal = new WriteAheadLog({
      pathOf: (gen) => this.logPath(gen),
      dir: this.dir,
      describe: `the write-ahead log of ${this.path}`,
      sync: !this.unsafeNoSync,
      io: opts.io,
    })
    this.compaction = new Compaction(this.wal, {
      minBytes: opts.compactBytes,
      closed: () => this.closed,
      run: () => this.writeSnapshot(),
      failed: (e) => new StoreError(`cannot compact ${this.path}: ${describeError(e)}`),
    })
  }

  private logPath(gen: number): string {
    return `${this.path}.journal.${gen}`
  }

  /** Log generations on disk, ascending. */
  private generations(): number[] {
    const prefix = `${basename(this.path)}.journal.`
    return readdirSync(this.dir)
      .filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
      .map((n) => Number(n.slice(prefix.length)))
      .sort((a, b) => a - b)
  }

  async open(state: State): Promise<void> {
    await this.load(state)
    await this.activate()
  }

  /**
   * Reads and checks everything (snapshot, every log) into `state` and takes the lock, writing
   * nothing: a damaged file refuses the start with one message naming the file and line, and the
   * files stay as they were. `activate` does the writes (cutting a torn tail, opening the log).
   */
  async load(state: State): Promise<void> {
    this.state = state
    // A folder given for the file (`--data adir`): said before anything is made or locked beside it.
    const found = statSync(this.path, { throwIfNoEntry: false })
    if (found?.isDirectory()) throw new StoreError(`the data file ${this.path} is a folder: give a file path, e.g. --data ${join(this.path, 'sandbox.json')}`)
    if (found && !found.isFile()) throw new StoreError(`the data file ${this.path} is ${fileKind(found)}, not a regular file: give a file path`)
    try {
      this.madeDirs = makeDirs(this.dir)
    } catch (e) {
      throw new StoreError(`cannot create the data folder ${this.dir}: ${(e as NodeJS.ErrnoException).code}`)
    }
    try {
      this.lock.take()
    } catch (e) {
      this.dropMadeDirs()
      throw e
    }
    try {
      // lowdb is loaded by the file store when it loads (`--in-memory` and `--store` never need it).
      const { Low } = await import('lowdb')
      this.db = new Low<Snapshot | null>(new StreamingSnapshotFile(this.path, !this.unsafeNoSync, this.io), null)
      try {
        await this.db.read()
      } catch (e) {
        if (e instanceof StoreError) throw e
        const code = (e as NodeJS.ErrnoException).code
        if (code) throw new StoreError(`cannot read the data file ${this.path}: ${code}`)
        throw new StoreError(`the data file ${this.path} is not a dcb snapshot (${(e as Error).message}); move it away or pick another --data file`)
      }
      const snap = this.db.data
      this.compaction.snapshotBytes = snap ? sizeOf(this.path) : 0
      if (snap && snap.format !== 'dcb-sandbox/1') {
        throw new StoreError(`the data file ${this.path} is not a dcb snapshot; move it away or pick another --data file`)
      }
      if (snap) {
        const problem = snapshotProblem(snap)
        if (problem) throw new StoreError(`the data file ${this.path} is damaged at line 1: ${problem}; nothing was changed: move it away or repair it`)
      }
      state.load((snap?.collections ?? {}) as Partial<Record<CollectionName, Record<string, unknown>>>)
      this.seq = snap?.seq ?? 0
      this.saved = snap?.seq
      const base = snap?.generation ?? 0
      const own = this.generations()
      this.found = snap?.log === 'sessions' ? 'sessions' : snap || own.length ? 'own' : 'none'
      // Written in the sessions' log's layout, a log of its own is one a start that moved it there left (all in the snapshot).
      const gens = this.found === 'sessions' ? [] : own.filter((g) => g >= base)
      // Only a last line without its newline (a write a crash cut short) is dropped; `activate` cuts it off.
      const entry = { state, seq: this.seq, saved: this.saved }
      const into = { sessions: new Map([[OWN, entry]]), recovered: this.recovered, torn: this.torn, snapshotGen: new Map<string, number>() }
      for (const g of gens) replayLog(this.logPath(g), g, readOrRefuse(this.logPath(g), 'the write-ahead log'), ownLog(OWN), into)
      this.seq = entry.seq
      this.generation = gens.length ? gens[gens.length - 1]! : base
      this.base = base
    } catch (e) {
      this.lock.release()
      this.dropMadeDirs()
      throw e
    }
  }

  /** After a successful start: cuts torn tails, drops logs the snapshot covers, opens the log for appends. */
  async activate(): Promise<void> {
    cutTornTails(this.torn)
    this.torn = []
    // Older generations are covered by the snapshot.
    for (const g of this.generations()) if (g < this.base) unlinkSync(this.logPath(g))
    await this.wal.start(this.generation)
  }

  /**
   * A start that failed (after `load`, or after `activate` too): releases the data file without a
   * snapshot. Nothing is written; what `activate` made (an empty log, the folders) is taken back,
   * and whatever the logs hold is read by the next start.
   */
  async abandon(): Promise<void> {
    this.closed = true
    await this.wal.discard()
    this.lock.release()
    this.dropMadeDirs()
  }

  /** What `load` read: the seq, the seq of the snapshot on disk and its generation. */
  loaded(): { seq: number; saved: number | undefined; generation: number } {
    return { seq: this.seq, saved: this.saved, generation: this.base }
  }

  /** The logs' torn tails cut as `activate` cuts them (damage past the zeroed space copied aside first: a copy that cannot be made throws). */
  cutTails(): void {
    cutTornTails(this.torn)
    this.torn = []
  }

  /** The logs removed, once what they held is in a snapshot elsewhere (the sessions' log took it over). */
  removeLogs(): void {
    const gens = this.generations()
    if (!gens.length) return
    for (const g of gens) unlinkSync(this.logPath(g))
    if (!this.unsafeNoSync) fsyncDir(this.dir, this.io)
  }

  /** The lock given back (the sessions' log wrote what this store read). */
  release(): void {
    this.closed = true
    this.lock.release()
  }

  /** A start that failed leaves no folder behind that it made and left empty (the default `.dcb/`). */
  private dropMadeDirs(): void {
    removeMadeDirs(this.madeDirs)
    this.madeDirs = []
  }

  /**
   * Logs one transaction; resolves once it is durable. When it cannot be made durable `undo`
   * runs (the engine puts its state back) and the promise rejects with a StoreError.
   */
  append(changes: Change[], undo?: () => void): Promise<void> {
    if (this.closed) {
      undo?.()
      return Promise.reject(new StoreError('the store is closed'))
    }
    // Before `activate` (the server not yet bound) changes wait in memory: a failed start writes nothing.
    return this.wal.append(JSON.stringify({ s: ++this.seq, ch: changes }) + '\n', undo)
  }

  async flush(): Promise<void> {
    await this.wal.flush()
    if (this.wal.failure) throw this.wal.failure
  }

  /** The error writes answer while they fail (health says it), or null. */
  failure(): StoreError | null {
    return this.wal.failure
  }

  /**
   * Writes a snapshot of the state as of now and starts a new log generation. Appends go on
   * during the write; the old logs are removed once the snapshot is durable and read back
   * whole. A compaction that fails keeps the logs and the old snapshot, and is tried again
   * after a later write.
   */
  compact(): Promise<void> {
    return this.compaction.start()
  }

  /** A compaction's work: a new log generation, the snapshot as of the swap; answers its size on disk. */
  private async writeSnapshot(): Promise<number> {
    let snapshot!: Snapshot
    const gen = await this.wal.rotate((newGen) => {
      // Entries captured now (records are never changed after their transaction), written later.
      const collections: Snapshot['collections'] = {}
      for (const c of COLLECTIONS) collections[c] = [...(this.state[c] as Map<string, unknown>)]
      snapshot = { format: 'dcb-sandbox/1', seq: this.seq, generation: newGen, saved_at: new Date().toISOString(), collections }
      this.generation = newGen
    })
    this.db.data = snapshot
    try {
      await this.db.write()
    } finally {
      // The snapshot holds records that later changes replace: let them go.
      this.db.data = null
    }
    if (!this.unsafeNoSync) fsyncDir(this.dir, this.io)
    this.saved = snapshot.seq
    for (const g of this.generations()) if (g < gen) unlinkSync(this.logPath(g))
    return sizeOf(this.path)
  }

  /** Whether the state changed since the snapshot on disk (shutdown writes one). */
  private get changed(): boolean {
    return this.seq !== this.saved
  }

  /**
   * Writes the snapshot when the state changed since the last one, and releases the data file. A
   * server started and stopped without a write leaves the snapshot as it was. A snapshot that cannot
   * be written leaves the logs in place (the next start recovers every acknowledged write from
   * them) and throws.
   */
  async close(): Promise<void> {
    if (this.closed) return
    try {
      await this.wal.flush()
      await this.compaction.settled()
      if (this.wal.started && this.changed) await this.compact()
    } finally {
      this.closed = true
      await this.wal.close()
      this.lock.release()
    }
  }

  info(): Record<string, unknown> {
    return { kind: this.kind, path: this.path, seq: this.seq, generation: this.generation, journal_bytes: this.wal.bytes, recovered: this.recovered }
  }
}

const RECORD_COLLECTIONS = new Set<string>(['subs', 'verifs', 'sms', 'rules'])
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
export const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0

/** What is wrong with one stored record of a collection, if anything (the fields the state's indexes read). */
function recordProblem(c: string, id: unknown, v: unknown): string | undefined {
  if (!(COLLECTIONS as string[]).includes(c)) return `unknown record type "${c}"`
  if (typeof id !== 'string') return `a ${c} record without a string id`
  if (v === null || v === undefined) return
  if (c === 'counters') return typeof v === 'number' && Number.isFinite(v) ? undefined : `counter "${id}" is not a number`
  if (!RECORD_COLLECTIONS.has(c)) return
  if (!isObject(v)) return `${c} record "${id}" is not an object`
  if ((c === 'subs' || c === 'sms') && typeof v.msisdn !== 'string') return `${c} record "${id}" has no msisdn`
  if (c === 'subs' && !Array.isArray(v.charges) && v.charges !== undefined) return `subs record "${id}" has charges that are not a list`
  if (c === 'sms' && typeof v.n !== 'number') return `sms record "${id}" has no number n`
}

/** What is wrong with a change that gives only the fields that changed, if anything. */
function mergeProblem(c: string, id: unknown, merge: unknown, v: unknown): string | undefined {
  if (merge !== true) return '"merge" that is not true'
  if (c !== 'subs' && c !== 'verifs' && c !== 'rules') return `fields changed in a ${c} record (only subs, verifs and rules records change)`
  if (typeof id !== 'string') return `a ${c} record without a string id`
  if (!isObject(v)) return `the changed fields of ${c} record "${id}" are not an object`
  if (c === 'subs' && v.charges !== undefined && !Array.isArray(v.charges)) return `subs record "${id}" has charges that are not a list`
}

/** What is wrong with one log line's entry, if anything. */
function entryProblem(e: unknown): string | undefined {
  if (!isObject(e) || !isCount(e.s) || !Array.isArray(e.ch)) return 'not a write-ahead log entry { s, ch }'
  return changesProblem(e.ch)
}

/** The session a data file's own log is replayed into (its lines name none). */
const OWN = 'default'

/**
 * The lines of a log of one session (`{"s", "ch"}`): a data file's own log, and a session's log
 * of the first layout. They name no session: they are `name`'s.
 */
export function ownLog(name: string): LogFormat {
  return {
    what: 'the write-ahead log',
    alone: 'the snapshot alone',
    decode(text) {
      let entry: { s: number; ch: Change[] }
      let problem: string | undefined
      try {
        entry = JSON.parse(text)
        problem = entryProblem(entry)
      } catch {
        problem = 'not JSON'
      }
      return problem ? { problem } : { n: name, s: entry!.s, ch: entry!.ch }
    },
  }
}

/** What is wrong with a log line's list of changes, if anything (the sessions' log checks its lines by this too). */
export function changesProblem(list: unknown[]): string | undefined {
  for (const ch of list) {
    if (!isObject(ch)) return 'a change that is not an object'
    if ('reset' in ch) {
      if (ch.reset !== true) return 'a reset that is not true'
      continue
    }
    const p = ch.merge === undefined ? recordProblem(String(ch.c), ch.id, ch.v) : mergeProblem(String(ch.c), ch.id, ch.merge, ch.v)
    if (p) return p
    if (ch.add !== undefined && (!Array.isArray(ch.add) || ch.c !== 'subs')) return 'charges added to something other than a subscription'
    if (ch.keep !== undefined && !isCount(ch.keep)) return '"keep" is not a count'
  }
}

/** What is wrong with a snapshot's fields, if anything. */
export function snapshotProblem(snap: SnapshotData): string | undefined {
  if (!isCount(snap.seq)) return '"seq" is not a whole number'
  if (!isCount(snap.generation)) return '"generation" is not a whole number'
  if (!isObject(snap.collections)) return '"collections" is not an object'
  for (const [c, records] of Object.entries(snap.collections)) {
    if (!(COLLECTIONS as string[]).includes(c)) return `unknown record type "${c}"`
    if (!isObject(records)) return `collection "${c}" is not an object`
    for (const [id, v] of Object.entries(records)) {
      const p = recordProblem(c, id, v)
      if (p) return p
    }
  }
}

/**
 * The file a data path names: through a symbolic link, the file it points to. Its lock and logs
 * go beside that one, so a server started through the link and one started on the file share them
 * (the second is refused), and the snapshot replaces the file, not the link.
 */
function throughLink(path: string): string {
  try {
    if (!lstatSync(path).isSymbolicLink()) return path
  } catch {
    return path // none yet: made as named
  }
  try {
    return realpathSync(path)
  } catch {
    return resolve(dirname(path), readlinkSync(path)) // a link to a file not made yet (its server wrote no snapshot yet)
  }
}
