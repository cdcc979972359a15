/**
 * What a log holds past its last complete line, and cutting it off at start-up (both file
 * stores). Usually a write a crash cut short: a part of a line, then the space zeroed ahead of the
 * writes. Bytes past a run of zeros are different: a write whose later pages reached the disk before
 * its first ones, or damage to lines that were written whole. The two cannot be told apart, so those
 * bytes are copied beside the log (FILE.cut-OFFSET) before the cut: nothing that may have been
 * acknowledged is thrown away unseen.
 */
import { closeSync, fsyncSync, ftruncateSync, openSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { StoreError } from './types.js'
import { dataEnd, describeError, fsyncDir, linesEnd } from './wal.js'

export interface TornTail {
  file: string
  /** Where the log's complete lines end: it is cut back to here. */
  good: number
  /** The bytes cut that are not zero (0: only the zeroed space, nothing to say). */
  bytes: number
  /** The bytes kept in a copy before the cut (those past a run of zeros), and the copy's path. */
  copy?: { path: string; data: Buffer }
  /** What the start-up says of it (none when only zeroed space is cut). */
  note?: string
}

/** What a start found reading the logs back: lines replayed, bytes cut, what it says of them. */
export interface Recovered {
  replayed: number
  tornBytes: number
  notes: string[]
}

/**
 * Reads a log file's complete lines (they end at its first NUL byte: past it is space zeroed ahead
 * of the writes), each to `line` with its number from 1 and its offset; then keeps its torn tail, if
 * any, in `torn` (cut once the server is bound) and counts it in `recovered`. A line `line` throws on
 * stops the reading.
 */
export function readLogLines(
  file: string,
  buf: Buffer,
  recovered: Recovered,
  torn: TornTail[],
  line: (text: string, lineNo: number, at: number) => void,
): void {
  const end = linesEnd(buf)
  let start = 0
  let lineNo = 0
  while (start < end) {
    const nl = buf.indexOf(10, start)
    if (nl < 0 || nl > end) break
    line(buf.subarray(start, nl).toString('utf8'), ++lineNo, start)
    start = nl + 1
  }
  const tail = tornTail(file, buf, start)
  if (tail) {
    recovered.tornBytes += tail.bytes
    if (tail.note) recovered.notes.push(tail.note)
    torn.push(tail)
  }
}

/** The tail of a log read into `buf` whose complete lines end at `good`, or undefined when it has none. */
export function tornTail(file: string, buf: Buffer, good: number): TornTail | undefined {
  if (good >= buf.length) return undefined
  const end = dataEnd(buf, good)
  const bytes = end - good
  if (bytes <= 0) return { file, good, bytes: 0 }
  const zerosAt = linesEnd(buf)
  if (zerosAt >= end)
    return { file, good, bytes, note: `dropped the torn last line of ${file} (${bytes} bytes without a newline: a write cut short by a crash)` }
  const data = Buffer.from(buf.subarray(good, end))
  const lines =
    data
      .subarray(zerosAt - good)
      .toString('latin1')
      .split('\n').length - 1
  const path = `${file}.cut-${good}`
  return {
    file,
    good,
    bytes,
    copy: { path, data },
    note:
      `dropped the torn last line of ${file} (${bytes} bytes from byte ${good}, past a run of zero bytes at ${zerosAt}, ${lines} complete line${lines === 1 ? '' : 's'} among them: ` +
      `a write cut short by a crash, or damage); they are kept in ${path}`,
  }
}

/** Cuts each log back to its last complete line, durably; bytes past a run of zeros are copied first. */
export function cutTornTails(torn: readonly TornTail[]): void {
  for (const t of torn) {
    if (t.copy) keepCopy(t.file, t.copy.path, t.copy.data)
    try {
      const fd = openSync(t.file, 'r+')
      try {
        ftruncateSync(fd, t.good)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
    } catch (e) {
      throw new StoreError(`cannot cut the torn last line of ${t.file} (${describeError(e)}); it is kept as it was`)
    }
  }
}

/** Writes the copy whole and durably (its name too), or refuses the start: the log is then not cut. */
function keepCopy(log: string, path: string, data: Buffer): void {
  try {
    // An older copy of the same bytes (a start that failed after it) is replaced.
    const fd = openSync(path, 'w')
    try {
      if (writeSync(fd, data) !== data.length) throw new Error('short write')
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    fsyncDir(dirname(path))
  } catch (e) {
    throw new StoreError(`cannot keep the bytes past a run of zeros in ${log} (${describeError(e)}): it is kept as it was`)
  }
}
