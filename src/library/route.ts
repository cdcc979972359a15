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
