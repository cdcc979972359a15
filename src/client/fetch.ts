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

export type FetchFn = (url: string, init: RequestInit) => Promise<Response>

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
}

/** `init`, `verify`, `status` and `consent` against `base` (origin and optional path prefix). */
export function merchantOperations(fetchFn: FetchFn, base: string, opts: MerchantCallOptions): MerchantOperations {
  const post = async (path: string, body: unknown): Promise<any> => {
    const res = await fetchFn(base + path, {
      method: 'POST',
      headers: { ...opts.headers, 'api-key': opts.apiKey, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    })
    const text = await res.text()
    let envelope: unknown
    try {
      envelope = JSON.parse(text)
    } catch {
      throw new SandboxError('ERROR', `${base}${path} answered HTTP ${res.status} without the API's envelope: is this a dcb sandbox?`, res.status)
    }
    const reason = res.headers.get('x-dcb-reason')
    return { httpStatus: res.status, envelope, ...(reason === null ? {} : { reason }) }
  }
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

/** Sends one control call under `base`/_sandbox and answers its JSON; a refusal throws the control API's error as a SandboxError. */
export function controlOverFetch(fetchFn: FetchFn, base: string, headers: Record<string, string>): (r: ControlRequest) => Promise<unknown> {
  return async (r) => {
    const url = `${base}/_sandbox${r.path}`
    const res = await fetchFn(url, {
      method: r.method,
      headers: { ...headers, accept: 'application/json', ...(r.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }),
      ...(r.signal ? { signal: r.signal } : {}),
    })
    const text = await res.text()
    let data: any
    try {
      data = JSON.parse(text)
    } catch {
      throw new SandboxError('ERROR', `${url} answered HTTP ${res.status}, not JSON: is this a dcb sandbox?`, res.status)
    }
    // Said in library terms, as createSandbox's functions say it (the control API's names routes and commands).
    if (res.status >= 400)
      throw new SandboxError(
        data?.error ?? 'ERROR',
        libraryMessage(data?.error ?? 'ERROR', data?.message ?? `the control API answered ${res.status}`),
        res.status,
      )
    return data
  }
}
