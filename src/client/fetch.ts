/**
 * The merchant calls and the control calls over a fetch function, for `createClient` (the global
 * fetch, against a running server) and `createSandbox` (its in-process fetch): one implementation, so
 * a sandbox and a client answer alike. Types only from the contract: no zod, no Node.
 */
import { SandboxError } from '../contract/index.js'
import { libraryMessage } from './library-message.js'
import type { ControlRequest } from '../contract/calls.js'
import { MERCHANT_CALLS, MERCHANT_OPERATIONS } from '../contract/merchant-calls.js'
import type { ConsentAnswer, MerchantCallFunctions } from '../contract/merchant.js'
import type { MerchantOperations } from '../contract/operations.js'

/**
 * A fetch's options, how long the call may take, and whether the answer is a stream to read as it
 * comes (the live stream): the CLI's node:http fetch reads both; the global fetch ignores them (it
 * always streams).
 */
export type FetchInit = RequestInit & { timeoutMs?: number; stream?: boolean }
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
  /** A consent decision answered neither 303 nor 200 (nor 404). */
  notConsentPage(url: string, status: number): Error
  /** The live stream answered something else than 200 and a control error. */
  notLiveStream(url: string, status: number): Error
}

export const LIBRARY_WORDS: ClientWords = {
  notEnvelope: (url, status, _text, parsed) =>
    parsed === undefined ? new SandboxError('ERROR', `${url} answered HTTP ${status} without the API's envelope: is this a dcb sandbox?`, status) : undefined,
  notJson: (url, status) => new SandboxError('ERROR', `${url} answered HTTP ${status}, not JSON: is this a dcb sandbox?`, status),
  // Said in library terms, as createSandbox's functions say it (the control API's names routes and commands).
  refused: (_url, status, data) =>
    new SandboxError(data?.error ?? 'ERROR', libraryMessage(data?.error ?? 'ERROR', data?.message ?? `the control API answered ${status}`), status),
  notConsentPage: (url, status) => new SandboxError('ERROR', `${url} answered HTTP ${status}: not a consent page`, status),
  notLiveStream: (url, status) => new SandboxError('ERROR', `${url} answered HTTP ${status}: not a dcb live stream (an older dcb?)`, status),
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
  /** An http(s) URL given to `consent` is posted as it is (the CLI: the page the user pasted), not under `base`. */
  consentAsGiven?: boolean
}

/** A consent decision as the CLI shows it: where the browser goes, that URL's query, and why it failed (X-DCB-Reason). */
export interface ConsentDetail extends ConsentAnswer {
  query: Record<string, string>
  reason?: string
}

/** The merchant calls, and the consent decision with its query and reason (the library's `consent` answers `{ status, location }` of it). */
export interface MerchantClient extends MerchantOperations {
  consentDetail(url: string, action: 'approve' | 'deny'): Promise<ConsentDetail>
}

/** The declared merchant calls (`init`, `verify`, `status`) and `consent` against `base` (origin and optional path prefix). */
export function merchantOperations(fetchFn: FetchFn, base: string, opts: MerchantCallOptions): MerchantOperations {
  const { consentDetail: _detail, ...operations } = merchantClient(fetchFn, base, opts)
  return operations
}

/** `merchantOperations` and `consentDetail`: the consent decision is made once, for both answers. */
export function merchantClient(fetchFn: FetchFn, base: string, opts: MerchantCallOptions): MerchantClient {
  const words = opts.words ?? LIBRARY_WORDS
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
    if (opts.consentAsGiven) return { target: /^https?:\/\//.test(url) ? url : `${base}/consent/${encodeURIComponent(url)}`, via: fetchFn }
    const page = consentPage(url)
    if (page === 'id') return { target: `${base}/consent/${encodeURIComponent(url)}`, via: fetchFn }
    if (page === undefined) return { target: url, via: fetchFn }
    if (opts.underPage) return { target: `${page.publicBase}/consent/${page.id}`, via: opts.underPage(page) }
    return { target: `${base}/consent/${page.id}`, via: fetchFn }
  }
  const consentDetail = async (url: string, action: 'approve' | 'deny'): Promise<ConsentDetail> => {
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
    if (res.status !== 303 && res.status !== 200) throw words.notConsentPage(target, res.status)
    const location = res.headers.get('location')
    const query = location ? Object.fromEntries(new URL(location, target).searchParams) : {}
    const reason = res.headers.get('x-dcb-reason')
    return { status: res.status, location, query, ...(reason === null ? {} : { reason }) }
  }
  // One function per declared call, posting to its path.
  const calls = Object.fromEntries(MERCHANT_OPERATIONS.map((op) => [op, (body: unknown) => post(MERCHANT_CALLS[op].path, body)])) as MerchantCallFunctions
  return {
    ...calls,
    consentDetail,
    async consent(url, action) {
      const { status, location } = await consentDetail(url, action)
      return { status, location }
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
