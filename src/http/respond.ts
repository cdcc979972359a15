import type { ServerResponse } from 'node:http'
import { envelope, type FailurePayloadMode, type Outcome } from '../core/outcomes.js'

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  })
  res.end(text)
}

export function sendEnvelope(res: ServerResponse, outcome: Outcome, mode: FailurePayloadMode, headers?: Record<string, string>): Record<string, unknown> {
  const { http, body } = envelope(outcome, mode)
  sendJson(res, http, body, headers)
  return body
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html), 'cache-control': 'no-store' })
  res.end(html)
}

export function redirect(res: ServerResponse, location: string, status = 303): void {
  res.writeHead(status, { location, 'content-length': 0, 'cache-control': 'no-store' })
  res.end()
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}
