/**
 * The console's sign-in cookie: set once the admin token is given (`POST /_console/login`), it opens
 * the console and the control API like `Authorization: Bearer <admin token>`, but only for requests
 * from the server's own pages (`SameSite=Strict`, and `Origin` / `Sec-Fetch-Site` checked).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const CONSOLE_COOKIE = 'dcb_console'

/** The cookie's value: a digest of the admin token (the token itself never sits in the browser). */
export function cookieValue(token: string): string {
  return createHash('sha256').update(`dcb-console\0${token}`).digest('hex')
}

/**
 * Whether two secrets are equal, in time that depends on neither: their digests (of one length) are
 * compared, so not even a length mismatch answers sooner (it would tell the token's length).
 */
export function sameText(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b))
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest()

/** Whether the request comes from a page of this server (or no page at all), not from another site. */
export function sameOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site']
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false
  const origin = req.headers.origin
  if (origin === undefined) return true
  const host = req.headers.host
  return !!host && (origin === `http://${host}` || origin === `https://${host}`)
}

/** The console's sign-in cookie, sent from this server's own pages. */
export function hasConsoleCookie(req: IncomingMessage, adminToken: string | undefined): boolean {
  if (!adminToken || !req.headers.cookie || !sameOrigin(req)) return false
  const want = cookieValue(adminToken)
  for (const part of req.headers.cookie.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === CONSOLE_COOKIE && sameText(part.slice(eq + 1).trim(), want)) return true
  }
  return false
}
