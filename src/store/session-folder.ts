/**
 * The sessions folder on disk (beside the default data file: `sandbox.json.sessions/`), and reading
 * it back at start-up; session-wal.ts writes it while the server runs.
 *
 * Layout:
 * - `journal.G`: JSON lines `{"n": NAME, "s": SEQ, "ch": [changes]}` (a transaction of session NAME)
 *   or `{"n": NAME, "drop": 1}` (the session was deleted). Appends from every session are written
 *   and fdatasync'd together before their answers leave (group commit).
 * - `NAME.json`: a session's snapshot, in the default data file's format (`dcb-sandbox/1`: seq,
 *   generation, collections), written by compaction under a new log generation.
 *
 * Recovery: load each snapshot (seq S, generation G); replay the logs in order, applying a
 * session's lines with seq > S, and its drop lines of generation >= G; a drop forgets the session so far (the lines
 * before a session's last drop are not applied: they may change records of the snapshot the drop
 * removed). A torn last line is cut off and reported; any other damage (a complete line that does
 * not parse, an unknown record, a bad snapshot field) refuses the start naming file and line,
 * changing nothing.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { State, type CollectionName } from '../core/state.js'
import { listOrRefuse, ownLog, readOrRefuse, snapshotProblem } from './file.js'
import { replayLog, type LogFormat, type LogLine, type SessionEntry } from './replay.js'
import { lastDrops, lineProblem } from './session-lines.js'
import { StreamingSnapshotFile, type SnapshotData } from './snapshot-file.js'
import { StoreError } from './types.js'
import { type TornTail } from './torn-tail.js'

/** A session's snapshot file: `NAME.json`. */
export const SNAPSHOT = /^([A-Za-z0-9._-]{1,64})\.json$/
const LOG = /^journal\.(\d+)$/
/** Files of the first layout (a log and a lock per session), read once and replaced. */
const LEGACY = /^([A-Za-z0-9._-]{1,64})\.json\.(?:journal\.(\d+)|lock)$/

export const logPath = (folder: string, gen: number): string => join(folder, `journal.${gen}`)
export const snapshotPath = (folder: string, name: string): string => join(folder, `${name}.json`)

/** The generations of the logs in the folder, ascending. */
export function generations(folder: string): number[] {
  return readdirSync(folder)
    .map((f) => LOG.exec(f))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
}

export type { SessionEntry } from './replay.js'

/** A session read from elsewhere (the default one, from the data file) before the folder's log is replayed over it. */
export interface SeedSession {
  name: string
  entry: SessionEntry
  /** The log generation its snapshot was written under (its lines of older ones are in it). */
  generation: number
}

/** What reading the folder back found. */
export interface FolderContents {
  sessions: Map<string, SessionEntry>
  /** The generation appends go to: no snapshot is newer. */
  generation: number
  /** Files of the first layout, to replace once the server is bound. */
  legacy: string[]
  /** Log tails past the last complete line, to cut once the server is bound. */
  torn: TornTail[]
  recovered: { replayed: number; tornBytes: number; notes: string[] }
}

/**
 * Reads and checks the folder (snapshots, then logs) into memory, writing nothing: a damaged
 * file refuses the start with one message naming the file and line.
 */
export async function readSessionsFolder(folder: string, seed?: SeedSession): Promise<FolderContents> {
  const found: FolderContents = { sessions: new Map(), generation: 0, legacy: [], torn: [], recovered: { replayed: 0, tornBytes: 0, notes: [] } }
  const snapshotGen = new Map<string, number>()
  if (seed) {
    found.sessions.set(seed.name, seed.entry)
    snapshotGen.set(seed.name, seed.generation)
    found.generation = seed.generation
  }
  if (!existsSync(folder)) return found
  for (const f of listOrRefuse(folder, 'the sessions folder')) {
    const m = SNAPSHOT.exec(f)
    if (!m) continue
    const name = m[1]!
    const file = snapshotPath(folder, name)
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
    found.sessions.set(name, { state, seq: snap.seq, saved: snap.seq })
    snapshotGen.set(name, snap.generation)
  }
  found.legacy = replayLegacy(folder, found, snapshotGen)
  const gens = generations(folder)
  const logs = gens.map((gen) => ({ gen, buf: readOrRefuse(logPath(folder, gen), "the sessions' write-ahead log") }))
  // Appends go to a generation no snapshot is newer than: a session's lines of a generation
  // older than its snapshot's are skipped at replay (its logs may be gone, or never were).
  const newestSnapshot = Math.max(0, ...snapshotGen.values())
  const drops = lastDrops(logs)
  const into = { sessions: found.sessions, recovered: found.recovered, torn: found.torn, snapshotGen, drops }
  for (const { gen, buf } of logs) replayLog(logPath(folder, gen), gen, buf, SHARED_LOG, into)
  found.generation = Math.max(gens.length ? gens[gens.length - 1]! : 0, newestSnapshot)
  return found
}

/**
 * Sessions stored by the first layout (one log per session, `NAME.json.journal.G`, in a data file's
 * own format over the snapshot `NAME.json`): replayed into memory; answers their files.
 */
function replayLegacy(folder: string, found: FolderContents, snapshotGen: Map<string, number>): string[] {
  const files: string[] = []
  const logs: { name: string; gen: number; file: string }[] = []
  for (const f of readdirSync(folder)) {
    const m = LEGACY.exec(f)
    if (!m) continue
    files.push(f)
    if (m[2] !== undefined) logs.push({ name: m[1]!, gen: Number(m[2]), file: f })
  }
  logs.sort((a, b) => a.gen - b.gen)
  // A session's log holds no drops, and its generations are its own: the shared log's drops do not order its lines.
  const into = { sessions: found.sessions, recovered: found.recovered, torn: found.torn, snapshotGen }
  for (const { name, gen, file } of logs) {
    const entry = found.sessions.get(name)
    if (!entry) found.sessions.set(name, { state: new State(), seq: 0, saved: undefined })
    else entry.saved = undefined
    // Its snapshot counts generations of its own log: shared log lines all apply.
    snapshotGen.delete(name)
    const path = join(folder, file)
    replayLog(path, gen, readOrRefuse(path, "a session's write-ahead log"), ownLog(name), into)
  }
  return files
}

/** The lines of the sessions' shared log: each names its session. */
const SHARED_LOG: LogFormat = {
  what: "the sessions' write-ahead log",
  alone: 'the snapshots alone',
  decode(text) {
    let line: LogLine
    let problem: string | undefined
    try {
      line = JSON.parse(text)
      problem = lineProblem(line)
    } catch {
      problem = 'not JSON'
    }
    return problem ? { problem } : line!
  },
}
