/**
 * The one replay of write-ahead log lines into sessions' states, for every layout on disk: a data
 * file's own log (`{"s", "ch"}`, one session), the sessions' shared log (`{"n", "s", "ch"}` or
 * `{"n", "drop": 1}`), and a session's log of the first layout (a data file's format, named after
 * its session). A layout differs only in how it decodes a line (`LogFormat`); the replay is the same.
 *
 * A line applies to its session when its seq is past the session's. A torn last line is left to
 * `readLogLines` (kept to cut once the server is bound, and said); any other damage (a complete
 * line that does not decode, a change that cannot apply) refuses the start naming file and line.
 */
import { State, type Change } from '../core/state.js'
import { readLogLines, type Recovered, type TornTail } from './torn-tail.js'
import { StoreError } from './types.js'

/** A session as stored: its state and where it is in the log. */
export interface SessionEntry {
  state: State
  seq: number
  /** The seq of its snapshot on disk (undefined: none yet). Changed since it: compaction writes a new one. */
  saved: number | undefined
}

/** One decoded line: a transaction of session `n`, or its drop (the session was deleted). */
export type LogLine = { n: string; s: number; ch: Change[]; drop?: undefined } | { n: string; drop: 1 }

/** How a layout's log reads: its lines' decoding, and the words its damage is refused in. */
export interface LogFormat {
  /** The log as the refusal names it: "the write-ahead log". */
  what: string
  /** What the start has once the log is moved away: "the snapshot alone". */
  alone: string
  /** One line's entry, or what is wrong with it. */
  decode(text: string): LogLine | { problem: string }
}

/** A place in the logs: the generation, and the byte where a line starts. */
export interface LinePlace {
  gen: number
  at: number
}

/** Whether `a` comes before `b` in the logs. */
export const before = (a: LinePlace, b: LinePlace): boolean => a.gen < b.gen || (a.gen === b.gen && a.at < b.at)

/** What a replay fills: the sessions, and what the start found (lines replayed, torn tails to cut). */
export interface ReplayInto {
  sessions: Map<string, SessionEntry>
  recovered: Recovered
  torn: TornTail[]
  /** The log generation of each session's snapshot: a drop line older than it is an earlier session's of that name. */
  snapshotGen: Map<string, number>
  /** Each session's last drop line (shared log only): the lines before it are forgotten by it. */
  drops?: Map<string, LinePlace>
}

/** Applies a log line's changes; answers what is wrong when one cannot apply (fields changed in a record that is not there). */
export function applyAll(state: State, changes: Change[]): string | undefined {
  try {
    for (const ch of changes) state.apply(ch)
  } catch (e) {
    return (e as Error).message
  }
}

/** Replays one log file of generation `gen`, read into `buf`, line by line into `into`. */
export function replayLog(file: string, gen: number, buf: Buffer, format: LogFormat, into: ReplayInto): void {
  readLogLines(file, buf, into.recovered, into.torn, (text, lineNo, at) => {
    const damaged = (problem: string) =>
      new StoreError(
        `${format.what} ${file} is damaged at line ${lineNo} (${problem}); nothing was changed: move it away to start from ${format.alone}, or repair that line`,
      )
    const line = format.decode(text)
    if ('problem' in line) throw damaged(line.problem)
    // Lines before the session's last drop are forgotten by it. One of a generation older than its snapshot's
    // is in it by its seq, not its generation (an earlier dcb appended there after the snapshot, once its logs were gone).
    const drop = into.drops?.get(line.n)
    if (drop && before({ gen, at }, drop)) return
    if (line.drop === 1) {
      if (gen < (into.snapshotGen.get(line.n) ?? -1)) return // the session was made again since: the snapshot is the new one's
      into.sessions.delete(line.n)
      into.snapshotGen.delete(line.n)
      return
    }
    let entry = into.sessions.get(line.n)
    if (!entry) into.sessions.set(line.n, (entry = { state: new State(), seq: 0, saved: undefined }))
    if (line.s > entry.seq) {
      const cannot = applyAll(entry.state, line.ch)
      if (cannot) throw damaged(cannot)
      entry.seq = line.s
      into.recovered.replayed++
    }
  })
}
