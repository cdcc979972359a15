/**
 * `createClient`: a running `dcb serve` with the interface of a sandbox from `createSandbox` (the same
 * control functions, `init`, `verify`, `status`, `consent`, SandboxError): a test written against one
 * runs against the other by changing the factory. The one client of `server-client.ts` over the
 * global fetch, in library words.
 */
import { DEFAULT_BASE_URL, DEMO_API_KEY, SESSION_NAME, SESSION_NAME_RULE } from '../contract/defaults.js'
import type { ControlOperations, MerchantOperations } from '../contract/operations.js'
import { SandboxError } from '../contract/index.js'
import { LIBRARY_WORDS } from './fetch.js'
import { serverClient } from './server-client.js'
import { checkHeaderValues } from './header-value.js'
import { checkOptionNames } from '../contract/option-names.js'

export interface ClientOptions {
  /** Where the server answers, e.g. `http://127.0.0.1:7700` (a path prefix is kept). */
  baseUrl: string
  /** The merchant API key of `init`, `verify` and `status` (default: the demo key). */
  apiKey?: string
  /** Sent as `Authorization: Bearer` on control calls (needed from other addresses than loopback). */
  adminToken?: string
  /** The session every call works in (header `X-DCB-Session`; default: the default session). */
  session?: string
}

/** A running sandbox's control functions and merchant calls, bound to one session. */
export interface SandboxClient extends ControlOperations, MerchantOperations {
  /** The session's name (`default` for the default session). */
  readonly name: string
  readonly baseUrl: string
  /** The same functions bound to the session `name`. */
  session(name: string): SandboxClient
  /** Ends the client and the session clients made from it: later calls throw `SandboxError` `SANDBOX_CLOSED`, as a sandbox's do (the server goes on). */
  close(): Promise<void>
}

/** Every option of `createClient`, so an unknown one is refused by name. */
const CLIENT_OPTIONS: Record<keyof ClientOptions, true> = { baseUrl: true, apiKey: true, adminToken: true, session: true }

/**
 * A client of a running `dcb serve`.
 * @example const sandbox = createClient({ baseUrl: 'http://127.0.0.1:7700', session: 'checkout-tests' })
 */
export function createClient(opts: ClientOptions): SandboxClient {
  checkOptionNames('createClient', opts, CLIENT_OPTIONS)
  if (opts.baseUrl === undefined)
    throw new SandboxError('BAD_REQUEST', `createClient: baseUrl is needed, e.g. createClient({ baseUrl: '${DEFAULT_BASE_URL}' })`)
  let url: URL
  try {
    url = new URL(opts.baseUrl)
  } catch {
    throw new SandboxError('BAD_REQUEST', `baseUrl "${opts.baseUrl}" is not a URL (e.g. ${DEFAULT_BASE_URL})`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SandboxError('BAD_REQUEST', `baseUrl "${opts.baseUrl}" is not an http(s) URL`)
  const baseUrl = url.href.replace(/\/+$/, '')
  const apiKey = opts.apiKey ?? DEMO_API_KEY
  // Both go in headers: refused here, by name, rather than by fetch at the first call.
  checkHeaderValues([
    ['apiKey', apiKey],
    ['adminToken', opts.adminToken],
  ])
  // As a sandbox's: a test that goes on using a closed one fails against either factory alike.
  let closed = false
  // fetch says only "fetch failed" when nothing answers: name the server and why, keeping the cause.
  const fetchFn = (input: string, init: RequestInit) => {
    if (closed) return Promise.reject(new SandboxError('SANDBOX_CLOSED', 'this client was closed'))
    return fetch(input, init).catch((err: unknown) => {
      if (!(err instanceof TypeError) || err.message !== 'fetch failed') throw err
      const cause = (err as { cause?: { message?: string } }).cause?.message
      throw new Error(`cannot reach ${baseUrl}${cause ? `: ${cause}` : ''} (is dcb serve running there?)`, { cause: err })
    })
  }
  const bind = (session: string | undefined): SandboxClient => {
    if (session !== undefined && !SESSION_NAME.test(session)) throw new SandboxError('BAD_REQUEST', `"${session}" is not a session name: ${SESSION_NAME_RULE}`)
    // The CLI's client is the same one: only the fetch and the words differ.
    const { consentDetail: _detail, ...operations } = serverClient({
      fetch: fetchFn,
      baseUrl,
      apiKey,
      adminToken: opts.adminToken,
      session,
      words: LIBRARY_WORDS,
    }).operations
    return {
      name: session ?? 'default',
      baseUrl,
      ...operations,
      session: (name) => bind(name),
      close: async () => {
        closed = true
      },
    }
  }
  return bind(opts.session)
}
