/**
 * `createSandbox`: the sandbox in-process for a merchant's own test suite. The same engine and the
 * same HTTP pipeline as `dcb serve`, in memory, with no socket: `fetch` runs the server's request
 * listener on an in-memory request, and the control operations are the control API's calls.
 */
import type { FailurePayloadMode } from '../core/outcomes.js'
import { parseTimestamp, timeProblem } from '../core/time.js'
import type { LayerInput } from '../core/layering.js'
import { loadWorld, type LoadedWorld } from '../world/load.js'
import { layerChecked } from '../world/layer-checks.js'
import type { World } from './world-input.js'
import type { WorldDocument } from '../contract/control.js'
import { createSandboxApp } from '../http/app.js'
import { rawRequest, runListener, toResponse, type RawRequest, type RawResponse } from '../http/inprocess.js'
import { normalizeIp } from '../http/ip.js'
import { createHost, isSessionName, memorySessions } from '../runtime/host.js'
import { version } from '../version.js'
import { SandboxError } from '../core/errors.js'
import { abortableAnswer } from './abortable-answer.js'
import { checkSandboxOptions } from './options.js'
import { yieldToEventLoop } from '../yield.js'
import type { ControlOperations, MerchantOperations } from '../contract/operations.js'
import { DEFAULT_WORLD_FILE, DEMO_API_KEY, dotNameRefusal, isDotName, SESSION_NAME_RULE } from '../contract/defaults.js'
import { controlAnswer, LIBRARY_WORDS, merchantOperations, type ClientWords, type PageMount } from '../client/fetch.js'
import { deriveOperations, type ControlRequest } from '../contract/calls.js'
import { isUnder, readBaseUrl, ROUTE, type BaseUrl, type Route, type RoutedSandbox } from './route.js'

/** The library's words, but for an answer with no JSON: in process there is no server to ask about. */
const IN_PROCESS_WORDS: ClientWords = {
  ...LIBRARY_WORDS,
  notJson: (_url, status) => new SandboxError('ERROR', `the control API answered ${status} with no JSON`, status),
}
export type { Rule, World } from './world-input.js'

export interface SandboxOptions {
  /**
   * A world object (validated like a fixture file) instead of the default world; with `extends: 'default'`,
   * layered on it. `world()` of a sandbox or a client answers one (the same world again).
   */
  world?: World | WorldDocument
  /** Fixture files (or folders) layered on the default world, as `dcb serve --fixtures`. */
  fixtures?: string | string[]
  /** Freeze the sandbox clock at this time (ISO-8601), as `dcb serve --clock`; without it the clock runs from real time. */
  clock?: string
  /** The address requests count as coming from (default `127.0.0.1`): merchant allowlists and the control API see it. */
  clientIp?: string
  /** As `dcb serve --failure-payload`. */
  failurePayload?: FailurePayloadMode
  /** How many merchant calls the request log keeps (default 1000). */
  requestLogSize?: number
  /** The old name of `requestLogSize`. */
  journalSize?: number
  /** The most sessions beside the default one (`session(name)`); past it a new one is 429 SESSION_LIMIT. */
  maxSessions?: number
  /** How many subscriptions each session keeps (default 100,000); past it a new one is refused (Verify: 500 ERROR), none is dropped: `reset()` makes room. */
  maxSubscriptions?: number
  /** The merchant API key of `init`, `verify` and `status` (default: the demo key). */
  apiKey?: string
  /**
   * Where `fetch` is addressed, as `sandboxHandlers` takes it (`https://api.carrier.test/v1`): a request
   * under it is answered with the path prefix removed, one outside it rejects with `BAD_REQUEST`; links
   * the sandbox makes and `init`, `verify`, `status` go under it. Without it `fetch` answers any origin at its root.
   */
  baseUrl?: string
  /**
   * Where the world's warnings go (loads, but likely a mistake: a service left with no integration, or
   * one a layer took countries from), one call each per sandbox. Default: `console.warn`, each text
   * once per process (a fresh sandbox per test would say it again and again).
   */
  onWarning?: (text: string) => void
}

/** The control operations (the control API's calls, typed), the merchant calls and `fetch`, bound to one session (or the default one). */
export interface SandboxSession extends ControlOperations, MerchantOperations {
  /** The session's name (`default` for the default session). */
  readonly name: string
  /** The whole HTTP surface (merchant API, `/_sandbox`, consent pages, console), as `dcb serve` answers it. */
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>
}

export interface Sandbox extends SandboxSession {
  /** The same operations bound to the session `name` (header `X-DCB-Session`). */
  session(name: string): SandboxSession
  /** Ends the sandbox: later calls throw `SandboxError` `SANDBOX_CLOSED`. */
  close(): Promise<void>
}

/** The default world, read and validated once per process: a fresh sandbox costs no file read. */
let defaultWorld: LoadedWorld | undefined

