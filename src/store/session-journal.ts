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
 * session's lines of generation >= G with seq > S; a drop line forgets the session so far. A torn
 * last line is cut off, never fatal.
 */
import { closeSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, unlinkSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { COLLECTIONS, State, type Change, type CollectionName } from '../core/state.js'
import { StreamingSnapshotFile, type SnapshotData } from './snapshot-file.js'
import { StoreError, type Store } from './types.js'

const SNAPSHOT = /^([A-Za-z0-9._-]{1,64})\.json$/
const JOURNAL = /^journal\.(\d+)$/
/** Files of the first layout (a journal and a lock per session), read once and replaced. */
const LEGACY = /^([A-Za-z0-9._-]{1,64})\.json\.(?:journal\.(\d+)|lock)$/

interface Entry {
  state: State
  seq: number
  /** Changed since its snapshot (compaction writes a new one). */
  dirty: boolean
}

export interface SessionJournalOptions {
  /** Compact when the current journal passes this many bytes. */
  compactBytes?: number
  /** Skip fsync (only for benchmarks that want to see the cost of it). */
  unsafeNoSync?: boolean
}

export class SessionJournal {
  private readonly sessions = new Map<string, Entry>()
  private generation = 0
  private journal: FileHandle | null = null
  private journalBytes = 0
  private pending: string[] = []
  private waiters: { resolve: () => void; reject: (e: Error) => void }[] = []
  private flushing: Promise<void> | null = null
  private compacting: Promise<void> | null = null
  private failed: Error | null = null
  private closed = false
  private readonly compactBytes: number
  private readonly sync: boolean
  recovered = { replayed: 0, tornBytes: 0 }

  constructor(
    readonly folder: string,
    opts: SessionJournalOptions = {},
  ) {
    this.compactBytes = opts.compactBytes ?? 64 * 1024 * 1024
    this.sync = !opts.unsafeNoSync
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

  /** Reads the folder back (snapshots, then journals); answers the names of the stored sessions. */
  async open(): Promise<string[]> {
    try {
      mkdirSync(this.folder, { recursive: true })
    } catch (e) {
      throw new StoreError(`cannot create the sessions folder ${this.folder}: ${(e as NodeJS.ErrnoException).code}`)
    }
    const snapshotGen = new Map<string, number>()
    for (const f of readdirSync(this.folder)) {
      const m = SNAPSHOT.exec(f)
      if (!m) continue
      const name = m[1]!
      let snap: SnapshotData | null
      try {
        snap = await new StreamingSnapshotFile(this.snapshotPath(name)).read()
      } catch (e) {
        throw new StoreError(`the session file ${this.snapshotPath(name)} is not a dcb snapshot (${(e as Error).message}); move it away`)
      }
      if (!snap || snap.format !== 'dcb-sandbox/1') throw new StoreError(`the session file ${this.snapshotPath(name)} is not a dcb snapshot; move it away`)
      const state = new State()
      state.load(snap.collections as Partial<Record<CollectionName, Record<string, unknown>>>)
      this.sessions.set(name, { state, seq: snap.seq, dirty: false })
      snapshotGen.set(name, snap.generation)
    }
    const legacy = this.replayLegacy(snapshotGen)
    const gens = this.generations()
    for (const g of gens) this.replay(g, snapshotGen)
    this.generation = gens.length ? gens[gens.length - 1]! : 0
    this.journal = await open(this.journalPath(this.generation), 'a')
    this.journalBytes = (await this.journal.stat()).size
    if (this.sync) fsyncDir(this.folder)
    if (legacy.length) {
      // Snapshots in this layout first, then the old files can go.
      await this.compact()
      for (const f of legacy) rmSync(join(this.folder, f), { force: true })
    }
    return [...this.sessions.keys()].sort()
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
      if (!entry) this.sessions.set(name, (entry = { state: new State(), seq: 0, dirty: true }))
      // Its snapshot counts generations of its own journal: shared journal lines all apply.
      snapshotGen.delete(name)
      entry.dirty = true
      for (const text of readFileSync(join(this.folder, file), 'utf8').split('\n')) {
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

  private replay(gen: number, snapshotGen: Map<string, number>): void {
    const file = this.journalPath(gen)
    const buf = readFileSync(file)
    let start = 0
    let good = 0
    let lineNo = 0
    while (start < buf.length) {
      const nl = buf.indexOf(10, start)
      if (nl < 0) break
      lineNo++
      let line: { n: string; s?: number; ch?: Change[]; drop?: 1 }
      try {
        line = JSON.parse(buf.subarray(start, nl).toString('utf8'))
        if (typeof line.n !== 'string' || (line.drop !== 1 && (typeof line.s !== 'number' || !Array.isArray(line.ch)))) throw new Error('not an entry')
      } catch {
        if (buf.indexOf(10, nl + 1) >= 0)
          throw new StoreError(
            `the sessions journal ${file} is damaged at line ${lineNo} (complete lines follow it); move it away to start from the snapshots alone`,
          )
        break
      }
      start = good = nl + 1
      // Lines older than the session's snapshot are in it already.
      if (gen < (snapshotGen.get(line.n) ?? -1)) continue
      if (line.drop === 1) {
        this.sessions.delete(line.n)
        snapshotGen.delete(line.n)
        continue
      }
      let entry = this.sessions.get(line.n)
      if (!entry) this.sessions.set(line.n, (entry = { state: new State(), seq: 0, dirty: true }))
      if (line.s! > entry.seq) {
        for (const ch of line.ch!) entry.state.apply(ch)
        entry.seq = line.s!
        entry.dirty = true
        this.recovered.replayed++
      }
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

  /** The store of session `name`: what was stored for it, or a new session (recorded at once, so it survives a restart). */
  async store(name: string): Promise<SessionStore> {
    let entry = this.sessions.get(name)
    if (!entry) {
      this.sessions.set(name, (entry = { state: new State(), seq: 0, dirty: true }))
      await this.append(name, 0, [])
    }
    return new SessionStore(this, name, entry.state)
  }

  /** Appends one transaction of session `name`; resolves once it is durable (with the others of its flush). */
  append(name: string, seq: number, changes: Change[]): Promise<void> {
    const entry = this.sessions.get(name)
    // A line of a deleted session would bring it back at the next start.
    if (!entry) return Promise.reject(new StoreError(`the session ${name} was deleted`))
    if (seq > 0) {
      entry.seq = seq
      entry.dirty = true
    }
    return this.write(JSON.stringify({ n: name, s: seq, ch: changes }) + '\n')
  }

  /** The next seq of session `name`. */
  nextSeq(name: string): number {
    return (this.sessions.get(name)?.seq ?? 0) + 1
  }

  /** Forgets session `name`: a durable drop line, then its snapshot file is removed. */
  async drop(name: string): Promise<void> {
    if (this.compacting) await this.compacting
    this.sessions.delete(name)
    await this.write(JSON.stringify({ n: name, drop: 1 }) + '\n')
    rmSync(this.snapshotPath(name), { force: true })
  }

  private write(line: string): Promise<void> {
    if (this.failed) return Promise.reject(this.failed)
    if (this.closed) return Promise.reject(new StoreError('the sessions store is closed'))
    this.pending.push(line)
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }))
    if (!this.flushing) this.flushing = this.flushLoop()
    return done
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.pending.length) {
        const lines = this.pending
        const waiters = this.waiters
        this.pending = []
        this.waiters = []
        try {
          const data = Buffer.from(lines.join(''), 'utf8')
          const handle = this.journal!
          let off = 0
          while (off < data.length) off += (await handle.write(data, off, data.length - off)).bytesWritten
          if (this.sync) await handle.datasync()
          this.journalBytes += data.length
          for (const w of waiters) w.resolve()
        } catch (e) {
          this.failed = new StoreError(`cannot write the sessions journal in ${this.folder}: ${(e as Error).message}`)
          for (const w of [...waiters, ...this.waiters]) w.reject(this.failed)
          this.waiters = []
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
   * Starts a new journal generation and writes a snapshot of every session changed since its last
   * one; the old journals are removed once those are durable. Appends go on meanwhile.
   */
  compact(): Promise<void> {
    if (this.compacting) return this.compacting
    this.compacting = (async () => {
      const newGen = this.generation + 1
      const next = await open(this.journalPath(newGen), 'a')
      // From here to the swap nothing awaits: each snapshot holds exactly its session's changes up
      // to its seq, and every later line goes to the new journal.
      const snapshots: [string, SnapshotData][] = []
      for (const [name, entry] of this.sessions) {
        if (!entry.dirty) continue
        const collections: SnapshotData['collections'] = {}
        for (const c of COLLECTIONS) collections[c] = [...(entry.state[c] as Map<string, unknown>)]
        snapshots.push([name, { format: 'dcb-sandbox/1', seq: entry.seq, generation: newGen, saved_at: new Date().toISOString(), collections }])
        entry.dirty = false
      }
      const old = this.journal!
      this.journal = next
      this.journalBytes = 0
      this.generation = newGen
      await this.flush()
      await old.close()
      for (const [name, snap] of snapshots) if (this.sessions.has(name)) await new StreamingSnapshotFile(this.snapshotPath(name), this.sync).write(snap)
      if (this.sync) fsyncDir(this.folder)
      for (const g of this.generations()) if (g < newGen) unlinkSync(this.journalPath(g))
    })().finally(() => {
      this.compacting = null
    })
    return this.compacting
  }

  /** Everything appended is durable already; closing waits for it and releases the journal. */
  async close(): Promise<void> {
    if (this.closed) return
    try {
      await this.flush()
      if (this.compacting) await this.compacting
    } finally {
      this.closed = true
      await this.journal?.close().catch(() => {})
      this.journal = null
    }
  }

  info(name: string): Record<string, unknown> {
    return {
      kind: 'file',
      path: this.snapshotPath(name),
      seq: this.sessions.get(name)?.seq ?? 0,
      generation: this.generation,
      journal_bytes: this.journalBytes,
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
  append(changes: Change[]): Promise<void> {
    return this.journal.append(this.name, this.journal.nextSeq(this.name), changes)
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
