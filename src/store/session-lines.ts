/**
 * The lines of the sessions' shared write-ahead log (see session-wal.ts): what a line must look like,
 * and where each session was last deleted.
 */
import { SESSION_NAME } from '../contract/defaults.js'
import { changesProblem, isCount, isObject } from './file.js'
import type { LinePlace } from './replay.js'
import { linesEnd } from './wal.js'

/** What is wrong with one line of the sessions' log, if anything. */
export function lineProblem(e: unknown): string | undefined {
  if (!isObject(e) || typeof e.n !== 'string' || !SESSION_NAME.test(e.n)) return "not a sessions' write-ahead log entry { n, s, ch } or { n, drop }"
  if (e.drop !== undefined) return e.drop === 1 && e.s === undefined && e.ch === undefined ? undefined : 'a drop that is not { n, drop: 1 }'
  if (!isCount(e.s) || !Array.isArray(e.ch)) return "not a sessions' write-ahead log entry { n, s, ch } or { n, drop }"
  return changesProblem(e.ch)
}

const DROP_END = Buffer.from('"drop":1}\n')

/**
 * Where each session's last drop line is, over the logs in order. A session's lines before it
 * need no applying (the drop forgets the session so far), and cannot be applied when they change
 * records of the snapshot the drop removed (the log keeps a changed record as its changed fields).
 * Only drop lines end so (a transaction's line ends with its list of changes); a line that does not
 * parse is left for the replay to name.
 */
export function lastDrops(logs: readonly { gen: number; buf: Buffer }[]): Map<string, LinePlace> {
  const out = new Map<string, LinePlace>()
  for (const { gen, buf } of logs) {
    const end = linesEnd(buf)
    for (let i = buf.indexOf(DROP_END); i >= 0 && i < end; i = buf.indexOf(DROP_END, i + 1)) {
      const at = buf.lastIndexOf(10, i) + 1
      let line: { n?: unknown; drop?: unknown }
      try {
        line = JSON.parse(buf.subarray(at, i + DROP_END.length - 1).toString('utf8'))
      } catch {
        continue
      }
      if (!lineProblem(line) && line.drop === 1) out.set(line.n as string, { gen, at })
    }
  }
  return out
}