/**
 * A world object layered and checked as a fixture file is: alone (it replaces the default world), or,
 * with `"extends": "default"`, on the default world (its records merged by key, its rules consulted
 * first). Throws FixtureError naming every problem; its warnings are a file's.
 */
function layerWorldObject(world: World | WorldDocument): LoadedWorld {
  const layers: LayerInput[] = [{ source: 'world', data: world }]
  if (world.extends === 'default') layers.unshift({ source: DEFAULT_WORLD_FILE, data: (defaultWorld ??= loadWorld([])).world })
  return { ...layerChecked(layers), files: [] }
}

/** The warnings `console.warn` said already: a suite makes a sandbox per test, each of the same world. */
const warned = new Set<string>()

/** The default of `onWarning`. */
function warnOnce(text: string): void {
  if (warned.has(text)) return
  warned.add(text)
  console.warn(`dcb-sandbox: warning: ${text}`)
}

/** `world` and `fixtures` both given: one of them would be left out without a word. */
export const WORLD_AND_FIXTURES =
  'give world or fixtures, not both: fixture files are layered on the default world, a world object replaces it (or, with "extends": "default", is layered on it)'

/**
 * The world of `createSandbox` and `startSandbox` alike, and where its parts came from: a world
 * object goes through the same layering and checks as a file (no files for it), fixture files are
 * layered on the default world.
 */
export function worldOf(opts: Pick<SandboxOptions, 'world' | 'fixtures'>): LoadedWorld {
  const fixtures = typeof opts.fixtures === 'string' ? [opts.fixtures] : (opts.fixtures ?? [])
  if (opts.world && fixtures.length) throw new SandboxError('BAD_REQUEST', WORLD_AND_FIXTURES)
  if (opts.world) return layerWorldObject(opts.world)
  if (fixtures.length) return loadWorld(fixtures)
  return (defaultWorld ??= loadWorld([]))
}

