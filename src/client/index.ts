/**
 * The CLI's client of the merchant API and of the sandbox control API: the one client of
 * `server-client.ts` (as `createClient` is), over a fetch function: node:http(s) by default (lighter
 * to load than the global fetch for a short-lived command). What differs is how errors are said: as
 * the control API says them, and a TransportError when the server cannot be reached or is not the
 * API's. Types only from the contract: no zod.
 */
import type { ClockMoveAnswer, InitPayload, StatusPayload, VerifyPayload } from '../contract/index.js'
import type { Bodies, Payloads } from '../contract/merchant.js'
import type { MERCHANT_CALLS } from '../contract/merchant-calls.js'
import type { ControlOperations } from '../contract/operations.js'
import { SandboxError } from '../contract/index.js'
import { checkHeaderValues } from './header-value.js'
import type { ClientWords, ConsentDetail, FetchFn } from './fetch.js'
import { nodeFetch } from './node-fetch.js'
import { serverClient, type ApiResult, type Envelope, type ServerClient } from './server-client.js'
import { TransportError } from './transport-error.js'

export type { InitPayload, VerifyPayload, StatusPayload, ClockMoveAnswer, ApiResult, Envelope }
export { SandboxError, TransportError }

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
  notConsentPage: (url, status) => new TransportError(`${url} answered HTTP ${status}: not a consent page`),
  notLiveStream: (url, status) => new TransportError(`${url} answered HTTP ${status}: not a dcb live stream (an older dcb?)`),
}

/** The merchant calls (`init`, `verify`, `status`), one per declared call (`contract/merchant-calls.ts`): the envelope as the wire has it. */
type CliMerchantCalls = { readonly [O in keyof typeof MERCHANT_CALLS]: (body: Bodies[O]) => Promise<ApiResult<Payloads[O]>> }

/**
 * The control operations (`otp`, `advance`, `rules.add`, …) and the merchant calls are derived from
 * their one declaration each (`contract/calls.ts`, `contract/merchant-calls.ts`).
 */
export interface DcbClient extends ControlOperations, CliMerchantCalls {}

export class DcbClient {
  readonly baseUrl: string
  readonly send: ServerClient['send']
  readonly control: ServerClient['control']
  readonly events: ServerClient['events']
  /** Approve or deny a consent page (a redirect_url, posted as given, or its id): answers where the browser would go. */
  readonly consent: (urlOrId: string, action: 'approve' | 'deny') => Promise<ConsentDetail>
  /** Throws SandboxError BAD_REQUEST when the key or token has a character no header can carry (named, with the option). */
  constructor(readonly opts: ClientOptions) {
    checkHeaderValues([
      [opts.names?.apiKey ?? 'apiKey', opts.apiKey],
      [opts.names?.adminToken ?? 'adminToken', opts.adminToken],
    ])
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '')
    const client = serverClient({
      fetch: opts.fetch ?? nodeFetch(opts.command),
      baseUrl: this.baseUrl,
      apiKey: opts.apiKey,
      adminToken: opts.adminToken,
      session: opts.session,
      words: CLI_WORDS,
      timeoutMs: opts.timeoutMs,
      // A call that waits (an OTP with `wait`) may take that long beyond the usual answer time; a clock move has no default limit.
      timeoutOf: (r) => (r.waitSeconds ? (r.waitSeconds + 30) * 1000 : r.untimed ? (opts.timeoutMs ?? 0) : opts.timeoutMs),
      // The page the user pasted is the one decided, wherever it is.
      consentAsGiven: true,
    })
    // The control operations and the merchant calls alike; `consent` is the CLI's `consentDetail`.
    const { consent: _summary, consentDetail, ...operations } = client.operations
    Object.assign(this, operations)
    this.consent = consentDetail
    this.send = client.send
    this.control = client.control
    this.events = client.events
  }
}
