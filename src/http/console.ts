/**
 * The console at `GET /`: a page of plain HTML, CSS and JavaScript shipped in the package
 * (`src/console/`, copied to `dist/console/` by the build; read once, kept in memory) that uses the
 * control API from the same origin, and the calls only it needs: the live stream
 * (`GET /_sandbox/events`) and the admin-token sign-in (`POST /_console/login`, which sets an
 * `HttpOnly`, `SameSite=Strict` cookie).
 * Access is the control API's: loopback, `Authorization: Bearer <admin token>`, or that cookie.
 */
import { existsSync, readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { fileURLToPath } from 'node:url'
import { embeddedFile } from '../assets.js'
import { CONTROL_CALLS, SESSION_CALLS } from '../contract/calls.js'
import { DEFAULT_BASE_URL } from '../contract/defaults.js'
import type { AdminAttempts } from './admin-attempts.js'
import { isPlainObject, readJsonBody } from './body.js'
import { CONSOLE_COOKIE, cookieValue, sameText } from './console-cookie.js'
import { checkControlAccess, queryObject } from './control.js'
import type { AccessWords } from './guard.js'
import { clientIp, clientUsedHttps, type ProxyTrust } from './ip.js'
import type { LiveHub } from '../runtime/live.js'
import { SandboxError } from '../core/errors.js'
import { sendControlError, sendJson } from './respond.js'

/** The console's own headers: nothing off the server, no framing. */
export const CONSOLE_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
}

const ASSETS: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/_console/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/_console/lib.js': { file: 'lib.js', type: 'text/javascript; charset=utf-8' },
  '/_console/messages.js': { file: 'messages.js', type: 'text/javascript; charset=utf-8' },
  '/_console/subscriptions.js': { file: 'subscriptions.js', type: 'text/javascript; charset=utf-8' },
  '/_console/clock.js': { file: 'clock.js', type: 'text/javascript; charset=utf-8' },
  '/_console/requests.js': { file: 'requests.js', type: 'text/javascript; charset=utf-8' },
  '/_console/scenarios.js': { file: 'scenarios.js', type: 'text/javascript; charset=utf-8' },
  '/_console/coverage.js': { file: 'coverage.js', type: 'text/javascript; charset=utf-8' },
  '/_console/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/_console/icon.svg': { file: 'icon.svg', type: 'image/svg+xml' },
}
export const CONSOLE_FILES = Object.values(ASSETS).map((a) => a.file)

