/**
 * A small typed client of the merchant API and of the sandbox control API, shared by the CLI and the
 * library: the control operations (`ControlOperations`) over HTTP, with the signatures of the
 * in-process ones. Types come from the wire contract (types only: no zod is loaded). Uses
 * node:http(s) directly (lighter to load than fetch for short-lived CLI calls).
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { ClockMoveAnswer, InitBody, InitPayload, StatusBody, StatusPayload, VerifyBody, VerifyPayload } from '../contract/index.js'
import type { ControlOperations } from '../contract/operations.js'
import { SandboxError } from '../contract/index.js'
import { deriveOperations } from '../contract/calls.js'
import { MERCHANT_CALLS } from '../contract/merchant-calls.js'
import { checkHeaderValues } from './header-value.js'

export type { InitPayload, VerifyPayload, StatusPayload, ClockMoveAnswer }
export { SandboxError }

export interface Envelope<P = Record<string, unknown>> {
  status: 'SUCCESS' | 'FAIL'
  message: string
  status_code: number
  payload?: P | null
}

export interface ApiResult<P> {
  http: number
  envelope: Envelope<P>
  /** Why it failed: the X-DCB-Reason header of a dcb sandbox (absent elsewhere, and on success). */
  reason?: string
}

/** The server could not be reached, or what answered does not speak the API. */
export class TransportError extends Error {
  constructor(
    message: string,
    /** No answer came within the time-out (the server may still be working on the call). */
    readonly timedOut = false,
  ) {
    super(message)
    this.name = 'TransportError'
  }
}

/** The control API answered an error (`{ error, message }`): the same error the in-process operations throw. */
export const ControlApiError = SandboxError

export interface ClientOptions {
  baseUrl: string
  apiKey: string
  adminToken?: string
  /** How long a call may go without an answer (default 30 s; a clock move: none, unless this is given). */
  timeoutMs?: number
  /** The sandbox session every call works in (header X-DCB-Session). */
  session?: string
  /** What the caller calls `apiKey` and `adminToken` in a refusal (the CLI: `--api-key`, `DCB_API_KEY`, …). */
  names?: { apiKey?: string; adminToken?: string }
  /** How the user runs dcb, for the hint when nothing answers (the CLI: the name it was invoked as; default `dcb`). */
  command?: string
}

export interface RawResponse {
  status: number
  headers: IncomingHttpHeaders
  text: string
}

