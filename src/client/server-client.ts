/**
 * The one client of a running server, over a fetch function: the control operations (derived from
 * `contract/calls.ts`), the merchant calls, a raw merchant request, any control call and the live
 * stream. `createClient` calls it over the global fetch in library words; the CLI's `DcbClient` over
 * node:http in its own words. What differs between them is only the fetch, the words and the options.
 * Types only from the contract: no zod, no Node.
 */
import { deriveOperations, type ControlRequest } from '../contract/calls.js'
import type { ControlOperations } from '../contract/operations.js'
import { controlOverFetch, merchantCall, merchantClient, type ClientWords, type FetchFn, type MerchantClient } from './fetch.js'

export interface ServerClientOptions {
  fetch: FetchFn
  /** Where the server answers, without a trailing `/` (a path prefix is kept). */
  baseUrl: string
  apiKey: string
  /** Sent as `Authorization: Bearer` on control calls and the live stream. */
  adminToken?: string
  /** The session every call works in (header `X-DCB-Session`). */
  session?: string
  /** How errors are said. */
  words: ClientWords
  /** How long a merchant call or a consent decision may take. */
  timeoutMs?: number
  /** How long a control call may take (an OTP wait, a clock move). */
  timeoutOf?: (r: ControlRequest) => number | undefined
  /** An http(s) URL given to `consent` is posted as it is, not under `baseUrl` (the CLI). */
  consentAsGiven?: boolean
}

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

export interface ServerClient {
  /** The control operations and the merchant calls (`consent` answers `{ status, location }`; `consentDetail` adds the query and reason). */
  operations: ControlOperations & MerchantClient
  /** A merchant API request with this body text (any method: a replay sends what was recorded). */
  send<P = Record<string, unknown>>(path: string, body: string | undefined, method?: string): Promise<ApiResult<P>>
  /** A control API call under /_sandbox (one the operations do not name: the sessions). */
  control<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T>
  /**
   * Follows the live stream (`GET /_sandbox/events`, server-sent events): `onEvent` gets each event's
   * name and parsed data. `done` settles when the stream ends (resolves) or cannot be had (rejects:
   * what the fetch throws when unreachable, the words' error when the server refuses it); `close()` ends it.
   */
  events(onEvent: (event: string, data: any) => void): { done: Promise<void>; close: () => void }
}

export function serverClient(o: ServerClientOptions): ServerClient {
  const sessionHeader: Record<string, string> = o.session === undefined ? {} : { 'x-dcb-session': o.session }
  const control = o.adminToken ? { ...sessionHeader, authorization: `Bearer ${o.adminToken}` } : sessionHeader
  const sendControl = controlOverFetch(o.fetch, o.baseUrl, control, o.words, o.timeoutOf)
  const merchant = merchantClient(o.fetch, o.baseUrl, {
    apiKey: o.apiKey,
    headers: sessionHeader,
    words: o.words,
    timeoutMs: o.timeoutMs,
    consentAsGiven: o.consentAsGiven,
  })
  return {
    operations: { ...deriveOperations(sendControl), ...merchant },
    send: (path, body, method = 'POST') =>
      merchantCall(
        o.fetch,
        o.baseUrl + path,
        {
          method,
          headers: { 'api-key': o.apiKey, 'content-type': 'application/json', accept: 'application/json', ...sessionHeader },
          ...(body === undefined ? {} : { body }),
          timeoutMs: o.timeoutMs,
        },
        o.words,
      ),
    control: (method, path, body) => sendControl({ method, path, ...(body === undefined ? {} : { body }) }) as Promise<any>,
    events: (onEvent) => liveStream(o, { accept: 'text/event-stream', ...control }, onEvent),
  }
}

/** The live stream through the fetch function (`stream`: its body read as it comes, no time-out); closing aborts the fetch. */
function liveStream(o: ServerClientOptions, headers: Record<string, string>, onEvent: (event: string, data: any) => void) {
  const url = new URL(`${o.baseUrl}/_sandbox/events`).href
  const abort = new AbortController()
  let closed = false
  const done = (async () => {
    let res: Response
    try {
      res = await o.fetch(url, { method: 'GET', headers, signal: abort.signal, stream: true, timeoutMs: 0 })
    } catch (e) {
      if (closed) return
      throw e
    }
    if (res.status !== 200) {
      const text = await res.text().catch(() => '')
      let parsed: any
      try {
        parsed = JSON.parse(text)
      } catch {}
      throw parsed && typeof parsed.error === 'string' ? o.words.refused(url, res.status, parsed) : o.words.notLiveStream(url, res.status)
    }
    // Server-sent events: lines; `event:` and `data:` fields; a blank line ends an event; `:` a comment.
    let buffer = ''
    let event = 'message'
    let data: string[] = []
    const lines = (chunk: string) => {
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
    }
    const decoder = new TextDecoder()
    // A stream that ends, breaks off or is closed ends `done` alike: the follower decides whether to reconnect.
    const reader = res.body?.getReader()
    try {
      for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) lines(decoder.decode(r.value, { stream: true }))
    } catch {}
  })()
  return {
    done,
    close: () => {
      closed = true
      abort.abort()
    },
  }
}
