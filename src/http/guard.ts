/**
 * The cross-site guard of the control API and the console (docs/reference/security.md): a web page the
 * developer happens to visit must not be able to drive the sandbox on their machine.
 *
 * - `Host` (DNS rebinding): while the server listens on loopback, only loopback names and the
 *   `--allow-host` names; reads included. A socket check: off where there is no listener (the library).
 * - `Origin` (and `Sec-Fetch-Site`): when a browser names one, it must be the server's own.
 * - `Content-Type`: a POST (PUT, PATCH) must say `application/json`, an empty body included; HTML
 *   forms and `text/plain` fetches (the requests a page may send without asking) cannot.
 * - Access: the control API is open when the socket peer and the client are both loopback and the
 *   `Host` is a loopback or `--allow-host` name (on every listener); otherwise it needs the admin token (`isAdmin`: `Authorization: Bearer`, any case; the console adds a cookie).
 *
 * Every check is a function of a small request shape, so the library (a fetch `Request`, no socket)
 * can run the same rules with `socket: false`. Failures are the control API's JSON error form.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { ServerResponse } from 'node:http'
import { sameText } from './console-cookie.js'
import { isLoopback } from './ip.js'
import { sendJson } from './respond.js'

/** What the guard reads of a request: a Node `IncomingMessage` fits, and so does a converted fetch `Request`. */
export interface GuardRequest {
  method?: string
  headers: IncomingHttpHeaders
}

/** A refusal, in the control API's error form. */
export interface GuardRefusal {
  status: number
  error: string
  message: string
}

export interface CrossSiteOptions {
  /**
   * The checks that guard a listening socket (`Host` names against DNS rebinding). The library's
   * `sandbox.fetch` has no socket and turns them off.
   */
  socket: boolean
  /** Whether the listener is bound to a loopback address (asked per request: known once bound). */
  loopbackListener: () => boolean
  /** Host names accepted besides the loopback names (`--allow-host`), lower case, without port. */
  allowHosts?: readonly string[]
  /** A host name the client reached the server by, other than `Host` (a trusted proxy's X-Forwarded-Host). */
  forwardedHost?: (req: GuardRequest) => string | undefined
}

export interface AccessOptions {
  /** The socket peer's address (the library: its `clientIp`). */
  peer: string | undefined
  /** The client's address after proxy trust (the same as `peer` without `--trust-proxy`). */
  client: string | undefined
  /** Whether the request carries the admin's credentials. */
  isAdmin: (req: GuardRequest) => boolean
  /** Whether an admin token is configured at all (for the message). */
  adminTokenSet: boolean
  /**
   * Whether the request's `Host` is a loopback or `--allow-host` name (`hostLocal`). On a listener
   * that is not loopback (`--lan`, `--host 0.0.0.0`) a rebinding page reaches the server from a
   * loopback peer with its own name as `Host`: such a request is not exempt from the admin token.
   */
  hostLocal: boolean
  /** What the refusal calls the guarded thing and its credential (default: the control API's). */
  words?: AccessWords
}

/** Methods that carry a body and change state: they must be JSON. DELETE takes no body. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

const header = (req: GuardRequest, name: string): string | undefined => {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}

/** `Localhost:7700` -> `localhost`; `[::1]:7700` -> `[::1]`; a trailing dot dropped. */
export function hostName(host: string): string {
  let h = host.trim().toLowerCase()
  if (h.startsWith('[')) {
    const end = h.indexOf(']')
    h = end >= 0 ? h.slice(0, end + 1) : h
  } else {
    const colon = h.lastIndexOf(':')
    if (colon >= 0) h = h.slice(0, colon)
  }
  return h.endsWith('.') ? h.slice(0, -1) : h
}

/** `localhost`, `*.localhost`, `[::1]` and IPv4 loopback literals (`127.0.0.1`). */
export function isLoopbackName(name: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost') || name === '[::1]') return true
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
}

/**
 * Whether the `Host` a request names is one a rebinding page cannot send: a loopback name or an
 * `--allow-host` name (or none: browsers always send one). Always true without a socket (the library).
 */
export function hostLocal(req: GuardRequest, opts: CrossSiteOptions): boolean {
  if (!opts.socket) return true
  const host = header(req, 'host')
  if (host === undefined) return true
  const name = hostName(host)
  return isLoopbackName(name) || !!opts.allowHosts?.includes(name)
}

export function hostRefusal(req: GuardRequest, opts: CrossSiteOptions): GuardRefusal | undefined {
  if (!opts.socket || !opts.loopbackListener() || hostLocal(req, opts)) return
  const host = header(req, 'host')!
  return {
    status: 403,
    error: 'FORBIDDEN_HOST',
    message: `the Host "${host}" is not a loopback name; a sandbox on loopback answers only localhost, 127.0.0.1, [::1] and the --allow-host names (DNS rebinding)`,
  }
}

