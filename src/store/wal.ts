/**
 * The write-ahead log both file stores share (the default data file's log and the sessions'
 * shared log), so a fix to how they write reaches both:
 * - Group commit: the lines appended in one turn of the event loop go out together at its end, in
 *   one write that is durable when it returns (the log is opened O_DSYNC: no fdatasync after it);
 *   each append resolves once its line is durable. That write is made on the main thread: a trip to
 *   the thread pool cost more CPU than the write itself (waking a worker, then the loop), and the
 *   requests that arrive while it blocks are taken in one turn after it, so the next group is bigger.
 *   A group larger than 64 KiB (a long clock move) is written from the thread pool.
 * - Checked writes: every byte is written or the write failed (a short write is a failed write).
 * - A failed write (ENOSPC, EIO, a failed fsync, anything) fails every transaction of its group and
 *   every one queued behind it (they were built on it): each is undone in memory, the latest first,
 *   before any of them is told. The log's tail past the last durable byte may hold part of that
 *   write: it is cut back before the next write, so writing resumes by itself once it can.
 * - Generations: compaction starts a new log file and writes snapshots; logs it replaces
 *   are removed only after those are durable and read back whole.
 */
import { closeSync, constants, existsSync, fsyncSync, openSync, rmSync, write, writeSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { StoreError } from './types.js'

/**
 * Where a store's writes and fsyncs can be made to fail (tests inject faults here, below the store,
 * on real files). `beforeWrite` may throw (the write fails) or answer how many of the bytes the
 * write puts (a short write); `beforeSync` may throw (the fsync fails).
 */
export interface StoreIo {
  beforeWrite?(file: string, bytes: number): number | void
  beforeSync?(file: string): void
}

/**
 * Writes all of `data` at `position` (null: where the file's offset is); anything less is an error.
 * Off the main thread, for large writes (snapshots, zeroing ahead); through the callback API on the
 * handle's descriptor (a FileHandle's promise costs ~20 µs of CPU more per write).
 */
export async function writeAll(handle: FileHandle, file: string, data: Buffer, io?: StoreIo, position: number | null = null): Promise<void> {
  const len = allowedBytes(io, file, data)
  checkWhole(file, len > 0 ? await writeAt(handle.fd, data, len, position) : 0, data)
}

/** `writeAll` on the main thread (the log's group write: see the top of this file). */
function writeAllNow(fd: number, file: string, data: Buffer, io: StoreIo | undefined, position: number): void {
  const len = allowedBytes(io, file, data)
  checkWhole(file, len > 0 ? writeSync(fd, data, 0, len, position) : 0, data)
}

/** How many of the bytes the fault seam lets a write put (all of them without a fault; it may throw). */
function allowedBytes(io: StoreIo | undefined, file: string, data: Buffer): number {
  const allowed = io?.beforeWrite?.(file, data.length)
  return typeof allowed === 'number' ? Math.min(allowed, data.length) : data.length
}

/** A write that put less than all of its bytes failed. */
function checkWhole(file: string, bytesWritten: number, data: Buffer): void {
  if (bytesWritten !== data.length) throw new StoreError(`short write to ${file}: ${bytesWritten} of ${data.length} bytes`)
}

function writeAt(fd: number, data: Buffer, len: number, position: number | null): Promise<number> {
  return new Promise<number>((resolve, reject) => write(fd, data, 0, len, position, (e, n) => (e ? reject(e) : resolve(n))))
}

/**
 * Logs are written into space zeroed ahead of the writes, this much at a time: an O_DSYNC write
 * inside the file's size needs no metadata commit (here ~30% quicker and ~20% less CPU than one
 * that grows the file). Zeros are never part of a line (JSON has no raw NUL): a log's lines end
 * at its first NUL byte.
 */
const ZEROED_STEP = 2 ** 20
let zeros: Buffer | undefined

/** Where a log's lines end: at its first NUL byte (the space zeroed ahead of its writes), or its end. */
export function linesEnd(buf: Buffer): number {
  const i = buf.indexOf(0)
  return i < 0 ? buf.length : i
}

/** One past a log's last byte that is not zero, from `from` on (what a write cut short left past its lines). */
export function dataEnd(buf: Buffer, from: number): number {
  let end = buf.length
  const BLOCK = 65536
  const zero = Buffer.alloc(BLOCK)
  while (end - from >= BLOCK && buf.subarray(end - BLOCK, end).equals(zero)) end -= BLOCK
  while (end > from && buf[end - 1] === 0) end--
  return end
}

/** fdatasync (or fsync, for a file about to be renamed into place), through the fault seam. */
export async function syncFile(handle: FileHandle, file: string, io: StoreIo | undefined, full = false): Promise<void> {
  io?.beforeSync?.(file)
  if (full) await handle.sync()
  else await handle.datasync()
}

/** File systems that cannot fsync a folder answer these: nothing more can be done there. */
const DIR_SYNC_UNSUPPORTED = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EBADF', 'EPERM', 'EACCES'])

/**
 * Makes the names in a folder durable (a file renamed into it, a log made, one removed). Any
 * other failure (EIO) throws: what needs the name durable must not go on as if it were.
 */
export function fsyncDir(dir: string, io?: StoreIo): void {
  try {
    io?.beforeSync?.(dir)
    const fd = openSync(dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch (e) {
    if (DIR_SYNC_UNSUPPORTED.has((e as NodeJS.ErrnoException).code ?? '')) return
    throw new StoreError(`cannot sync the folder ${dir}: ${describeError(e)}`)
  }
}

/** The error as one line (a StoreError's own message, else its code and message). */
export function describeError(e: unknown): string {
  if (e instanceof StoreError) return e.message
  const err = e as NodeJS.ErrnoException
  return err?.message ?? String(e)
}

/** One log file open for appends. */
interface Segment {
  handle: FileHandle
  file: string
  /** Bytes known complete and durable: a failed write is cut back to here. */
  good: number
  /** The bytes past `good` may hold part of a failed write (cut before the next one). */
  dirty: boolean
  /** The file is zeroed up to here (its size): writes before it need no metadata commit. */
  zeroedTo: number
  /** Whether to zero ahead (not once it failed, a full disk: the log then grows by its writes). */
  zeroing: boolean
}

interface Waiter {
  resolve: () => void
  reject: (e: Error) => void
  undo: (() => void) | undefined
}

/** Groups up to this size are written on the main thread (a few requests' lines: ~0.2 ms here). */
const MAIN_THREAD_WRITE = 64 * 1024
const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Each write durable (data and what reading it back needs) when it returns; written at known positions. */
const WRITE_DSYNC = constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC

export interface WalOptions {
  /** The log file of generation `gen`. */
  pathOf: (gen: number) => string
  /** The folder of the logs (fsynced after files come and go). */
  dir: string
  /** What the log is, for messages ("the write-ahead log of /x/sandbox.json"). */
  describe: string
  sync: boolean
  io?: StoreIo
}

/**
 * How long a soft line (a change nobody waits for: a Status's coverage counts) waits for a group to
 * join. Each group is a synchronous durable write on the main thread: one per turn for reads alone
 * would hold every call behind the disk.
 */
export const SOFT_WAIT_MS = 50

export class WriteAheadLog {
  generation = 0
  private seg: Segment | null = null
  private pending: string[] = []
  private waiters: Waiter[] = []
  private flushing: Promise<void> | null = null
  /** Armed by a soft line while nothing else is to be written: it starts the write when it fires. */
  private softTimer: NodeJS.Timeout | null = null
  /** Whether a line someone waits for is pending: a group of soft lines alone is written off the main thread. */
  private hardPending = false
  /** The last write's error while writes fail (health says it); null once a write succeeds. */
  failure: StoreError | null = null
  private closed = false
  /** Called after each group written (the stores start a compaction from here). */
  onWritten: (() => void) | null = null
  /** Whether `start` made the log it opened (a start that fails takes it back while it is empty). */
  private made = false

  constructor(private readonly opts: WalOptions) {}

  /** Whether `start` opened a log (a store that never started has nothing to compact). */
  get started(): boolean {
    return this.seg !== null
  }

  /** Bytes of the current generation's log. */
  get bytes(): number {
    return this.seg?.good ?? 0
  }

  /** Opens generation `gen` for appends (once the server is bound); lines appended before wait for it. */
  async start(gen: number): Promise<void> {
    this.generation = gen
    this.made = !existsSync(this.opts.pathOf(gen))
    try {
      this.seg = await this.openSegment(gen)
    } catch (e) {
      throw new StoreError(`cannot open ${this.opts.describe} for writing: ${describeError(e)}`)
    }
    if (this.opts.sync) fsyncDir(this.opts.dir, this.opts.io)
    if (this.pending.length && !this.flushing) this.flushing = this.flushLoop()
  }

  private async openSegment(gen: number): Promise<Segment> {
    const file = this.opts.pathOf(gen)
    const handle = await open(file, this.opts.sync ? WRITE_DSYNC : constants.O_WRONLY | constants.O_CREAT)
    try {
      // A log is opened after its replay cut it back to its last line: its size is where writes go.
      const size = (await handle.stat()).size
      return { handle, file, good: size, dirty: false, zeroedTo: size, zeroing: this.opts.sync }
    } catch (e) {
      await handle.close().catch(() => {})
      throw e
    }
  }

  /**
   * Appends one line (with its newline); resolves once it is durable. On a failed write `undo` is
   * called (the latest transaction's first) before the promise rejects with a StoreError. A `soft`
   * line joins the next group, written at most `SOFT_WAIT_MS` later (at once by `flush` and `close`).
   */
  append(line: string, undo?: () => void, soft = false): Promise<void> {
    if (this.closed) {
      undo?.()
      return Promise.reject(new StoreError(`${this.opts.describe} is closed`))
    }
    this.pending.push(line)
    if (!soft) this.hardPending = true
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject, undo }))
    if (this.flushing || !this.seg) return done
    // Written at the end of this turn of the event loop, with every line appended in it.
    if (!soft) this.flushing = endOfTurn().then(() => this.flushLoop())
    else this.softTimer ??= setTimeout(() => this.writeNow(), SOFT_WAIT_MS).unref()
    return done
  }

  /** Starts the write of what waits, unless one runs. */
  private writeNow(): void {
    // After this turn's microtasks: a loop whose writes do not wait (no zeroing due) would end before
    // `flushing` is set, and leave it set for good.
    if (!this.flushing && this.seg && this.waiters.length) this.flushing = Promise.resolve().then(() => this.flushLoop())
  }

  private async flushLoop(): Promise<void> {
    // The group takes the soft lines waiting too.
    if (this.softTimer) clearTimeout(this.softTimer)
    this.softTimer = null
    try {
      while (this.waiters.length) {
        const lines = this.pending
        const waiters = this.waiters
        const hard = this.hardPending
        this.pending = []
        this.hardPending = false
        this.waiters = []
        const seg = this.seg!
        try {
          if (seg.dirty) await this.cut(seg)
          if (lines.length) {
            const data = Buffer.from(lines.join(''), 'utf8')
            try {
              if (seg.zeroing && seg.good + data.length > seg.zeroedTo) await this.zeroAhead(seg, data.length)
              // Durable when it returns (O_DSYNC); a failed sync is a failed write (the seam says so after it).
              // A large group (a long clock move) goes to the thread pool: the loop is not held for its time.
              // So does a group of soft lines alone (nobody waits for it): its O_DSYNC write held every call.
              if (hard && data.length <= MAIN_THREAD_WRITE) writeAllNow(seg.handle.fd, seg.file, data, this.opts.io, seg.good)
              else await writeAll(seg.handle, seg.file, data, this.opts.io, seg.good)
              if (this.opts.sync) this.opts.io?.beforeSync?.(seg.file)
            } catch (e) {
              // Part or all of the data may be in the file: cut now, before anyone is told (a crash
              // after the answer must not replay what it refused); if the cut fails too, before the next write.
              seg.dirty = true
              await this.cut(seg).catch(() => {})
              throw e
            }
            seg.good += data.length
          }
          this.failure = null
          for (const w of waiters) w.resolve()
        } catch (e) {
          this.fail(e, waiters)
        }
      }
    } finally {
      this.flushing = null
    }
    this.onWritten?.()
  }

  /** A failed write: its group and everything queued behind it fail, undone the latest first. */
  private fail(e: unknown, waiters: Waiter[]): void {
    const err = new StoreError(`cannot write ${this.opts.describe}: ${describeError(e)}`)
    this.failure = err
    const all = waiters.concat(this.waiters)
    this.waiters = []
    this.pending = []
    this.hardPending = false
    for (let i = all.length - 1; i >= 0; i--) all[i]!.undo?.()
    for (const w of all) w.reject(err)
  }

  /** Zeroes the space the next writes go to (durable when it returns: the file's new size too). */
  private async zeroAhead(seg: Segment, need: number): Promise<void> {
    const len = Math.max(ZEROED_STEP, need)
    const block = len === ZEROED_STEP ? (zeros ??= Buffer.alloc(ZEROED_STEP)) : Buffer.alloc(len)
    try {
      if ((await writeAt(seg.handle.fd, block, len, seg.zeroedTo)) !== len) throw new Error('short write')
      seg.zeroedTo += len
    } catch {
      // A full disk: the zeros that fitted give their space back, and the writes grow the log themselves.
      seg.zeroing = false
      await seg.handle.truncate(seg.zeroedTo).catch(() => {})
    }
  }

  /** Cuts a log back to its last durable byte (what a failed write may have left is not a transaction). */
  private async cut(seg: Segment): Promise<void> {
    await seg.handle.truncate(seg.good)
    seg.zeroedTo = seg.good
    if (this.opts.sync) await syncFile(seg.handle, seg.file, this.opts.io)
    seg.dirty = false
  }

  /**
   * Resolves once every line appended so far is durable; rejects when one of them failed. Goes
   * through the write loop like a line (so a tail left by a failed write is cut first).
   */
  private barrier(): Promise<void> {
    // Nothing in flight or waiting and a clean tail: everything appended is durable already. (The
    // loop is started only with work that awaits, so `flushing` is set before it can end.)
    if (!this.seg || (!this.flushing && !this.waiters.length && !this.seg.dirty)) return Promise.resolve()
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject, undo: undefined }))
    if (!this.flushing) this.flushing = this.flushLoop()
    return done
  }

  /** Resolves when every line appended so far is written (or failed). */
  async flush(): Promise<void> {
    // Soft lines waiting for a group go now.
    this.writeNow()
    while (this.flushing) await this.flushing
  }

  /**
   * Starts the next generation for compaction: `capture` runs at the swap, synchronously (it sees
   * every transaction appended so far, none after), and every later line goes to the new log.
   * Resolves with the new generation once everything captured is durable; throws when a write of
   * it failed (what was captured may hold an undone change) or the old log cannot be left
   * clean: the snapshot is then not taken and the logs stay.
   */
  async rotate(capture: (gen: number) => void): Promise<number> {
    const prev = this.seg!
    // A tail a failed write left is cut first: the log left behind must hold only transactions.
    if (prev.dirty) await this.barrier()
    const gen = this.generation + 1
    const next = await this.openSegment(gen)
    try {
      if (prev.dirty) throw new StoreError(`${this.opts.describe}: a write failed; the snapshot is taken once writing works again`)
      // The new log's name is durable before any line is acknowledged in it.
      if (this.opts.sync) fsyncDir(this.opts.dir, this.opts.io)
    } catch (e) {
      await next.handle.close()
      throw e
    }
    capture(gen)
    this.seg = next
    this.generation = gen
    this.made = false
    try {
      await this.barrier()
    } catch {
      throw new StoreError(`${this.opts.describe}: a write failed while the snapshot was taken; it is taken again later`)
    } finally {
      // Nothing writes to the old log any more.
      if (prev.dirty) await this.cut(prev).catch(() => {})
      await prev.handle.close().catch(() => {})
    }
    return gen
  }

  async close(): Promise<void> {
    await this.flush()
    this.closed = true
    const seg = this.seg
    this.seg = null
    if (seg?.dirty) await this.cut(seg).catch(() => {})
    await seg?.handle.close().catch(() => {})
  }

  /** A start that failed: closes the log, and removes it if `start` made it and nothing was written to it. */
  async discard(): Promise<void> {
    const seg = this.seg
    await this.close()
    if (seg && this.made && seg.good === 0) rmSync(seg.file, { force: true })
  }
}
