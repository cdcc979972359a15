/**
 * The store of every session of a data file (the default one and those of X-DCB-Session): one
 * write-ahead log for all of them, so a write in any session costs a share of one fdatasync, not a
 * file and an fsync of its own (with 1,000 live sessions, one fsync per session made the write p99
 * grow with their number). The default session's snapshot is the data file itself.
 *
 * The folder's files and how a start reads them back are in session-folder.ts; this file keeps the
 * sessions while the server runs: appends, drops, compaction (a snapshot per changed session under a
 * new log generation) and shutdown.
 */
import { readdirSync, rmSync, unlinkSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { COLLECTIONS, State, type Change } from '../core/state.js'
import { Compaction } from './compaction.js'
import { sizeOf } from './file.js'
import { makeDirs, removeMadeDirs } from './folders.js'
import { generations, logPath, readSessionsFolder, SNAPSHOT, snapshotPath, type SeedSession, type SessionEntry } from './session-folder.js'
import { StreamingSnapshotFile, type SnapshotData } from './snapshot-file.js'
import { StoreError, type Store } from './types.js'
import { cutTornTails, type TornTail } from './torn-tail.js'
import { describeError, fsyncDir, WriteAheadLog, type StoreIo } from './wal.js'

type Entry = SessionEntry

const dirty = (e: Entry) => e.saved !== e.seq

export interface SessionWalOptions {
  /** Compact when the current log passes this many bytes (or the sessions' snapshots, when larger). */
  compactBytes?: number
  /** Skip fsync (only for benchmarks that want to see the cost of it). */
  unsafeNoSync?: boolean
  /** Where writes and fsyncs can be made to fail (tests). */
  io?: StoreIo
  /** The default session's snapshot: the data file (without it, the folder keeps named sessions only). */
  dataFile?: string
}

/** The name of the default session's lines in the write-ahead log. */
const DEFAULT = 'default'

export class SessionWal {
  private readonly sessions = new Map<string, Entry>()
  private generation = 0
  private readonly wal: WriteAheadLog
  private readonly compaction: Compaction
  private closed = false
  private readonly sync: boolean
  private readonly io: StoreIo | undefined
  private readonly dataFile: string | undefined
  /** The default session as the data file held it, replayed over by the log (`seedDefault`). */
  private seed: SeedSession | undefined
  recovered = { replayed: 0, tornBytes: 0, notes: [] as string[] }

  constructor(
    readonly folder: string,
    opts: SessionWalOptions = {},
  ) {
    this.sync = !opts.unsafeNoSync
    this.io = opts.io
    this.dataFile = opts.dataFile
    this.wal = new WriteAheadLog({
      pathOf: (gen) => this.logPath(gen),
      dir: folder,
      describe: `the sessions' write-ahead log in ${folder}`,
      sync: this.sync,
      io: opts.io,
    })
    this.compaction = new Compaction(this.wal, {
      minBytes: opts.compactBytes,
      closed: () => this.closed,
      run: () => this.writeSnapshots(),
      failed: (e) => new StoreError(`cannot compact the sessions in ${this.folder}: ${describeError(e)}`),
    })
  }

  private logPath(gen: number): string {
    return logPath(this.folder, gen)
  }
  private snapshotPath(name: string): string {
    return name === DEFAULT && this.dataFile ? this.dataFile : snapshotPath(this.folder, name)
  }

  /**
   * The default session as read from the data file, before `load`: its state as of `seq`, the seq
   * of its snapshot on disk in this layout (`saved`; undefined: none, compaction writes one) and
   * the log generation that snapshot was written under.
   */
  seedDefault(state: State, seq: number, saved: number | undefined, generation: number): void {
    this.seed = { name: DEFAULT, entry: { state, seq, saved }, generation }
  }

  /** The store of a session `load` found (the default one: always there). */
  storeOf(name: string): SessionStore {
    const entry = this.sessions.get(name)
    if (!entry) throw new StoreError(`no session ${name} is stored`)
    return new SessionStore(this, name, entry.state)
  }
  private generations(): number[] {
    return generations(this.folder)
  }

  /** Reads the folder back (`load`) and makes it ready for appends (`activate`); answers the names of the stored sessions. */
  async open(): Promise<string[]> {
    const names = await this.load()
    await this.activate()
    return names
  }
  private loaded: Promise<string[]> | undefined
  private activated: Promise<void> | undefined

  /**
   * Reads and checks the folder (snapshots, then logs) into memory, writing nothing: a damaged
   * file (a complete line that does not parse, an unknown record, a bad snapshot field) refuses the
   * start with one message naming the file and line, and the files stay as they were; a torn last
   * line is noted and left for `activate` to cut. Answers the names of the stored sessions.
   */
  load(): Promise<string[]> {
    return (this.loaded ??= this.read())
  }

  private async read(): Promise<string[]> {
    const found = await readSessionsFolder(this.folder, this.seed)
    for (const [name, entry] of found.sessions) this.sessions.set(name, entry)
    this.generation = found.generation
    this.legacy = found.legacy
    this.torn = found.torn
    Object.assign(this.recovered, found.recovered)
    this.compaction.snapshotBytes = this.sizeOfSnapshots()
    return [...this.sessions.keys()].filter((name) => name !== DEFAULT || !this.dataFile).sort()
  }
  /** Files of the first layout found by `load`, replaced by `activate`. */
  private legacy: string[] = []
  /** The folders `activate` made: taken back by `abandon` while they are empty. */
  private madeDirs: string[] = []
  /** Torn log tails found by `load`, cut by `activate`. */
  private torn: TornTail[] = []

  /** Once the server is bound: makes the folder, cuts torn tails, opens the log, replaces the first layout. */
  activate(): Promise<void> {
    return (this.activated ??= (async () => {
      await this.load()
      try {
        this.madeDirs = makeDirs(this.folder)
      } catch (e) {
        throw new StoreError(`cannot create the sessions folder ${this.folder}: ${(e as NodeJS.ErrnoException).code}`)
      }
      cutTornTails(this.torn)
      this.torn = []
      await this.wal.start(this.generation)
      if (this.legacy.length) {
        // Snapshots in this layout first, then the old files can go.
        await this.compact()
        for (const f of this.legacy) rmSync(join(this.folder, f), { force: true })
      }
    })())
  }

  /**
   * The store of session `name`: what was stored for it, or a new session (recorded at once, so it
   * survives a restart; a record that cannot be written makes no session and throws).
   */
  async store(name: string): Promise<SessionStore> {
    let entry = this.sessions.get(name)
    if (!entry) {
      const made = (entry = { state: new State(), seq: 0, saved: undefined })
      this.sessions.set(name, made)
      await this.append(name, 0, [], () => {
        if (this.sessions.get(name) === made) this.sessions.delete(name)
      })
    }
    return new SessionStore(this, name, entry.state)
  }

  /**
   * Appends one transaction of session `name`; resolves once it is durable (with the others of its
   * flush). When it cannot be made durable `undo` runs and the promise rejects with a StoreError.
   * `soft`: nobody waits for it (`WriteAheadLog.append`).
   */
  append(name: string, seq: number, changes: Change[], undo?: () => void, soft = false): Promise<void> {
    const entry = this.sessions.get(name)
    // A line of a deleted session would bring it back at the next start.
    // Refused before the log: the engine still puts its state back, as for a failed write.
    if (!entry || this.closed) {
      undo?.()
      return Promise.reject(new StoreError(entry ? 'the sessions store is closed' : `the session ${name} was deleted`))
    }
    if (seq > 0) entry.seq = seq
    return this.wal.append(JSON.stringify({ n: name, s: seq, ch: changes }) + '\n', undo, soft)
  }

  /** The next seq of session `name`. */
  nextSeq(name: string): number {
    return (this.sessions.get(name)?.seq ?? 0) + 1
  }

  /** Forgets session `name`: a durable drop line (a failed one keeps the session), then its snapshot file goes (or the next compaction removes it). */
  async drop(name: string): Promise<void> {
    await this.compaction.settled()
    const entry = this.sessions.get(name)
    this.sessions.delete(name)
    await this.wal.append(JSON.stringify({ n: name, drop: 1 }) + '\n', () => {
      if (entry && !this.sessions.has(name)) this.sessions.set(name, entry)
    })
    await rm(this.snapshotPath(name), { force: true }).catch(() => {})
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
   * Starts a new log generation and writes a snapshot of every session changed since its last
   * one (each written, fsynced and read back whole before it replaces the old one; a session is
   * marked saved only then); the old logs are removed once all of them are. A compaction that
   * fails keeps the logs, and is tried again after a later write.
   */
  compact(): Promise<void> {
    return this.compaction.start()
  }

  /** A compaction's work: a new log generation, the changed sessions' snapshots as of the swap; answers all snapshots' size. */
  private async writeSnapshots(): Promise<number> {
    const snapshots: [string, Entry, SnapshotData][] = []
    const gen = await this.wal.rotate((newGen) => {
      // Each snapshot holds exactly its session's changes up to its seq; later lines go to the new log.
      for (const [name, entry] of this.sessions) {
        if (!dirty(entry)) continue
        const collections: SnapshotData['collections'] = {}
        for (const c of COLLECTIONS) collections[c] = [...(entry.state[c] as Map<string, unknown>)]
        const snap: SnapshotData = { format: 'dcb-sandbox/1', seq: entry.seq, generation: newGen, saved_at: new Date().toISOString(), collections }
        // The data file says its generation counts this log's, not its own logs' (an earlier version's).
        if (name === DEFAULT && this.dataFile) snap.log = 'sessions'
        snapshots.push([name, entry, snap])
      }
      this.generation = newGen
    })
    for (const [name, entry, snap] of snapshots) {
      if (this.sessions.get(name) !== entry) continue
      await new StreamingSnapshotFile(this.snapshotPath(name), this.sync, this.io).write(snap)
      entry.saved = snap.seq
    }
    // A snapshot that is not its session's own (a dropped session's that a crash or a failed removal
    // left, under a name perhaps made again since) goes before the logs holding the drop: else the
    // next start would bring the dropped session back, or lay a new one's lines over the old records.
    for (const f of readdirSync(this.folder)) {
      const m = SNAPSHOT.exec(f)
      if (m && this.sessions.get(m[1]!)?.saved === undefined) unlinkSync(join(this.folder, f))
    }
    if (this.sync) fsyncDir(this.folder, this.io)
    // The data file is renamed in its own folder: that one holds its new name.
    if (this.sync && this.dataFile && snapshots.some(([name]) => name === DEFAULT)) fsyncDir(dirname(this.dataFile), this.io)
    for (const g of this.generations()) if (g < gen) unlinkSync(this.logPath(g))
    return this.sizeOfSnapshots()
  }

  private sizeOfSnapshots(): number {
    let bytes = 0
    for (const name of this.sessions.keys()) bytes += sizeOf(this.snapshotPath(name))
    return bytes
  }

  /** Whether a session changed since its last snapshot (shutdown writes one). */
  private get changed(): boolean {
    for (const entry of this.sessions.values()) if (dirty(entry)) return true
    return false
  }

  /**
   * Shutdown: a snapshot of every session changed since its last one, then the log is
   * released. One that cannot be written leaves the logs in place (the next start recovers
   * from them) and throws.
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
    }
  }

  /**
   * A start that failed (the server's other stores, or this one's `activate`): the log is
   * released without a snapshot; what `activate` made (an empty log, the folder) is taken back.
   */
  async abandon(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.wal.discard()
    removeMadeDirs(this.madeDirs)
  }

  info(name: string): Record<string, unknown> {
    return {
      kind: 'file',
      path: this.snapshotPath(name),
      seq: this.sessions.get(name)?.seq ?? 0,
      generation: this.generation,
      journal_bytes: this.wal.bytes,
      // What the start recovered, said with the default session (the data file's).
      ...(name === DEFAULT && this.dataFile ? { recovered: this.recovered } : {}),
    }
  }

  /** The state stored for session `name` (empty for a new one). */
  stateOf(name: string): State | undefined {
    return this.sessions.get(name)?.state
  }
}

/** One session's view of the shared log, as the engine's Store. */
export class SessionStore implements Store {
  readonly kind = 'file' as const
  constructor(
    private readonly log: SessionWal,
    readonly name: string,
    /** The session's state as stored (the engine works on this one). */
    readonly state: State,
  ) {}

  /** The state is loaded by the log already (`state` is that state). */
  async open(state: State): Promise<void> {
    if (state !== this.state) throw new StoreError('a session store opens only on its own state')
  }
  load(state: State): Promise<void> {
    return this.open(state)
  }
  /** Sessions are opened once the server is bound: nothing waits to be written. */
  async activate(): Promise<void> {}
  async abandon(): Promise<void> {}
  append(changes: Change[], undo?: () => void, soft?: boolean): Promise<void> {
    return this.log.append(this.name, this.log.nextSeq(this.name), changes, undo, soft)
  }
  flush(): Promise<void> {
    return this.log.flush()
  }
  /** The log is shared: the registry closes it once for all sessions. */
  async close(): Promise<void> {
    await this.log.flush().catch(() => {})
  }
  info(): Record<string, unknown> {
    return this.log.info(this.name)
  }
}