export function originRefusal(req: GuardRequest, opts: CrossSiteOptions): GuardRefusal | undefined {
  // A browser's own word on where a request comes from (sent even where it sends no Origin).
  const site = header(req, 'sec-fetch-site')
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return {
      status: 403,
      error: 'FORBIDDEN_ORIGIN',
      message: `a request from another site (Sec-Fetch-Site: ${site}) is refused: only the sandbox's own pages may call it`,
    }
  const origin = header(req, 'origin')
  if (origin === undefined) return
  let own = false
  try {
    const u = new URL(origin)
    const host = header(req, 'host')
    const reached = [host, opts.forwardedHost?.(req)].filter((h): h is string => !!h).map((h) => h.trim().toLowerCase())
    own = (u.protocol === 'http:' || u.protocol === 'https:') && reached.includes(u.host)
  } catch {
    own = false
  }
  if (own) return
  return {
    status: 403,
    error: 'FORBIDDEN_ORIGIN',
    message: `a request from the page at Origin "${origin}" is refused: only the sandbox's own pages may call it`,
  }
}

export function contentTypeRefusal(req: GuardRequest): GuardRefusal | undefined {
  if (!BODY_METHODS.has(req.method ?? '')) return
  const type = header(req, 'content-type')
  if (type && type.split(';')[0]!.trim().toLowerCase() === 'application/json') return
  return {
    status: 415,
    error: 'UNSUPPORTED_MEDIA_TYPE',
    message: `a ${req.method} needs Content-Type: application/json (an empty body too)${type ? `, not ${type}` : ''}`,
  }
}

/** Host, then Origin, then Content-Type: the first refusal, or undefined. */
export function crossSiteRefusal(req: GuardRequest, opts: CrossSiteOptions): GuardRefusal | undefined {
  return hostRefusal(req, opts) ?? originRefusal(req, opts) ?? contentTypeRefusal(req)
}

/** An `isAdmin` that accepts `Authorization: Bearer <token>` (scheme in any case), compared in constant time. */
export function bearerAdmin(token: string | undefined): (req: GuardRequest) => boolean {
  if (!token) return () => false
  return (req) => {
    const auth = header(req, 'authorization')
    const m = auth && /^bearer[ \t]+(.*)$/i.exec(auth.trim())
    // Digests compared: a token of another length is not refused any sooner than a near miss.
    return !!m && sameText(m[1]!.trim(), token)
  }
}

/** The control API's access rule: loopback peer and loopback client, or the admin. */
export function accessRefusal(req: GuardRequest, opts: AccessOptions): GuardRefusal | undefined {
  if (isLoopback(opts.peer) && isLoopback(opts.client) && opts.hostLocal) return
  if (opts.isAdmin(req)) return
  return { status: 403, error: 'FORBIDDEN', message: accessNeeds(req, opts) }
}

/** The names of what is guarded and of the credential that opens it, for the refusal's words. */
export interface AccessWords {
  /** 'the control API', 'the console'. */
  what: string
  /** The credential it needs. */
  token: string
  /** How to give it there, when the credential's name does not say. */
  how?: string
}

export const CONTROL_API_WORDS: AccessWords = { what: 'the control API', token: 'Authorization: Bearer <admin token>' }

/**
 * What a refused caller needs, in its situation. A caller on another machine always names the
 * server as Host: it is told that the API is loopback-only and how to open it (no token set) or that
 * it needs the token. Only a loopback caller naming a foreign Host meets the DNS-rebinding rule.
 */
function accessNeeds(req: GuardRequest, opts: AccessOptions): string {
  const { what, token, how: given } = opts.words ?? CONTROL_API_WORDS
  const how = given ? `: ${given}` : ''
  if (isLoopback(opts.peer) && isLoopback(opts.client)) {
    const host = header(req, 'host') ?? ''
    const foreign = `the Host "${host}" is not a loopback name or an --allow-host name`
    return opts.adminTokenSet
      ? `${foreign}: ${what} needs ${token} for it, from loopback too (DNS rebinding)${how}`
      : `${foreign}: from loopback ${what} answers only those (DNS rebinding); call it by localhost or 127.0.0.1, or start the server with --allow-host ${hostName(host)}`
  }
  return opts.adminTokenSet
    ? `${what} needs ${token} from this address${how}`
    : `${what} is open from loopback only; start the server with --admin-token <token> (or --lan, which makes one up and prints it) to open it to other addresses`
}

export function sendRefusal(res: ServerResponse, r: GuardRefusal): void {
  sendJson(res, r.status, { error: r.error, message: r.message })
}
