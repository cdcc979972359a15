/**
 * A request log as the store sees it. The log itself lives in `runtime/` (a ring in memory); a store
 * that several processes share feeds it every process's entries, and keeps them as records.
 */
import type { RequestLogEntry } from '../contract/control.js'

/** An entry as recorded on the hot path: times as numbers (formatted when read), the body as its text. */
export interface RequestLogRecord extends Omit<RequestLogEntry, 'id' | 'time' | 'sandbox_time' | 'msisdn' | 'reason' | 'request' | 'headers'> {
  time: number
  sandbox_time: number
  /** The request body as received, or null. */
  request: string | null
  /** Null when absent (every entry read has both). */
  msisdn?: string | null
  reason?: string | null
  /** The request headers as JSON text (bounded per entry, outside the body budget). */
  headers?: string
}

/**
 * Where the entries of a request log that several processes share go (a shared store): the log hands
 * them to it, and holds what it is given back by `mirror`, in the order the store numbered them
 * (every process's entries, the same ids everywhere).
 */
export interface RequestLogFeed {
  write(entry: RequestLogRecord): void
  /** The log was cleared (a reset): the store forgets the entries too. */
  clear(): void
}

/** What a shared store needs of a session's request log (the runtime's `RequestLog` is one). */
export interface FedRequestLog {
  feed: RequestLogFeed | null
  /** Brings in what the other processes logged (before a reader is answered). */
  sync: (() => Promise<void>) | null
  readonly nextId: number
  readonly capacity: number
  /** An entry as the store numbered it (ids only grow). */
  mirror(entry: RequestLogRecord, id: number): void
  /** Forgets every entry here (cleared by another process). */
  forgetAll(): void
  /** Forgets every entry and numbers from 1 again (the session deleted and made anew). */
  restart(): void
}
