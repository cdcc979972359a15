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

/** The last headers seen (name, value, name, value...) and their text: a client sends the same headers call after call. */
let lastSeen: unknown[] = []
let lastText = '{}'

/** The headers as kept, one JSON text (sized like a body against the log's byte budget). */
export function requestLogHeaders(headers: IncomingHttpHeaders): string {
  // Same names and values, in the same order, as the call before: the same text (no object, no stringify).
  let i = 0
  let same = true
  for (const name in headers) {
    const raw = headers[name]
    if (lastSeen[i] !== name || lastSeen[i + 1] !== raw) {
      same = false
      break
    }
    i += 2
  }
  if (same && i === lastSeen.length) return lastText
  const seen: unknown[] = []
  const out: Record<string, string> = {}
  let n = 0
  for (const name in headers) {
    const raw = headers[name]
    seen.push(name, raw)
    if (raw === undefined || LEFT_OUT.has(name) || n >= MAX_HEADERS) continue
    n++
    let value = Array.isArray(raw) ? raw.join(', ') : raw
    if (name === 'api-key' && !SHIPPED_KEYS.has(value)) value = MASKED
    out[name] = value.length > MAX_VALUE ? `${value.slice(0, MAX_VALUE)}…` : value
  }
  // An array value (set-cookie) is a new array each call: never the same, so never remembered wrongly.
  lastSeen = seen
  lastText = JSON.stringify(out)
  return lastText
}
