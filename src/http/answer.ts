/**
 * The one value a merchant call answers: status, headers, body, delay and fault, made once from the
 * engine's outcome (its envelope, or the wire a rule asked for). Each transport has one writer of it
 * (`writeAnswer`): the socket's here, the in-process one in inprocess.ts (`FAULT`); msw's answers
 * the in-process rejection with `Response.error()`.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http'
import { envelope, type FailurePayloadMode, type Outcome } from '../core/outcomes.js'
import type { FaultKind, Wire } from '../core/wire.js'

export interface Answer {
  status: number
  headers: Record<string, string>
  body: string
  /** What the request log keeps as the response: the envelope, or the text really sent. */
  logged: Record<string, unknown> | string
  /** The envelope's message (the request log's `message`, coverage's code). */
  message: string
  fault?: { kind: FaultKind; when: Wire['when']; hangMs?: number }
  /** Not the envelope: a gateway's page, an empty body or a rule's own text. */
  replaced: boolean
}

const SUCCESS_HEAD = '{"status":"SUCCESS","message":"","status_code":200,"payload":'

/** The answer of an outcome; `extra` the handler's own headers (Allow, Connection, X-DCB-Reason). */
export function answerOf(outcome: Outcome, mode: FailurePayloadMode, extra: Record<string, string> | undefined): Answer {
  const wire = outcome.wire
  const env = envelope(outcome, mode)
  let status = env.http
  let logged: Record<string, unknown> | string = env.body
  let body = outcome.code === 'SUCCESS' && outcome.payloadJson !== undefined ? `${SUCCESS_HEAD}${outcome.payloadJson}}` : JSON.stringify(env.body)
  let contentType = 'application/json; charset=utf-8'
  let replaced = false
  const headers: Record<string, string> = {}
  if (wire?.http) {
    status = wire.http
    const b = wire.body ?? 'envelope'
    if (b === 'envelope') {
      logged = { status: 'FAIL', message: 'ERROR', status_code: status, payload: null }
      body = JSON.stringify(logged)
    } else {
      replaced = true
      body = b === 'gateway' ? gatewayPage(status) : b === 'empty' ? '' : b.text
      if (b === 'gateway') contentType = 'text/html'
      else if (typeof b === 'object') contentType = b.content_type
      logged = body
    }
    if (wire.retryAfter !== undefined) headers['retry-after'] = String(wire.retryAfter)
  }
  // The usual answer (no rule's wire, no handler header) builds its headers as one literal: spreads cost per call.
  const out: Answer = {
    status,
    headers:
      !wire && !extra
        ? { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-store' }
        : {
            ...(body === '' && replaced ? {} : { 'content-type': contentType }),
            'content-length': String(Buffer.byteLength(body)),
            'cache-control': 'no-store',
            ...headers,
            ...extra,
          },
    body,
    logged,
    message: wire?.http ? 'ERROR' : (env.body.message as string),
    replaced,
  }
  if (wire?.fault) out.fault = { kind: wire.fault, when: wire.when, ...(wire.hangMs !== undefined ? { hangMs: wire.hangMs } : {}) }
  return out
}

/** A short HTML page as a load balancer sends it, naming the status. */
export function gatewayPage(status: number): string {
  const title = `${status} ${STATUS_CODES[status] ?? 'Error'}`
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>gateway</center>\r\n</body>\r\n</html>\r\n`
}

/** 64 bytes that are not HTTP (no status line a client could read). */
export const GARBAGE = Buffer.from('\u0000\u0001\u0002\u0003' + 'not HTTP: the sandbox sends garbage on purpose'.padEnd(60, '~'), 'latin1')

/** An in-process response's own writer of a fault (inprocess.ts): the socket writer hands it over. */
export const FAULT = Symbol.for('dcb.fault')
export interface FaultWriter {
  [FAULT](kind: FaultKind, answer: Answer): void
}

/**
 * The socket's writer: the answer, or its fault on the connection itself. `truncate` sends the
 * status line and headers as they are (the whole body's Content-Length) and half the body.
 */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  const f = answer.fault
  if (!f) {
    res.writeHead(answer.status, answer.headers)
    return void res.end(answer.body)
  }
  const kind = f.kind === 'hang' ? 'close' : f.kind
  const inProcess = res as unknown as Partial<FaultWriter>
  if (typeof inProcess[FAULT] === 'function') return inProcess[FAULT](kind, answer)
  const socket = res.socket
  if (!socket || socket.destroyed) return void res.destroy()
  if (kind === 'reset') return void socket.resetAndDestroy()
  if (kind === 'close') return void socket.end()
  if (kind === 'garbage') return void socket.end(GARBAGE)
  const bytes = Buffer.from(answer.body)
  let head = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n`
  for (const [k, v] of Object.entries(answer.headers)) head += `${k}: ${v}\r\n`
  socket.end(Buffer.concat([Buffer.from(`${head}connection: close\r\n\r\n`), bytes.subarray(0, Math.floor(bytes.length / 2))]))
}