export async function httpRequest(
  url: string,
  /** `timeoutMs`: default 30 s; 0: none. */
  opts: { method: string; headers?: Record<string, string>; body?: string; timeoutMs?: number; command?: string },
): Promise<RawResponse> {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw new TransportError(`"${url}" is not a URL`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TransportError(`"${url}" is not an http(s) URL`)
  const mod = u.protocol === 'https:' ? await import('node:https') : await import('node:http')
  return new Promise((resolve, reject) => {
    const req = mod.request(
      u,
      { method: opts.method, headers: { ...(opts.body !== undefined ? { 'content-length': String(Buffer.byteLength(opts.body)) } : {}), ...opts.headers } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (d: Buffer) => chunks.push(d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', (e) => reject(new TransportError(`the answer from ${u.origin} broke off: ${e.message}`)))
      },
    )
    const limit = opts.timeoutMs ?? 30_000
    let timedOut = false
    if (limit > 0)
      req.setTimeout(limit, () => {
        timedOut = true
        req.destroy(new Error(`no answer within ${Math.round(limit / 1000)} s`))
      })
    req.on('error', (e: NodeJS.ErrnoException) => {
      reject(new TransportError(`cannot reach ${u.origin}: ${unreachable(e, opts.command)}`, timedOut))
    })
    if (opts.body !== undefined) req.write(opts.body)
    req.end()
  })
}

/** Why a connection failed, with the command that starts a server when none answers. */
function unreachable(e: NodeJS.ErrnoException, command = 'dcb'): string {
  return e.code === 'ECONNREFUSED' ? `connection refused (is \`${command} serve\` running?)` : e.code === 'ENOTFOUND' ? 'no such host' : e.message
}

function isEnvelope(v: unknown): v is Envelope {
  if (!v || typeof v !== 'object') return false
  const e = v as Record<string, unknown>
  return (e.status === 'SUCCESS' || e.status === 'FAIL') && typeof e.message === 'string' && typeof e.status_code === 'number'
}

/** The control operations (`otp`, `advance`, `rules.add`, …) are derived from their one declaration (`contract/calls.ts`). */
export interface DcbClient extends ControlOperations {}

export class DcbClient {
  readonly baseUrl: string
  /** `X-DCB-Session` on every call, when a session is given. */
  private readonly sessionHeader: Record<string, string>
  /** Throws SandboxError BAD_REQUEST when the key or token has a character no header can carry (named, with the option). */
  constructor(readonly opts: ClientOptions) {
    checkHeaderValues([
      [opts.names?.apiKey ?? 'apiKey', opts.apiKey],
      [opts.names?.adminToken ?? 'adminToken', opts.adminToken],
    ])
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '')
    this.sessionHeader = opts.session ? { 'x-dcb-session': opts.session } : {}
    // A call that waits (an OTP with `wait`) may take that long beyond the usual answer time; a clock move has no default limit.
    Object.assign(
      this,
      deriveOperations((r) =>
        this.control(r.method, r.path, r.body, r.waitSeconds ? (r.waitSeconds + 30) * 1000 : r.untimed ? (this.opts.timeoutMs ?? 0) : undefined),
      ),
    )
  }

  private call<P>(path: string, body: Record<string, unknown>): Promise<ApiResult<P>> {
    return this.send<P>(path, JSON.stringify(body))
  }

  /** A merchant API request with this body text (any method: a replay sends what was recorded). */
  async send<P = Record<string, unknown>>(path: string, body: string | undefined, method = 'POST'): Promise<ApiResult<P>> {
    const res = await httpRequest(this.baseUrl + path, {
      method,
      headers: { 'api-key': this.opts.apiKey, 'content-type': 'application/json', accept: 'application/json', ...this.sessionHeader },
      body,
      timeoutMs: this.opts.timeoutMs,
      command: this.opts.command,
    })
    let parsed: unknown
    try {
      parsed = JSON.parse(res.text)
    } catch {
      parsed = undefined
    }
    if (!isEnvelope(parsed))
      throw new TransportError(`${this.baseUrl}${path} answered HTTP ${res.status} without the API's envelope: ${res.text.slice(0, 120).replace(/\s+/g, ' ')}`)
    const reason = res.headers['x-dcb-reason']
    return { http: res.status, envelope: parsed as Envelope<P>, ...(typeof reason === 'string' ? { reason } : {}) }
  }

  init(body: InitBody): Promise<ApiResult<InitPayload>> {
    return this.call(MERCHANT_CALLS.init.path, body)
  }
  verify(body: VerifyBody): Promise<ApiResult<VerifyPayload>> {
    return this.call(MERCHANT_CALLS.verify.path, body)
  }
  status(body: StatusBody): Promise<ApiResult<StatusPayload>> {
    return this.call(MERCHANT_CALLS.status.path, body)
  }

  /** A control API call under /_sandbox. */
  async control<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, timeoutMs?: number): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.sessionHeader }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (this.opts.adminToken) headers.authorization = `Bearer ${this.opts.adminToken}`
    const res = await httpRequest(`${this.baseUrl}/_sandbox${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: timeoutMs ?? this.opts.timeoutMs,
      command: this.opts.command,
    })
    let parsed: any
    try {
      parsed = JSON.parse(res.text)
    } catch {
      throw new TransportError(`${this.baseUrl}/_sandbox${path} answered HTTP ${res.status}, not JSON: is this a dcb sandbox?`)
    }
    if (res.status >= 400) {
      if (parsed && typeof parsed.error === 'string') throw new SandboxError(parsed.error, parsed.message ?? parsed.error, res.status)
      throw new TransportError(`${this.baseUrl}/_sandbox${path} answered HTTP ${res.status}: is this a dcb sandbox?`)
    }
    return parsed as T
  }

  /**
   * Follows the live stream (`GET /_sandbox/events`, server-sent events): `onEvent` gets each event's
   * name and parsed data. `done` settles when the stream ends (resolves) or cannot be had (rejects:
   * TransportError when unreachable, SandboxError when the server refuses it); `close()` ends it.
   */
  events(onEvent: (event: string, data: any) => void): { done: Promise<void>; close: () => void } {
    const headers: Record<string, string> = { accept: 'text/event-stream', ...this.sessionHeader }
    if (this.opts.adminToken) headers.authorization = `Bearer ${this.opts.adminToken}`
    const url = new URL(`${this.baseUrl}/_sandbox/events`)
    let closed = false
    let req: import('node:http').ClientRequest | undefined
    const done = (async () => {
      const mod = url.protocol === 'https:' ? await import('node:https') : await import('node:http')
      if (closed) return
      await new Promise<void>((resolve, reject) => {
        req = mod.request(url, { method: 'GET', headers, agent: false }, (res) => {
          if (res.statusCode !== 200) {
            let text = ''
            res.setEncoding('utf8')
            res.on('data', (d: string) => (text += d))
            res.on('end', () => {
              let parsed: any
              try {
                parsed = JSON.parse(text)
              } catch {}
              if (parsed && typeof parsed.error === 'string') reject(new SandboxError(parsed.error, parsed.message ?? parsed.error, res.statusCode))
              else reject(new TransportError(`${url.href} answered HTTP ${res.statusCode}: not a dcb live stream (an older dcb?)`))
            })
            return
          }
          // Server-sent events: lines; `event:` and `data:` fields; a blank line ends an event; `:` a comment.
          let buffer = ''
          let event = 'message'
          let data: string[] = []
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => {
            buffer += chunk
            let nl: number
            while ((nl = buffer.indexOf('\n')) >= 0) {
              const line = buffer.slice(0, nl).replace(/\r$/, '')
              buffer = buffer.slice(nl + 1)
              if (line === '') {
                if (data.length) {
                  let parsed: unknown
                  try {
                    parsed = JSON.parse(data.join('\n'))
                  } catch {
                    parsed = data.join('\n')
                  }
                  if (!closed) onEvent(event, parsed)
                }
                event = 'message'
                data = []
              } else if (line.startsWith('event:')) event = line.slice(6).trim()
              else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
            }
          })
          res.on('end', () => resolve())
          res.on('close', () => resolve())
          res.on('error', () => resolve())
        })
        req.on('error', (e: NodeJS.ErrnoException) => {
          if (closed) return resolve()
          reject(new TransportError(`cannot reach ${url.origin}: ${unreachable(e, this.opts.command)}`))
        })
        req.end()
      })
    })()
    return {
      done,
      close: () => {
        closed = true
        req?.destroy()
      },
    }
  }

  /** Approve or deny a consent page (a redirect_url or its id): answers where the browser would go. */
  async consent(
    urlOrId: string,
    action: 'approve' | 'deny',
  ): Promise<{ status: number; location: string | null; query: Record<string, string>; reason?: string }> {
    const url = /^https?:\/\//.test(urlOrId) ? urlOrId : `${this.baseUrl}/consent/${encodeURIComponent(urlOrId)}`
    const res = await httpRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.sessionHeader },
      body: `action=${action}`,
      timeoutMs: this.opts.timeoutMs,
      command: this.opts.command,
    })
    if (res.status === 404) throw new SandboxError('CONSENT_NOT_FOUND', `no consent page at ${url}`)
    if (res.status !== 303 && res.status !== 200) throw new TransportError(`${url} answered HTTP ${res.status}: not a consent page`)
    const location = (res.headers.location as string | undefined) ?? null
    const query = location ? Object.fromEntries(new URL(location, url).searchParams) : {}
    const reason = res.headers['x-dcb-reason']
    return { status: res.status, location, query, ...(typeof reason === 'string' ? { reason } : {}) }
  }
}
