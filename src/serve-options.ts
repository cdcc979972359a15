/**
 * The options of `dcb serve` as a function (`startSandbox`). Types only, and no Node types: the
 * package's public declarations import this file.
 */
import type { FailurePayloadMode } from './core/outcomes.js'

export interface ServeOptions {
  port?: number
  host?: string
  /** The data file (default `.dcb/sandbox.json`); not with `inMemory`. */
  data?: string
  inMemory?: boolean
  /**
   * A PostgreSQL URL (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`): the whole state lives in that
   * database, which any number of servers with the same URL and world share as one sandbox. Not
   * with `data` or `inMemory`.
   */
  store?: string
  /** With `store`: make this server's world the database's (its fixtures changed on purpose). */
  replaceWorld?: boolean
  /** Fixture files layered on the default world. */
  fixtures?: string[]
  /**
   * Addresses or CIDR ranges added to the allowlist of every merchant that allows loopback (the demo
   * keys), so another machine or a container network can use them (`dcb serve --allow-ip`).
   */
  allowIps?: string[]
  /** `--trust-proxy`: the proxies whose X-Forwarded-For is read (addresses, CIDRs, loopback, linklocal, uniquelocal). */
  trustProxy?: string | string[]
  adminToken?: string
  /** `--allow-host`: host names accepted on a loopback listener besides the loopback names. */
  allowHosts?: string[]
  failurePayload?: FailurePayloadMode
  /** Start the sandbox clock at this time (ISO-8601), frozen unless `clockRunning`. */
  clock?: string
  clockRunning?: boolean
  /** How many merchant calls each session's request log keeps (default 1000). */
  requestLogSize?: number
  /** Bytes of request bodies the request logs of all sessions keep together (default 32 MiB). */
  requestLogBytes?: number
  /** The old name of `requestLogSize`. */
  journalSize?: number
  /** The old name of `requestLogBytes`. */
  journalBytes?: number
  /** Connections open at once; more are refused (default 1024). */
  maxConnections?: number
  /** A connection with no bytes either way and no answer in progress is closed after this long (ms; default 30 s). */
  idleTimeoutMs?: number
  /** Time allowed for a request's headers / whole request to arrive (ms; defaults 20 s / 60 s). */
  headersTimeoutMs?: number
  requestTimeoutMs?: number
  /** The most sessions (X-DCB-Session) beside the default one (default 1,000); a new one past it is 429 SESSION_LIMIT. */
  maxSessions?: number
  /** Whether merchant API failures carry the X-DCB-Reason header (default true). */
  reasons?: boolean
  smsPerMsisdn?: number
  chargesPerSubscription?: number
  maxSms?: number
  maxVerifications?: number
  /** How many subscriptions each session keeps (default 100,000): none is dropped, a new one past it is refused (Verify: 500 ERROR with a reason). */
  maxSubscriptions?: number
  /** How often the server runs events that fell due on their own (ms). */
  tickMs?: number
  compactBytes?: number
  onError?: (err: unknown) => void
  /** Where fixture warnings go (default: stderr, one `dcb: warning:` line each). */
  onWarning?: (text: string) => void
  /** Real time source (tests). */
  realNow?: () => number
}
