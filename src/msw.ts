/**
 * `dcb-sandbox/msw`: msw request handlers that answer every request under a base URL through an
 * in-process sandbox (the same pipeline as `sandbox.fetch`). msw (>= 2) is a peer dependency that
 * only this entry loads.
 */
import type { HttpHandler, HttpRequestParsedResult } from 'msw'
import { HttpHandlerClass } from './library/msw-peer.js'
import type { Sandbox } from './library/sandbox.js'
import { readBaseUrl, ROUTE, type RoutedSandbox } from './library/route.js'
import { unknownOption } from './contract/option-names.js'
import { isNetworkError } from './http/network-error.js'

export interface SandboxHandlersOptions {
  /** Where the merchant code sends its requests, e.g. `https://api.carrier.test` or `https://gw.test/dcb/v1` (a path prefix is stripped). */
  baseUrl: string
  /** Answer from this session (as the header `X-DCB-Session`; a request's own header wins). */
  session?: string
}

const HANDLER_OPTIONS: Record<keyof SandboxHandlersOptions, true> = { baseUrl: true, session: true }

/** Handlers for msw's `setupServer(...)`: every method and path under `baseUrl`; anything else is left to other handlers. */
export function sandboxHandlers(sandbox: Sandbox, opts: SandboxHandlersOptions): HttpHandler[] {
  const routed = sandbox as Sandbox & Partial<RoutedSandbox>
  const route = routed[ROUTE]
  if (typeof route !== 'function') {
    // sandbox.session(name) has the sandbox's functions but is not one: the session is an option here.
    const name = (sandbox as { name?: unknown } | undefined)?.name
    const session = typeof name === 'string' && typeof (sandbox as { fetch?: unknown }).fetch === 'function' ? name : undefined
    throw new TypeError(
      session === undefined
        ? 'sandboxHandlers: pass the sandbox made by createSandbox()'
        : `sandboxHandlers: pass the sandbox made by createSandbox(), not a session of it: sandboxHandlers(sandbox, { baseUrl, session: ${JSON.stringify(session)} })`,
    )
  }
  if (typeof opts !== 'object' || opts === null) throw new TypeError("sandboxHandlers: options are needed: sandboxHandlers(sandbox, { baseUrl: 'https://…' })")
  // A typo (`sesion`) would answer from the default session without a word.
  const problem = unknownOption(opts, HANDLER_OPTIONS)
  if (problem) throw new TypeError(`sandboxHandlers: ${problem}`)
  // Named now, by the option's name: on a request it would be a 400 about a header the caller never set.
  if (opts.session !== undefined) {
    try {
      routed.session(opts.session)
    } catch (e) {
      throw new TypeError(`sandboxHandlers: session: ${(e as Error).message}`)
    }
  }
  const base = readBaseUrl(opts.baseUrl)
  if (typeof base === 'string') throw new TypeError(`sandboxHandlers: ${base}`)
  const { prefix, publicBase } = base
  // A RegExp is matched against the whole URL by every msw 2.x: the base, then the end or a separator.
  const under = new RegExp(`^${escapeRegExp(publicBase)}(?:[/?#]|$)`)
  const info = { prefix, publicBase, session: opts.session }
  // A request the caller gave up: msw already rejected its fetch with the signal's reason (the
  // sandbox logged a client that went away); a network error ends the handler without msw
  // reporting the reason again as an exception of the handler.
  const answer = ({ request }: { request: Request }) =>
    route.call(routed, request, info).catch((e: unknown) => {
      // A fault (a rule's reset, close, garbage or hang): the network error fetch gives.
      if (request.signal.aborted || isNetworkError(e)) return Response.error()
      throw e
    })
  return [new SandboxHandler(under, answer)]
}

/**
 * `http.all(under, resolver)` with a cheaper match: the sandbox reads no cookies, so msw's cookie
 * parsing and cookie-store lookups (a tenth of msw's own time per request) are skipped, and the
 * URL is matched by one RegExp test without parsing it.
 */
class SandboxHandler extends HttpHandlerClass {
  readonly #under: RegExp
  constructor(under: RegExp, resolver: (info: { request: Request }) => Promise<Response>) {
    super(/.+/, under, resolver)
    this.#under = under
  }
  override async parse(args: { request: Request }): Promise<HttpRequestParsedResult> {
    return { match: { matches: this.#under.test(args.request.url), params: {} }, cookies: {} }
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
