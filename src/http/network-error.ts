/**
 * The error of a fault in process, as Node's fetch gives it over a socket: in a file of its own with
 * no imports, so the msw entry can tell it without loading the pipeline.
 */

/** Marks the error of a fault (the msw handler answers it with `Response.error()`). */
export const NETWORK_ERROR = Symbol.for('dcb.networkError')

/** What Node's fetch rejects with for a connection that failed so: a TypeError with the socket's error as its cause. */
export function networkError(kind: string): TypeError {
  const cause =
    kind === 'reset'
      ? Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104, syscall: 'read' })
      : kind === 'garbage'
        ? Object.assign(new Error('Response does not match the HTTP/1.1 protocol (Invalid status line)'), { code: 'HPE_INVALID_CONSTANT' })
        : Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })
  const e = new TypeError(kind === 'truncate' ? 'terminated' : 'fetch failed', { cause })
  ;(e as unknown as Record<symbol, string>)[NETWORK_ERROR] = kind
  return e
}

/** Whether an error is a fault's (`networkError`). */
export function isNetworkError(e: unknown): boolean {
  return e instanceof TypeError && NETWORK_ERROR in e
}
