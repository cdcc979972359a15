/**
 * The store of the named sessions (X-DCB-Session): one journal for all of them, so a write in any
 * session costs a share of one fdatasync, not a file and an fsync of its own (with 1,000 live
 * sessions, one fsync per session made the write p99 grow with their number).
 *
 * Layout, in the sessions folder beside the default data file (`sandbox.json.sessions/`):
 * - `journal.G`: JSON lines `{"n": NAME, "s": SEQ, "ch": [changes]}` (a transaction of session NAME)
 *   or `{"n": NAME, "drop": 1}` (the session was deleted). Appends from every session are written
 *   and fdatasync'd together before their answers leave (group commit).
 * - `NAME.json`: a session's snapshot, in the default data file's format (`dcb-sandbox/1`: seq,
 *   generation, collections), written by compaction under a new journal generation.
 *
 * Recovery: load each snapshot (seq S, generation G); replay the journals in order, applying a
 * session's lines with seq > S, and its drop lines of generation >= G; a drop forgets the session so far (the lines
 * before a session's last drop are not applied: they may change records of the snapshot the drop
 * removed). A torn last line is cut off and reported; any other damage (a complete line that does
 * not parse, an unknown record, a bad snapshot field) refuses the start naming file and line,
 * changing nothing.
 */
import { existsSync, readdirSync, rmSync, unlinkSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { COLLECTIONS, State, type Change, type CollectionName } from '../core/state.js'
import { Compaction } from './compaction.js'
import { applyAll, listOrRefuse, readOrRefuse, sizeOf, snapshotProblem } from './file.js'
import { makeDirs } from './folders.js'
import { before, lastDrops, lineProblem, type LinePlace } from './session-lines.js'
import { StreamingSnapshotFile, type SnapshotData } from './snapshot-file.js'
import { StoreError, type Store } from './types.js'
import { cutTornTails, tornTail, type TornTail } from './torn-tail.js'
import { describeError, fsyncDir, linesEnd, WriteAheadLog, type StoreIo } from './wal.js'

const SNAPSHOT = /^([A-Za-z0-9._-]{1,64})\.json$/
const JOURNAL = /^journal\.(\d+)$/
/** Files of the first layout (a journal and a lock per session), read once and replaced. */
const LEGACY = /^([A-Za-z0-9._-]{1,64})\.json\.(?:journal\.(\d+)|lock)$/

interface Entry {
  state: State
  seq: number
  /** The seq of its snapshot on disk (undefined: none yet). Changed since it: compaction writes a new one. */
  saved: number | undefined
}

const dirty = (e: Entry) => e.saved !== e.seq

export interface SessionJournalOptions {
  /** Compact when the current journal passes this many bytes (or the sessions' snapshots, when larger). */
  compactBytes?: number
  /** Skip fsync (only for benchmarks that want to see the cost of it). */
  unsafeNoSync?: boolean
  /** Where writes and fsyncs can be made to fail (tests). */
  io?: StoreIo
}

export class SessionJournal {
  private readonly sessions = new Map<string, Entry>()
  private generation = 0
  private readonly wal: WriteAheadLog
  private readonly compaction: Compaction
  private closed = false
  private readonly sync: boolean
  private readonly io: StoreIo | undefined
  recovered = { replayed: 0, tornBytes: 0, notes: [] as string[] }

  constructor(
    readonly folder: string,
    opts: SessionJournalOptions = {},
  ) {
    this.sync = !opts.unsafeNoSync
    this.io = opts.io
    this.wal = new WriteAheadLog({
      pathOf: (gen) => this.journalPath(gen),
      dir: folder,
      describe: `the sessions journal in ${folder}`,
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

  private journalPath(gen: number): string {
    return join(this.folder, `journal.${gen}`)
  }
  private snapshotPath(name: string): string {
    return join(this.folder, `${name}.json`)
  }
  private generations(): number[] {
    return readdirSync(this.folder)
      .map((f) => JOURNAL.exec(f))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b)
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
   * Reads and checks the folder (snapshots, then journals) into memory, writing nothing: a damaged
   * file (a complete line that does not parse, an unknown record, a bad snapshot field) refuses the
   * start with one message naming the file and line, and the files stay as they were; a torn last
   * line is noted and left for `activate` to cut. Answers the names of the stored sessions.
   */
  load(): Promise<string[]> {
    return (this.loaded ??= this.read())
  }

  private async read(): Promise<string[]> {
    if (!existsSync(this.folder)) return []
    const snapshotGen = this.snapshotGen
    for (const f of listOrRefuse(this.folder, 'the sessions folder')) {
      const m = SNAPSHOT.exec(f)
      if (!m) continue
      const name = m[1]!
      const file = this.snapshotPath(name)
      let snap: SnapshotData | null
      try {
        snap = await new StreamingSnapshotFile(file).read()
      } catch (e) {
        if (e instanceof StoreError) throw e
        throw new StoreError(`the session file ${file} is not a dcb snapshot (${(e as Error).message}); move it away`)
      }
      if (!snap || snap.format !== 'dcb-sandbox/1') throw new StoreError(`the session file ${file} is not a dcb snapshot; move it away`)
      const problem = snapshotProblem(snap)
      if (problem) throw new StoreError(`the session file ${file} is damaged at line 1: ${problem}; nothing was changed: move it away or repair it`)
      const state = new State()
      state.load(snap.collections as Partial<Record<CollectionName, Record<string, unknown>>>)
      this.sessions.set(name, { state, seq: snap.seq, saved: snap.seq })
      snapshotGen.set(name, snap.generation)
    }
    this.legacy = this.replayLegacy(snapshotGen)
    const gens = this.generations()
    const journals = gens.map((gen) => ({ gen, buf: readOrRefuse(this.journalPath(gen), 'the sessions journal') }))
    // Appends go to a generation no snapshot is newer than: a session's lines of a generation
    // older than its snapshot's are skipped at replay (its journals may be gone, or never were).
    const newestSnapshot = Math.max(0, ...snapshotGen.values())
    const drops = lastDrops(journals)
    for (const { gen, buf } of journals) this.replay(gen, buf, snapshotGen, drops)
    this.generation = Math.max(gens.length ? gens[gens.length - 1]! : 0, newestSnapshot)
    this.compaction.snapshotBytes = this.sizeOfSnapshots()
    return [...this.sessions.keys()].sort()
  }
  private readonly snapshotGen = new Map<string, number>()
  /** Files of the first layout found by `load`, replaced by `activate`. */
  private legacy: string[] = []
  /** Torn journal tails found by `load`, cut by `activate`. */
  private torn: TornTail[] = []

  /** Once the server is bound: makes the folder, cuts torn tails, opens the journal, replaces the first layout. */
  activate(): Promise<void> {
    return (this.activated ??= (async () => {
      await this.load()
      try {
        makeDirs(this.folder)
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
   * Sessions stored by the first layout (one journal per session, `NAME.json.journal.G`, lines
   * `{"s", "ch"}` over the snapshot `NAME.json`): replayed into memory; answers their files.
   */
  private replayLegacy(snapshotGen: Map<string, number>): string[] {
    const files: string[] = []
    const journals: { name: string; gen: number; file: string }[] = []
    for (const f of readdirSync(this.folder)) {
      const m = LEGACY.exec(f)
      if (!m) continue
      files.push(f)
      if (m[2] !== undefined) journals.push({ name: m[1]!, gen: Number(m[2]), file: f })
    }
    journals.sort((a, b) => a.gen - b.gen)
    for (const { name, file } of journals) {
      let entry = this.sessions.get(name)
      if (!entry) this.sessions.set(name, (entry = { state: new State(), seq: 0, saved: undefined }))
      // Its snapshot counts generations of its own journal: shared journal lines all apply.
      snapshotGen.delete(name)
      entry.saved = undefined
      for (const text of readOrRefuse(join(this.folder, file), 'the session journal').toString('utf8').split('\n')) {
        let line: { s: number; ch: Change[] }
        try {
          line = JSON.parse(text)
        } catch {
          continue // an empty or torn last line
        }
        if (typeof line.s !== 'number' || !Array.isArray(line.ch) || line.s <= entry.seq) continue
        for (const ch of line.ch) entry.state.apply(ch)
        entry.seq = line.s
        this.recovered.replayed++
      }
    }
    return files
  }

  /** Replays one journal file (checked line by line). Only a last line without its newline is dropped; `activate` cuts it off. */
  private replay(gen: number, buf: Buffer, snapshotGen: Map<string, number>, drops: Map<string, LinePlace>): void {
    const file = this.journalPath(gen)
    // The lines end at the first NUL byte: past it is space zeroed ahead of the writes.
    const end = linesEnd(buf)
    let start = 0
    let lineNo = 0
    while (start < end) {
      const nl = buf.indexOf(10, start)
      if (nl < 0 || nl > end) break
      lineNo++
      let line: { n: string; s?: number; ch?: Change[]; drop?: 1 }
      let problem: string | undefined
      try {
        line = JSON.parse(buf.subarray(start, nl).toString('utf8'))
        problem = lineProblem(line)
      } catch {
        problem = 'not JSON'
      }
      const damaged = (problem: string) =>
        new StoreError(
          `the sessions journal ${file} is damaged at line ${lineNo} (${problem}); nothing was changed: move it away to start from the snapshots alone, or repair that line`,
        )
      if (problem) throw damaged(problem)
      const at = start
      start = nl + 1
      // Lines before the session's last drop are forgotten by it. One of a generation older than its snapshot's
      // is in it by its seq, not its generation (an earlier dcb appended there after the snapshot, once its journals were gone).
      const drop = drops.get(line!.n)
      if (drop && before({ gen, at }, drop)) continue
      if (line!.drop === 1) {
        if (gen < (snapshotGen.get(line!.n) ?? -1)) continue // the session was made again since: the snapshot is the new one's
        this.sessions.delete(line!.n)
        snapshotGen.delete(line!.n)
        continue
      }
      let entry = this.sessions.get(line!.n)
      if (!entry) this.sessions.set(line!.n, (entry = { state: new State(), seq: 0, saved: undefined }))
      if (line!.s! > entry.seq) {
        const cannot = applyAll(entry.state, line!.ch!)
        if (cannot) throw damaged(cannot)
        entry.seq = line!.s!
        this.recovered.replayed++
      }
    }
    // Cut back to the last line: what a write cut short left, and the zeroed space (zeroed again as writes need it).
    const tail = tornTail(file, buf, start)
    if (tail) {
      this.recovered.tornBytes += tail.bytes
      if (tail.note) this.recovered.notes.push(tail.note)
      this.torn.push(tail)
    }
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
   */
  append(name: string, seq: number, changes: Change[], undo?: () => void): Promise<void> {
    const entry = this.sessions.get(name)
    // A line of a deleted session would bring it back at the next start.
    // Refused before the log: the engine still puts its state back, as for a failed write.
    if (!entry || this.closed) {
      undo?.()
      return Promise.reject(new StoreError(entry ? 'the sessions store is closed' : `the session ${name} was deleted`))
    }
    if (seq > 0) entry.seq = seq
    return this.wal.append(JSON.stringify({ n: name, s: seq, ch: changes }) + '\n', undo)
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
   * Starts a new journal generation and writes a snapshot of every session changed since its last
   * one (each written, fsynced and read back whole before it replaces the old one; a session is
   * marked saved only then); the old journals are removed once all of them are. A compaction that
   * fails keeps the journals, and is tried again after a later write.
   */
  compact(): Promise<void> {
    return this.compaction.start()
  }

  /** A compaction's work: a new journal generation, the changed sessions' snapshots as of the swap; answers all snapshots' size. */
  private async writeSnapshots(): Promise<number> {
    const snapshots: [string, Entry, SnapshotData][] = []
    const gen = await this.wal.rotate((newGen) => {
      // Each snapshot holds exactly its session's changes up to its seq; later lines go to the new journal.
      for (const [name, entry] of this.sessions) {
        if (!dirty(entry)) continue
        const collections: SnapshotData['collections'] = {}
        for (const c of COLLECTIONS) collections[c] = [...(entry.state[c] as Map<string, unknown>)]
        snapshots.push([name, entry, { format: 'dcb-sandbox/1', seq: entry.seq, generation: newGen, saved_at: new Date().toISOString(), collections }])
      }
      this.generation = newGen
    })
    for (const [name, entry, snap] of snapshots) {
      if (this.sessions.get(name) !== entry) continue
      await new StreamingSnapshotFile(this.snapshotPath(name), this.sync, this.io).write(snap)
      entry.saved = snap.seq
    }
    // A snapshot that is not its session's own (a dropped session's that a crash or a failed removal
    // left, under a name perhaps made again since) goes before the journals holding the drop: else the
    // next start would bring the dropped session back, or lay a new one's lines over the old records.
    for (const f of readdirSync(this.folder)) {
      const m = SNAPSHOT.exec(f)
      if (m && this.sessions.get(m[1]!)?.saved === undefined) unlinkSync(join(this.folder, f))
    }
    if (this.sync) fsyncDir(this.folder, this.io)
    for (const g of this.generations()) if (g < gen) unlinkSync(this.journalPath(g))
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
   * Shutdown: a snapshot of every session changed since its last one, then the journal is
   * released. One that cannot be written leaves the journals in place (the next start recovers
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

  info(name: string): Record<string, unknown> {
    return {
      kind: 'file',
      path: this.snapshotPath(name),
      seq: this.sessions.get(name)?.seq ?? 0,
      generation: this.generation,
      journal_bytes: this.wal.bytes,
    }
  }

  /** The state stored for session `name` (empty for a new one). */
  stateOf(name: string): State | undefined {
    return this.sessions.get(name)?.state
  }
}

/** One session's view of the shared journal, as the engine's Store. */
export class SessionStore implements Store {
  readonly kind = 'file' as const
  constructor(
    private readonly journal: SessionJournal,
    readonly name: string,
    /** The session's state as stored (the engine works on this one). */
    readonly state: State,
  ) {}

  /** The state is loaded by the journal already (`state` is that state). */
  async open(state: State): Promise<void> {
    if (state !== this.state) throw new StoreError('a session store opens only on its own state')
  }
  load(state: State): Promise<void> {
    return this.open(state)
  }
  /** Sessions are opened once the server is bound: nothing waits to be written. */
  async activate(): Promise<void> {}
  async abandon(): Promise<void> {}
  append(changes: Change[], undo?: () => void): Promise<void> {
    return this.journal.append(this.name, this.journal.nextSeq(this.name), changes, undo)
  }
  flush(): Promise<void> {
    return this.journal.flush()
  }
  /** The journal is shared: the registry closes it once for all sessions. */
  async close(): Promise<void> {
    await this.journal.flush().catch(() => {})
  }
  info(): Record<string, unknown> {
    return this.journal.info(this.name)
  }
}
