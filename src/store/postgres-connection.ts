/**
 * How every connection to the shared store is opened: the bounds its server process keeps, so that
 * a replica that stops answering (paused, cut off, SIGSTOPped) mid-transaction holds a session's lock
 * for two seconds at most, and a call waiting for that lock gives up on the server before the
 * client does (no server process left waiting behind a call that answered). And the string literals
 * of the simple queries, whose meaning depends on no server setting.
 */
import type pg from 'pg'

/**
 * Set on every connection dcb opens (its startup options, after the URL's own `options`: these win,
 * and a database's or a role's settings come before both). In milliseconds unless said.
 */
export const SERVER_SETTINGS = {
  /** A transaction left open by a replica that stopped answering ends, with its locks. */
  idle_in_transaction_session_timeout: 2000,
  /** A wait for a lock (a session's, a row's) gives up: the call answers the store's error. */
  lock_timeout: 2000,
  /** Every statement ends before the client's call timeout (3 s). */
  statement_timeout: 2500,
  /** The server drops a client whose machine is gone: probes after 5 s idle, every second, 3 of them (seconds). */
  tcp_keepalives_idle: 5,
  tcp_keepalives_interval: 1,
  tcp_keepalives_count: 3,
  /** Or whose machine stopped acknowledging what the server sent. */
  tcp_user_timeout: 5000,
  /** The text dcb sends and reads is UTF-8, whatever the database's default. */
  client_encoding: 'UTF8',
} as const

/** The client socket's keepalive: first probe after this long idle (ms). */
export const CLIENT_KEEPALIVE_MS = 5000

/**
 * The node-postgres options of a connection to `url`: the server's bounds (above, plus `extra`), TCP
 * keepalive, and the client's own timeouts (`timeoutMs` to connect, `queryTimeoutMs` per query).
 */
export function connectionConfig(
  url: string,
  timeoutMs: number,
  queryTimeoutMs: number | undefined,
  extra: Record<string, string | number> = {},
): pg.ClientConfig {
  let connectionString = url
  let theirs: string | null = null
  const u = new URL(url)
  // node-postgres takes the URL's `options` over the config's: kept, but ours go after them.
  if (u.searchParams.has('options')) {
    theirs = u.searchParams.get('options')
    u.searchParams.delete('options')
    connectionString = u.toString()
  }
  const ours = Object.entries({ ...SERVER_SETTINGS, ...extra }).map(([k, v]) => `-c ${k}=${v}`)
  return {
    connectionString,
    options: [theirs, ...ours].filter(Boolean).join(' '),
    keepAlive: true,
    keepAliveInitialDelayMillis: CLIENT_KEEPALIVE_MS,
    connectionTimeoutMillis: timeoutMs,
    ...(queryTimeoutMs === undefined ? {} : { query_timeout: queryTimeoutMs }),
  }
}

/**
 * An SQL string literal for a simple query (names are checked session names, values our own JSON):
 * an escape string (`E'…'`), read the same whatever `standard_conforming_strings` says.
 */
export function literal(text: string): string {
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
}

/**
 * Why the server ended a statement or a connection, naming the bound (undefined: its message says
 * it). Short: a reason goes in a header of bounded length.
 */
export function boundReason(code: string | undefined, message: string): string | undefined {
  if (code === '55P03') return `another transaction held the lock longer than lock_timeout (${SERVER_SETTINGS.lock_timeout / 1000} s)`
  if (code === '57014' && message.includes('statement timeout'))
    return `a statement ran longer than statement_timeout (${SERVER_SETTINGS.statement_timeout / 1000} s)`
  if (code === '25P03')
    return `the transaction stayed idle longer than idle_in_transaction_session_timeout (${SERVER_SETTINGS.idle_in_transaction_session_timeout / 1000} s)`
}
