/**
 * What the msw handlers (`dcb-sandbox/msw`) take from a sandbox, not part of the public API: in a
 * file of its own, so the msw entry loads none of the library (its CommonJS build bundles what it imports).
 */

/** A symbol of the global registry: a sandbox of one build of the package (ES modules, CommonJS) serves the other's handlers. */
export const ROUTE = Symbol.for('dcb.sandbox.route')
export interface Route {
  /** A path prefix the requests carry (msw base URLs), stripped before the sandbox sees the path. */
  prefix: string
  /** Where the sandbox is reached from, for links it makes (consent pages). */
  publicBase: string
  session?: string
}
export interface RoutedSandbox {
  [ROUTE](request: Request, route: Route): Promise<Response>
}

/** A base URL read once: its origin, its path prefix (`/v1`, empty at the root) and both together. */
export interface BaseUrl {
  origin: string
  prefix: string
  publicBase: string
}

/**
 * `baseUrl` of `createSandbox` and of `sandboxHandlers`, read by one rule: an absolute http(s) URL,
 * an origin with an optional path (a trailing `/` dropped). A query, a fragment or credentials would
 * never match a request's own, so they are refused rather than left out. Answers the problem in words.
 */
export function readBaseUrl(value: unknown): BaseUrl | string {
  const example = "an http(s) URL such as 'https://api.carrier.test/v1'"
  if (typeof value !== 'string') return `baseUrl must be ${example} (got ${value === null ? 'null' : typeof value})`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `baseUrl ${JSON.stringify(value)} is not an absolute URL: give ${example}`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `baseUrl ${JSON.stringify(value)} must be http(s), e.g. 'https://api.carrier.test/v1'`
  if (url.search || url.hash || value.includes('?') || value.includes('#'))
    return `baseUrl ${JSON.stringify(value)} has a query or fragment: give the origin and path only, e.g. '${url.origin}${url.pathname}'`
  if (url.username || url.password) return `baseUrl ${JSON.stringify(value)} has credentials: give the origin and path only`
  const prefix = url.pathname.replace(/\/+$/, '')
  return { origin: url.origin, prefix, publicBase: url.origin + prefix }
}

/** Whether `url` is under `base`: the same origin, then the prefix itself or a path below it. */
export function isUnder(url: URL, base: BaseUrl): boolean {
  if (url.origin !== base.origin) return false
  const path = url.pathname
  return !base.prefix || path === base.prefix || path.startsWith(`${base.prefix}/`)
}
