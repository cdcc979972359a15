/**
 * The merchant calls and the control calls over a fetch function, for `createClient` (the global
 * fetch, against a running server) and `createSandbox` (its in-process fetch): one implementation, so
 * a sandbox and a client answer alike. Types only from the contract: no zod, no Node.
 */
import { SandboxError } from '../contract/index.js'
import { libraryMessage } from './library-message.js'
import type { ControlRequest } from '../contract/calls.js'
import { MERCHANT_CALLS } from '../contract/merchant-calls.js'
import type { MerchantOperations } from '../contract/operations.js'

/** A fetch's options, and how long the call may take (the CLI's node:http fetch reads it; the global fetch ignores it). */
export type FetchInit = RequestInit & { timeoutMs?: number }
export type FetchFn = (url: string, init: FetchInit) => Promise<Response>

/**
 * How a client says an answer it cannot use: `createClient` and a sandbox in library terms
 * (SandboxError), the CLI as the control API says it (a TransportError when the server is not the API's).
 */
export interface ClientWords {
  /** A merchant answer that is not JSON (`parsed` undefined) or not the envelope: the error, or undefined to hand it on. */
  notEnvelope(url: string, status: number, text: string, parsed: unknown): Error | undefined
  /** A control answer that is not JSON. */
  notJson(url: string, status: number): Error
  /** A control call refused (HTTP 400 or more), with its JSON. */
  refused(url: string, status: number, data: any): Error
}

export const LIBRARY_WORDS: ClientWords = {
  notEnvelope: (url, status, _text, parsed) =>
    parsed === undefined ? new SandboxError('ERROR', `${url} answered HTTP ${status} without the API's envelope: is this a dcb sandbox?`, status) : undefined,
  notJson: (url, status) => new SandboxError('ERROR', `${url} answered HTTP ${status}, not JSON: is this a dcb sandbox?`, status),
  // Said in library terms, as createSandbox's functions say it (the control API's names routes and commands).
  refused: (_url, status, data) =>
    new SandboxError(data?.error ?? 'ERROR', libraryMessage(data?.error ?? 'ERROR', data?.message ?? `the control API answered ${status}`), status),
}

/** A merchant call's answer: `{ httpStatus, envelope, reason }` (`reason`: the X-DCB-Reason header, on failures). */
export async function merchantCall(fetchFn: FetchFn, url: string, init: FetchInit, words: ClientWords = LIBRARY_WORDS): Promise<any> {
  const res = await fetchFn(url, init)
  const text = await res.text()
  let envelope: unknown
  try {
    envelope = JSON.parse(text)
  } catch {
    envelope = undefined
  }
  const refused = isEnvelope(envelope) ? undefined : words.notEnvelope(url, res.status, text, envelope)
  if (refused) throw refused
  const reason = res.headers.get('x-dcb-reason')
  return { httpStatus: res.status, envelope, ...(reason === null ? {} : { reason }) }
}

function isEnvelope(v: unknown): boolean {
  if (!v || typeof v !== 'object') return false
  const e = v as Record<string, unknown>
  return (e.status === 'SUCCESS' || e.status === 'FAIL') && typeof e.message === 'string' && typeof e.status_code === 'number'
}

/** Where a consent page's own base URL is reached: its origin and path prefix, as read off the page's URL. */
export interface PageMount {
  /** The base URL the page is under, e.g. `https://gw.test/dcb/v1` of `https://gw.test/dcb/v1/consent/ID`. */
  publicBase: string
  /** Its path, e.g. `/dcb/v1` (empty at the root). */
  prefix: string
}

export interface MerchantCallOptions {
  apiKey: string
  headers: Record<string, string>
  /**
   * A consent page's absolute URL is posted under the base URL it names, through this fetch (the
   * sandbox: an msw base URL's path prefix, which `sandbox.fetch` does not strip). Without it the page
   * is posted under `base` by its id.
   */
  underPage?: (mount: PageMount) => FetchFn
  /** How errors are said (default: in library terms). */
  words?: ClientWords
  /** How long a call may take (the CLI's `--timeout`). */
  timeoutMs?: number
}

