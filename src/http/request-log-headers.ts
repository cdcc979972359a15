import type { IncomingHttpHeaders } from 'node:http'

/**
 * The request headers a request-log entry keeps: each merchant call's, for the console's detail and
 * its copy-as-curl. Secrets never reach the log: the API key's value is masked unless it is a key the
 * package ships (public already); cookies, authorization and the transport's headers are left out. Bounded: at most
 * `MAX_HEADERS` headers of at most `MAX_VALUE` characters each.
 */
export const MASKED = '(masked)'
const MAX_HEADERS = 24
const MAX_VALUE = 200
/** The keys of the shipped default world (`fixtures/world.json`): printed in its docs, so not secret. */
const SHIPPED_KEYS = new Set(['sandbox-demo-key', 'sandbox-demo-key-2', 'sandbox-other-key', 'sandbox-inactive-key', 'sandbox-offsite-key'])
/** Secrets, and the transport's own headers (they differ from connection to connection and repeat nothing). */
const LEFT_OUT = new Set(['cookie', 'authorization', 'proxy-authorization', 'x-dcb-admin-token', 'host', 'connection', 'content-length', 'keep-alive'])

/** The headers as kept, one JSON text (sized like a body against the log's byte budget). */
export function requestLogHeaders(headers: IncomingHttpHeaders): string {
  const out: Record<string, string> = {}
  let n = 0
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined || LEFT_OUT.has(name)) continue
    if (++n > MAX_HEADERS) break
    let value = Array.isArray(raw) ? raw.join(', ') : raw
    if (name === 'api-key' && !SHIPPED_KEYS.has(value)) value = MASKED
    out[name] = value.length > MAX_VALUE ? `${value.slice(0, MAX_VALUE)}…` : value
  }
  return JSON.stringify(out)
}
