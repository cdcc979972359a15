/**
 * The CLI's client of the merchant API and of the sandbox control API: the same functions as
 * `createClient` (the control operations derived from `contract/calls.ts`, `init`, `verify`, `status`,
 * `consent` from `fetch.ts`, one answer shape `{ httpStatus, envelope, reason }`), over a fetch
 * function: node:http(s) by default (lighter to load than the global fetch for a short-lived
 * command). What differs is how errors are said: as the control API says them, and a TransportError
 * when the server cannot be reached or is not the API's. Types only from the contract: no zod.
 */
import type { ClockMoveAnswer, InitBody, InitPayload, StatusBody, StatusPayload, VerifyBody, VerifyPayload } from '../contract/index.js'
import type { ControlOperations, MerchantOperations } from '../contract/operations.js'
import { SandboxError } from '../contract/index.js'
import { deriveOperations, type ControlRequest } from '../contract/calls.js'
import { checkHeaderValues } from './header-value.js'
import { controlOverFetch, merchantCall, merchantOperations, type ClientWords, type FetchFn } from './fetch.js'
import { nodeFetch, unreachable } from './node-fetch.js'
import { TransportError } from './transport-error.js'

export type { InitPayload, VerifyPayload, StatusPayload, ClockMoveAnswer }
export { SandboxError, TransportError }

export interface Envelope<P = Record<string, unknown>> {
  status: 'SUCCESS' | 'FAIL'
  message: string
  status_code: number
  payload?: P | null
}

/** A merchant call's answer, as `createClient` and a sandbox answer it: the HTTP status, the envelope, and why it failed (X-DCB-Reason). */
export interface ApiResult<P> {
  httpStatus: number
  envelope: Envelope<P>
  /** Why it failed: the X-DCB-Reason header of a dcb sandbox (absent elsewhere, and on success). */
  reason?: string
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
  /** The transport (default: node:http(s)). */
  fetch?: FetchFn
}

/** The CLI's words: the control API's messages as they are, a TransportError for what is not the API. */
const CLI_WORDS: ClientWords = {
  notEnvelope: (url, status, text) =>
    new TransportError(`${url} answered HTTP ${status} without the API's envelope: ${text.slice(0, 120).replace(/\s+/g, ' ')}`),
  notJson: (url, status) => new TransportError(`${url} answered HTTP ${status}, not JSON: is this a dcb sandbox?`),
  refused: (url, status, data) =>
    data && typeof data.error === 'string'
      ? new SandboxError(data.error, data.message ?? data.error, status)
      : new TransportError(`${url} answered HTTP ${status}: is this a dcb sandbox?`),
}

/** The control operations (`otp`, `advance`, `rules.add`, …) are derived from their one declaration (`contract/calls.ts`). */
export interface DcbClient extends ControlOperations {}

export class DcbClient {
  readonly baseUrl: string
  /** `X-DCB-Session` on every call, when a session is given. */
  private readonly sessionHeader: Record<string, string>
  private readonly fetchFn: FetchFn
  private readonly merchant: MerchantOperations
  private readonly sendControl: (r: ControlRequest) => Promise<unknown>
  /** Throws SandboxError BAD_REQUEST when the key or token has a character no header can carry (named, with the option). */
  constructor(readonly opts: ClientOptions) {
    checkHeaderValues([
      [opts.names?.apiKey ?? 'apiKey', opts.apiKey],
      [opts.names?.adminToken ?? 'adminToken', opts.adminToken],
    ])
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '')
    this.sessionHeader = opts.session ? { 'x-dcb-session': opts.session } : {}
    this.fetchFn = opts.fetch ?? nodeFetch(opts.command)
    const control = opts.adminToken ? { ...this.sessionHeader, authorization: `Bearer ${opts.adminToken}` } : this.sessionHeader
    // A call that waits (an OTP with `wait`) may take that long beyond the usual answer time; a clock move has no default limit.
    this.sendControl = controlOverFetch(this.fetchFn, this.baseUrl, control, CLI_WORDS, (r) =>
      r.waitSeconds ? (r.waitSeconds + 30) * 1000 : r.untimed ? (opts.timeoutMs ?? 0) : opts.timeoutMs,
    )
    this.merchant = merchantOperations(this.fetchFn, this.baseUrl, {
      apiKey: opts.apiKey,
      headers: this.sessionHeader,
      words: CLI_WORDS,
      timeoutMs: opts.timeoutMs,
    })
    Object.assign(this, deriveOperations(this.sendControl))
  }

  /** A merchant API request with this body text (any method: a replay sends what was recorded). */
  send<P = Record<string, unknown>>(path: string, body: string | undefined, method = 'POST'): Promise<ApiResult<P>> {
    return merchantCall(
      this.fetchFn,
      this.baseUrl + path,
      {
        method,
        headers: { 'api-key': this.opts.apiKey, 'content-type': 'application/json', accept: 'application/json', ...this.sessionHeader },
        ...(body === undefined ? {} : { body }),
        timeoutMs: this.opts.timeoutMs,
      },
      CLI_WORDS,
    )
  }

  init(body: InitBody): Promise<ApiResult<InitPayload>> {
    return this.merchant.init(body) as Promise<ApiResult<InitPayload>>
  }
  verify(body: VerifyBody): Promise<ApiResult<VerifyPayload>> {
    return this.merchant.verify(body) as Promise<ApiResult<VerifyPayload>>
  }
  status(body: StatusBody): Promise<ApiResult<StatusPayload>> {
    return this.merchant.status(body) as Promise<ApiResult<StatusPayload>>
  }

  /** A control API call under /_sandbox (one the operations do not name: the sessions). */
  control<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    return this.sendControl({ method, path, ...(body === undefined ? {} : { body }) }) as Promise<T>
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
    const res = await this.fetchFn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.sessionHeader },
      body: `action=${action}`,
      redirect: 'manual',
      timeoutMs: this.opts.timeoutMs,
    })
    await res.arrayBuffer()
    if (res.status === 404) throw new SandboxError('CONSENT_NOT_FOUND', `no consent page at ${url}`)
    if (res.status !== 303 && res.status !== 200) throw new TransportError(`${url} answered HTTP ${res.status}: not a consent page`)
    const location = res.headers.get('location')
    const query = location ? Object.fromEntries(new URL(location, url).searchParams) : {}
    const reason = res.headers.get('x-dcb-reason')
    return { status: res.status, location, query, ...(reason === null ? {} : { reason }) }
  }
}
