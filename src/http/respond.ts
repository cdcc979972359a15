import type { ServerResponse } from 'node:http'
import { ENCODED_JSON, hasEncodedJson } from '../core/encoded.js'
import { envelope, type FailurePayloadMode, type Outcome } from '../core/outcomes.js'
import { SandboxError } from '../core/errors.js'
import { StoreError } from '../store/types.js'

/**
 * The one JSON writer: a value that carries its own encoding (`ENCODED_JSON`, e.g. a clock move's
 * megabytes of events) is written as it is; anything else goes through JSON.stringify.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  sendText(res, status, hasEncodedJson(body) ? body[ENCODED_JSON]() : JSON.stringify(body), headers)
}

function sendText(res: ServerResponse, status: number, body: string | Uint8Array[], headers?: Record<string, string>): void {
  let length = 0
  if (typeof body === 'string') length = Buffer.byteLength(body)
  else for (const p of body) length += p.byteLength
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': length,
    'cache-control': 'no-store',
    ...headers,
  })
  if (typeof body === 'string') return void res.end(body)
  for (const p of body) res.write(p)
  res.end()
}

const SUCCESS_HEAD = '{"status":"SUCCESS","message":"","status_code":200,"payload":'

export function sendEnvelope(res: ServerResponse, outcome: Outcome, mode: FailurePayloadMode, headers?: Record<string, string>): Record<string, unknown> {
  const { http, body } = envelope(outcome, mode)
  if (outcome.code === 'SUCCESS' && outcome.payloadJson !== undefined) sendText(res, 200, `${SUCCESS_HEAD}${outcome.payloadJson}}`, headers)
  else sendJson(res, http, body, headers)
  return body
}

/** Headers of every HTML page the sandbox serves (consent pages, console): never inside another site's frame (clickjacking). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-frame-options': 'DENY',
  'content-security-policy': "frame-ancestors 'none'",
})

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
    ...PAGE_HEADERS,
  })
  res.end(html)
}

export function redirect(res: ServerResponse, location: string, status = 303, headers?: Record<string, string>): void {
  res.writeHead(status, { location, 'content-length': 0, 'cache-control': 'no-store', ...headers })
  res.end()
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** decodeURIComponent that answers the text as it is for a malformed escape (never throws). */
export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/**
 * What a refusal for a store error adds: nothing was changed, unless whether it was is not known (the
 * error says so) or no change was asked (a read).
 */
export const notChanged = (e: StoreError): string => (e.outcome === 'not made' ? '; nothing was changed' : '')

/**
 * Answers a refused control call with the error JSON of its code: a SandboxError as it is, a write that
 * could not be made durable as STORE_UNAVAILABLE (503), with `headers` besides (the console's own). Anything else
 * is not a refusal: answers false.
 */
export function sendControlError(res: ServerResponse, e: unknown, headers?: Record<string, string>): boolean {
  const refused = e instanceof StoreError ? new SandboxError('STORE_UNAVAILABLE', `${e.message}${notChanged(e)}`) : e
  if (!(refused instanceof SandboxError)) return false
  // A body too large is left unread: the connection closes after the answer rather than wait for the rest of it.
  sendJson(
    res,
    refused.status,
    { error: refused.code, message: refused.message },
    refused.code === 'PAYLOAD_TOO_LARGE' ? { ...headers, connection: 'close' } : headers,
  )
  return true
}
