/**
 * When a file store compacts its write-ahead log: the default data file's store and the sessions' log
 * both decide it here, so they cannot drift apart.
 * - A compaction rewrites the snapshots whole. It starts once the log passes `minBytes` or the
 *   snapshots' size, whichever is larger: at most a byte rewritten per byte logged, however large
 *   the state grows, and a restart replays at most about a snapshot's worth of log.
 * - One runs at a time; asking while one runs answers that one.
 * - One that failed (a full disk) is tried again after a later write, no sooner than
 *   COMPACT_RETRY_MS: the logs and the old snapshots stay meanwhile.
 */
import { StoreError } from './types.js'
import type { WriteAheadLog } from './wal.js'

/** A compaction that failed is tried again after a write, no sooner than this. */
export const COMPACT_RETRY_MS = 1000

/** The log size past which compaction starts, when the snapshots are smaller. */
export const DEFAULT_COMPACT_BYTES = 64 * 1024 * 1024

export interface CompactionOptions {
  /** Compact once the log passes this many bytes (or the snapshots' size, when larger). */
  minBytes?: number
  /** Whether the store is closed (no compaction starts after a write then: `close` makes its own). */
  closed: () => boolean
  /** Writes the snapshots and starts a new log generation; answers the snapshots' size on disk. */
  run: () => Promise<number>
  /** The error a failed run is reported as (a StoreError is reported as it is). */
  failed: (e: unknown) => StoreError
}

export class Compaction {
  /** The snapshots' size on disk (set at load, then by each compaction). */
  snapshotBytes = 0
  /** The compaction under way, or null. */
  private running: Promise<void> | null = null
  /** When a failed compaction may be tried again (0: none failed). */
  private retryAt = 0
  private readonly minBytes: number

  constructor(
    wal: WriteAheadLog,
    private readonly opts: CompactionOptions,
  ) {
    this.minBytes = opts.minBytes ?? DEFAULT_COMPACT_BYTES
    wal.onWritten = () => {
      if (this.running || opts.closed() || wal.failure) return
      if (wal.bytes >= Math.max(this.minBytes, this.snapshotBytes) || (this.retryAt && Date.now() >= this.retryAt)) void this.start().catch(() => {})
    }
  }

  /** Starts a compaction, or answers the one under way; rejects with a StoreError when it fails. */
  start(): Promise<void> {
    if (this.running) return this.running
    this.running = this.opts
      .run()
      .then((bytes) => {
        this.snapshotBytes = bytes
        this.retryAt = 0
      })
      .catch((e) => {
        this.retryAt = Date.now() + COMPACT_RETRY_MS
        throw e instanceof StoreError ? e : this.opts.failed(e)
      })
      .finally(() => {
        this.running = null
      })
    return this.running
  }

  /** Waits for the compaction under way to end, whether it worked or not. */
  async settled(): Promise<void> {
    if (this.running) await this.running.catch(() => {})
  }
}
