/**
 * A fetch function over node:http(s), for the CLI's client: lighter to load than the global fetch
 * for a short-lived command, with a time-out per call (`timeoutMs`; default 30 s, 0: none) and the
 * CLI's words when nothing answers (a TransportError naming the server and how to start one). An
 * answer is read to its end before it resolves, unless `stream` asks for its body as it comes.
 */
import type { FetchInit } from './fetch.js'
import { TransportError } from './transport-error.js'

/** Why a connection failed, with the command that starts a server when none answers. */
export function unreachable(e: NodeJS.ErrnoException, command = 'dcb'): string {
  return e.code === 'ECONNREFUSED' ? `connection refused (is \`${command} serve\` running?)` : e.code === 'ENOTFOUND' ? 'no such host' : e.message
}

/** Statuses whose answer has no body (a Response refuses one). */
const NO_BODY = new Set([101, 204, 205, 304])

/** `command`: how the user runs dcb, for the hint when nothing answers. */
export function nodeFetch(command?: string) {
  return async (url: string, init: FetchInit): Promise<Response> => {
    let u: URL
    try {
      u = new URL(url)
    } catch {
      throw new TransportError(`"${url}" is not a URL`)
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TransportError(`"${url}" is not an http(s) URL`)
    const mod = u.protocol === 'https:' ? await import('node:https') : await import('node:http')
    const body = typeof init.body === 'string' ? init.body : undefined
    const headers: Record<string, string> = {
      ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
      ...(init.headers as Record<string, string>),
    }
    const signal = init.signal ?? undefined
    if (signal?.aborted) throw signal.reason
    return new Promise((resolve, reject) => {
      // A stream (the live stream) holds its own connection: none is kept for it, or taken from others.
      const req = mod.request(u, { method: init.method ?? 'GET', headers, ...(init.stream ? { agent: false } : {}) }, (res) => {
        const status = res.statusCode ?? 0
        const h = new Headers()
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) for (const one of Array.isArray(v) ? v : [v]) h.append(k, one)
        const broke = (e: Error) => (signal?.aborted ? signal.reason : new TransportError(`the answer from ${u.origin} broke off: ${e.message}`))
        // A stream answers at its headers, its body read as it comes; an answer that is no Response is read to its end, then refused.
        if (init.stream && status >= 200 && status <= 599 && !NO_BODY.has(status)) {
          let open = true
          const body = new ReadableStream<Uint8Array>({
            start(c) {
              // Once the stream is closed, errored or cancelled, what still comes is dropped.
              const end = (how: () => void) => void (open && ((open = false), how()))
              res.on('data', (d: Buffer) => void (open && c.enqueue(new Uint8Array(d.buffer, d.byteOffset, d.byteLength))))
              res.on('end', () => end(() => c.close()))
              res.on('error', (e) => end(() => c.error(broke(e))))
              res.on('close', () => end(() => c.error(broke(new Error('the connection closed')))))
            },
            cancel: () => {
              open = false
              req.destroy()
            },
          })
          return resolve(new Response(body, { status, headers: h }))
        }
        const chunks: Buffer[] = []
        res.on('data', (d: Buffer) => chunks.push(d))
        res.on('end', () => {
          // A Response takes statuses 200 to 599 only; anything else is no answer of the API.
          if (status < 200 || status > 599) return reject(new TransportError(`${u.origin} answered HTTP ${status}: is this a dcb sandbox?`))
          resolve(new Response(NO_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers: h }))
        })
        res.on('error', (e) => reject(broke(e)))
      })
      const limit = init.timeoutMs ?? 30_000
      let timedOut = false
      if (limit > 0)
        req.setTimeout(limit, () => {
          timedOut = true
          req.destroy(new Error(`no answer within ${Math.round(limit / 1000)} s`))
        })
      req.on('error', (e: NodeJS.ErrnoException) => {
        reject(signal?.aborted ? signal.reason : new TransportError(`cannot reach ${u.origin}: ${unreachable(e, command)}`, timedOut))
      })
      // Aborted: the request ends, and the call (or the stream being read) rejects with the signal's reason.
      if (signal) {
        const onAbort = () => req.destroy()
        signal.addEventListener('abort', onAbort, { once: true })
        const forget = () => signal.removeEventListener('abort', onAbort)
        req.on('error', forget)
        req.on('response', (res) => res.on('close', forget))
      }
      if (body !== undefined) req.write(body)
      req.end()
    })
  }
}