/** Where the files are: next to the bundle (dist/console) or, run from source, src/console. */
function assetDir(): string {
  for (const rel of ['./console/', '../console/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url))
    if (existsSync(`${dir}index.html`)) return dir
  }
  throw new Error('dcb: the console files are missing from the package (console/index.html)')
}

const cache = new Map<string, Buffer>()
function asset(file: string): Buffer {
  let b = cache.get(file)
  if (!b) cache.set(file, (b = filled(file, embeddedFile(`console/${file}`) ?? readFileSync(assetDir() + file))))
  return b
}

/** The console's own calls beside the control API's: the admin-token sign-in and the live stream. */
const LOGIN_PATH = '/_console/login'
const EVENTS_PATH = '/_sandbox/events'

/**
 * The calls the console's script makes, by name: the control declaration's method and path (under
 * /_sandbox, with `:name` parameters) and the console's own two. The page carries them, so the
 * script writes no path of its own. `<` is escaped: the JSON sits in a script element.
 */
export const PAGE_CALLS = JSON.stringify({
  ...Object.fromEntries(Object.entries({ ...CONTROL_CALLS, ...SESSION_CALLS }).map(([name, c]) => [name, { method: c.method, path: `/_sandbox${c.path}` }])),
  events: { method: 'GET', path: EVENTS_PATH },
  login: { method: 'POST', path: LOGIN_PATH },
}).replaceAll('<', '\\u003c')

/** The page with the CLI's default base URL and the calls in it: the port and the paths are written once, in the contract. */
function filled(file: string, bytes: Buffer): Buffer {
  if (file !== 'index.html') return bytes
  return Buffer.from(
    bytes
      .toString('utf8')
      .replace('content="DEFAULT_BASE_URL"', `content="${DEFAULT_BASE_URL}"`)
      .replace('PAGE_CALLS', () => PAGE_CALLS),
  )
}

export interface ConsoleContext {
  /** The live stream of the session a request names (`name`: its ?session=), or undefined when refused (written). */
  liveOf: (req: IncomingMessage, res: ServerResponse, name: string | null) => Promise<LiveHub | undefined>
  trustProxy: ProxyTrust | undefined
  adminToken?: string
  hostLocal?: (req: IncomingMessage) => boolean
  /** Wrong admin tokens per address, shared with the control API. */
  adminAttempts?: AdminAttempts
}

/** The console's refusals: its sign-in page takes the token. */
const CONSOLE_WORDS: AccessWords = { what: 'the console', token: 'the admin token', how: 'sign in at / (or send Authorization: Bearer <admin token>)' }

/** What the sign-in takes. */
const LOGIN_BODY = '{"token": "<admin token>"}'

/** The console's paths: its files, the sign-in and the live stream. */
export const CONSOLE_PATHS = [...Object.keys(ASSETS), LOGIN_PATH, EVENTS_PATH]

export function createConsoleHandler(ctx: ConsoleContext) {
  /** Why the caller may not see the console, in its situation (guard.ts), or undefined when it may. */
  const refusal = (req: IncomingMessage): string | undefined => {
    try {
      checkControlAccess(req, ctx, CONSOLE_WORDS)
      return undefined
    } catch (e) {
      if (e instanceof SandboxError) return e.message
      throw e
    }
  }
  const refuse = (res: ServerResponse, status: number, message: string) =>
    sendJson(res, status, { error: status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'FORBIDDEN', message }, CONSOLE_HEADERS)

  const sendAsset = (req: IncomingMessage, res: ServerResponse, path: string, status = 200) => {
    const a = ASSETS[path]!
    const body = asset(a.file)
    res.writeHead(status, { ...CONSOLE_HEADERS, 'content-type': a.type, 'content-length': body.length })
    res.end(req.method === 'HEAD' ? undefined : body)
  }

  return async function handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    // The cross-site rules of section 4 (Host, Origin, JSON bodies) ran before this handler (guard.ts, from app.ts).
    const method = req.method ?? 'GET'
    if (path === LOGIN_PATH) {
      if (method !== 'POST') return sendJson(res, 405, { error: 'METHOD_NOT_ALLOWED', message: 'use POST' }, { ...CONSOLE_HEADERS, allow: 'POST' })
      // Read (or refused) before anything else is said, as the control API reads a body.
      const body = await readJsonBody(req, LOGIN_BODY).then(
        (data) => ({ data }),
        (error: unknown) => ({ error }),
      )
      if (!ctx.adminToken) return refuse(res, 403, 'this server has no admin token: it was started without --admin-token')
      // A body that is not {"token": "..."} says what is wrong with it, not that the token is wrong.
      if ('error' in body) {
        if (sendControlError(res, body.error, CONSOLE_HEADERS)) return
        throw body.error
      }
      if (!isPlainObject(body.data) || typeof body.data.token !== 'string')
        return sendJson(res, 400, { error: 'BAD_REQUEST', message: `token: expected the admin token as a string, ${LOGIN_BODY}` }, CONSOLE_HEADERS)
      const token = body.data.token
      const client = clientIp(req, ctx.trustProxy)
      try {
        ctx.adminAttempts?.check(client)
      } catch (e) {
        return refuse(res, 403, (e as Error).message)
      }
      const right = sameText(token, ctx.adminToken)
      ctx.adminAttempts?.given(client, right)
      if (!right) return refuse(res, 403, 'that is not the admin token')
      // Never sent in clear by a browser that came over https.
      const secure = clientUsedHttps(req, ctx.trustProxy) ? '; Secure' : ''
      return sendJson(
        res,
        200,
        { ok: true },
        {
          ...CONSOLE_HEADERS,
          'set-cookie': `${CONSOLE_COOKIE}=${cookieValue(ctx.adminToken)}; Path=/; HttpOnly; SameSite=Strict${secure}`,
        },
      )
    }
    if (method !== 'GET' && method !== 'HEAD')
      return sendJson(res, 405, { error: 'METHOD_NOT_ALLOWED', message: `${method} is not allowed on ${path}; use GET` }, { ...CONSOLE_HEADERS, allow: 'GET' })
    // The files are the same for everyone; what they show comes from calls that check access.
    if (path in ASSETS) return sendAsset(req, res, path)
    const refused = refusal(req)
    if (refused !== undefined) return refuse(res, 403, refused)
    let name: string | null
    try {
      name = streamSession(req, query)
    } catch (e) {
      return void sendControlError(res, e)
    }
    const live = await ctx.liveOf(req, res, name)
    live?.serve(req, res)
  }
}

/**
 * The session a live stream names with `?session=` (null: none, the header or the default one). A
 * typo, two of them, or a query and a header naming different sessions are refused (BAD_REQUEST):
 * the stream would follow another session without a word.
 */
function streamSession(req: IncomingMessage, query: URLSearchParams): string | null {
  const { session } = queryObject(query, ['session'], 'GET', EVENTS_PATH)
  const header = req.headers['x-dcb-session']
  if (session !== undefined && header !== undefined && header !== session)
    throw new SandboxError('BAD_REQUEST', `session: ?session=${session} and X-DCB-Session: ${String(header)} name two sessions; give one`)
  return session ?? null
}