export async function createSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  checkSandboxOptions(opts as Record<string, unknown>)
  let clockStart: { at: number; frozen: boolean } | undefined
  if (opts.clock !== undefined) {
    const problem = timeProblem(opts.clock)
    if (problem) throw new SandboxError('BAD_TIME', `clock ${problem}`)
    const at = parseTimestamp(opts.clock)
    clockStart = { at, frozen: true }
  }
  const clientIp = normalizeIp(opts.clientIp ?? '127.0.0.1')
  if (!clientIp) throw new SandboxError('BAD_REQUEST', `clientIp "${opts.clientIp}" is not an IPv4 or IPv6 address`)
  // Checked by checkSandboxOptions: a string here is never reached.
  const base = opts.baseUrl === undefined ? undefined : (readBaseUrl(opts.baseUrl) as BaseUrl)
  const { world, sources, warnings } = worldOf(opts)
  for (const text of warnings) (opts.onWarning ?? warnOnce)(text)
  const host = createHost(memorySessions(), {
    // Between two batches of a long clock move, the test's other work (timers, I/O) gets a turn.
    engine: { world, sources, clockStart, maxSubscriptions: opts.maxSubscriptions, yieldToHost: yieldToEventLoop, workClock: () => performance.now() },
    requestLogSize: opts.requestLogSize ?? opts.journalSize,
    maxSessions: opts.maxSessions,
    version: version(),
    storeInfo: () => ({ kind: 'memory' }),
  })
  const app = createSandboxApp({
    host,
    version: version(),
    failurePayload: opts.failurePayload,
    baseUrl: () => 'http://localhost',
    onError: (err) => console.error('dcb-sandbox: unexpected error:', err),
  })
  let closed = false

  /** One request through the server's listener; `url` is as the client addressed it. */
  const send = (url: URL, request: RawRequest, r: Route, from = clientIp, signal?: AbortSignal | null): Promise<RawResponse> => {
    if (closed) return Promise.reject(new SandboxError('SANDBOX_CLOSED', 'this sandbox was closed'))
    let path = url.pathname
    if (r.prefix) path = path === r.prefix ? '/' : path.slice(r.prefix.length)
    const headers = request.headers
    headers.host ??= url.host
    if (r.session !== undefined) headers['x-dcb-session'] ??= r.session
    // As a fetch client over a socket would send it.
    if (request.body && headers['content-length'] === undefined)
      headers['content-length'] = String(typeof request.body === 'string' ? Buffer.byteLength(request.body) : request.body.byteLength)
    return runListener(app.listener, request, { clientIp: from, url: path + url.search, publicBase: r.publicBase }, signal)
  }
  // The request's signal, as global fetch honours it: msw's request carries the caller's.
  const route = async (request: Request, r: Route): Promise<Response> => {
    request.signal.throwIfAborted()
    const raw = await rawRequest(request)
    return answerOf(await send(new URL(request.url), raw, r, clientIp, request.signal), request.signal)
  }

  const bind = (session: string | undefined): SandboxSession => {
    /**
     * A fetch of the sandbox mounted at `mounted` (a base URL, read once), or at the root of whatever
     * origin a request names. With `only`, a request outside the mount is refused: the sandbox's own
     * `baseUrl`, where a request elsewhere is the caller's mistake (msw would leave it to other handlers).
     */
    const fetchUnder =
      (mounted?: PageMount, only?: BaseUrl) =>
      async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
        const mount = (url: URL): Route => {
          if (only && !isUnder(url, only)) throw outside(url, only)
          return mounted === undefined ? { prefix: '', publicBase: url.origin, session } : { ...mounted, session }
        }
        // The common call, fetch(url, { method, headers, body: string }), skips building a Request.
        const body = init?.body
        if (!(input instanceof Request) && (body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array)) {
          const url = new URL(input)
          const method = (init?.method ?? 'GET').toUpperCase()
          const raw = { method, headers: headerRecord(init?.headers), body: body ?? null }
          return answerOf(await send(url, raw, mount(url), clientIp, init?.signal), init?.signal)
        }
        const request = input instanceof Request && init === undefined ? input : new Request(input, init)
        return route(request, mount(new URL(request.url)))
      }
    const fetchIn = base ? fetchUnder(base, base) : fetchUnder()
    // A redirect_url names the base URL its Init was addressed to (an msw base URL with a path such as
    // https://gw.test/dcb/v1): decided there, the 303 points under that base, as the browser would see it.
    const merchant = merchantOperations(fetchIn, base?.publicBase ?? 'http://localhost', {
      apiKey: opts.apiKey ?? DEMO_API_KEY,
      headers: {},
      underPage: (page) => fetchUnder(page),
    })
    /** One control call through the same pipeline as `fetch`; a refusal throws the control API's error as a SandboxError. */
    const call = async (r: ControlRequest): Promise<unknown> => {
      const headers: Record<string, string> = {}
      if (r.body !== undefined) headers['content-type'] = 'application/json'
      const raw = await send(
        new URL(`http://localhost/_sandbox${r.path}`),
        { method: r.method, headers, body: r.body === undefined ? null : JSON.stringify(r.body) },
        { prefix: '', publicBase: 'http://localhost', session },
        // The library's own control calls come from the test itself, whatever `clientIp` requests use.
        '127.0.0.1',
        r.signal,
      )
      const b = raw.body
      const text = typeof b === 'string' ? b : b instanceof Uint8Array ? Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8') : ''
      return controlAnswer(`/_sandbox${r.path}`, raw.status, text, IN_PROCESS_WORDS)
    }
    return {
      name: session ?? 'default',
      fetch: fetchIn,
      ...deriveOperations(call),
      ...merchant,
    }
  }

  const sandbox: Sandbox & RoutedSandbox = {
    ...bind(undefined),
    session: (name) => {
      if (!isSessionName(name)) throw new SandboxError('BAD_REQUEST', `"${name}" is not a session name: ${SESSION_NAME_RULE}`)
      // In memory there is no session kept from an older version to reach.
      if (isDotName(name)) throw new SandboxError('BAD_REQUEST', dotNameRefusal(name))
      return bind(name)
    },
    close: async () => {
      closed = true
      await host.close()
    },
    [ROUTE]: route,
  }
  return sandbox
}

/** A request `fetch` was given outside the sandbox's `baseUrl`: said by both URLs, before anything is sent. */
function outside(url: URL, base: BaseUrl): SandboxError {
  return new SandboxError(
    'BAD_REQUEST',
    `sandbox.fetch: ${url.origin}${url.pathname} is not under the sandbox's baseUrl ${base.publicBase} (createSandbox({ baseUrl })): address it as ${base.publicBase}/…`,
  )
}

/**
 * The Response of what the listener answered. A body in memory of a call with a signal rejects once the
 * signal aborts, as fetch's (a streamed one is errored by `runListener`).
 */
function answerOf(raw: RawResponse, signal: AbortSignal | null | undefined): Response {
  const response = toResponse(raw)
  return signal && raw.body !== null && !(raw.body instanceof ReadableStream) ? abortableAnswer(response, signal) : response
}

/** Request headers as the Node pipeline reads them: lower-case names, repeated ones joined. */
function headerRecord(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (!init) return out
  const add = (name: string, value: string) => {
    const k = name.toLowerCase()
    out[k] = out[k] === undefined ? String(value) : `${out[k]}, ${value}`
  }
  if (init instanceof Headers) init.forEach((v, k) => add(k, v))
  else if (Array.isArray(init)) for (const [k, v] of init) add(k!, v!)
  else for (const k in init) add(k, (init as Record<string, string>)[k]!)
  return out
}