/** `init`, `verify`, `status` and `consent` against `base` (origin and optional path prefix). */
export function merchantOperations(fetchFn: FetchFn, base: string, opts: MerchantCallOptions): MerchantOperations {
  const post = (path: string, body: unknown): Promise<any> =>
    merchantCall(
      fetchFn,
      base + path,
      {
        method: 'POST',
        headers: { ...opts.headers, 'api-key': opts.apiKey, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        timeoutMs: opts.timeoutMs,
      },
      opts.words,
    )
  /**
   * Where to post a consent decision, the URL read once: an id goes under `base`; so does a consent
   * page's URL, by its id (or under the base it names, with `underPage`). Any other URL is posted as it is.
   */
  const consentTarget = (url: string): { target: string; via: FetchFn } => {
    const page = consentPage(url)
    if (page === 'id') return { target: `${base}/consent/${encodeURIComponent(url)}`, via: fetchFn }
    if (page === undefined) return { target: url, via: fetchFn }
    if (opts.underPage) return { target: `${page.publicBase}/consent/${page.id}`, via: opts.underPage(page) }
    return { target: `${base}/consent/${page.id}`, via: fetchFn }
  }
  return {
    init: (body) => post(MERCHANT_CALLS.init.path, body),
    verify: (body) => post(MERCHANT_CALLS.verify.path, body),
    status: (body) => post(MERCHANT_CALLS.status.path, body),
    async consent(url, action) {
      if (action !== 'approve' && action !== 'deny') throw new SandboxError('BAD_REQUEST', `consent: action must be approve or deny, not "${String(action)}"`)
      const { target, via } = consentTarget(url)
      const res = await via(target, {
        method: 'POST',
        headers: { ...opts.headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: `action=${action}`,
        redirect: 'manual',
        timeoutMs: opts.timeoutMs,
      })
      await res.arrayBuffer()
      if (res.status === 404) throw new SandboxError('CONSENT_NOT_FOUND', `no consent page at ${target}`)
      if (res.status !== 303 && res.status !== 200) throw new SandboxError('ERROR', `${target} answered HTTP ${res.status}: not a consent page`, res.status)
      return { status: res.status, location: res.headers.get('location') }
    },
  }
}

/**
 * What a consent argument is, read with one parse: `id` for an id (anything but an http(s) URL), the
 * page's id and the base URL it is under for a consent page's URL (`…/consent/ID`), undefined for
 * another URL.
 */
function consentPage(url: string): 'id' | (PageMount & { id: string }) | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'id'
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'id'
  const page = /^(.*)\/consent\/([^/]+)\/?$/.exec(parsed.pathname)
  if (!page) return undefined
  const prefix = page[1]!.replace(/\/+$/, '')
  return { publicBase: parsed.origin + prefix, prefix, id: page[2]! }
}

/**
 * Sends one control call under `base`/_sandbox and answers its JSON; a refusal throws the control
 * API's error (as `words` say it). `timeoutOf`: how long the call may take (an OTP wait, a clock move).
 */
export function controlOverFetch(
  fetchFn: FetchFn,
  base: string,
  headers: Record<string, string>,
  words: ClientWords = LIBRARY_WORDS,
  timeoutOf: (r: ControlRequest) => number | undefined = () => undefined,
): (r: ControlRequest) => Promise<unknown> {
  return async (r) => {
    const url = `${base}/_sandbox${r.path}`
    const timeoutMs = timeoutOf(r)
    const res = await fetchFn(url, {
      method: r.method,
      headers: { ...headers, accept: 'application/json', ...(r.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }),
      ...(r.signal ? { signal: r.signal } : {}),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    })
    return controlAnswer(url, res.status, await res.text(), words)
  }
}

/** A control call's answer: its JSON, or the error `words` say for a refusal (HTTP 400 or more) or for what is not JSON. */
export function controlAnswer(url: string, status: number, text: string, words: ClientWords = LIBRARY_WORDS): unknown {
  let data: any
  try {
    data = JSON.parse(text)
  } catch {
    throw words.notJson(url, status)
  }
  if (status >= 400) throw words.refused(url, status, data)
  return data
}
