/**
 * A fetch function over node:http(s), for the CLI's client: lighter to load than the global fetch
 * for a short-lived command, with a time-out per call (`timeoutMs`; default 30 s, 0: none) and the
 * CLI's words when nothing answers (a TransportError naming the server and how to start one).
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
    return new Promise((resolve, reject) => {
      const req = mod.request(u, { method: init.method ?? 'GET', headers }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (d: Buffer) => chunks.push(d))
        res.on('end', () => {
          const status = res.statusCode ?? 0
          const h = new Headers()
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) for (const one of Array.isArray(v) ? v : [v]) h.append(k, one)
          // A Response takes statuses 200 to 599 only; anything else is no answer of the API.
          if (status < 200 || status > 599) return reject(new TransportError(`${u.origin} answered HTTP ${status}: is this a dcb sandbox?`))
          resolve(new Response(NO_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers: h }))
        })
        res.on('error', (e) => reject(new TransportError(`the answer from ${u.origin} broke off: ${e.message}`)))
      })
      const limit = init.timeoutMs ?? 30_000
      let timedOut = false
      if (limit > 0)
        req.setTimeout(limit, () => {
          timedOut = true
          req.destroy(new Error(`no answer within ${Math.round(limit / 1000)} s`))
        })
      req.on('error', (e: NodeJS.ErrnoException) => {
        reject(new TransportError(`cannot reach ${u.origin}: ${unreachable(e, command)}`, timedOut))
      })
      if (body !== undefined) req.write(body)
      req.end()
    })
  }
}
