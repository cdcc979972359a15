/**
 * The requests Node would answer itself with a bare status and no body: an HTTP/1.1 request without
 * `Host` or with two (400) and an `Expect` other than `100-continue` (417); and a CONNECT, whose socket it would
 * close unanswered (405). They get the envelope and a reason, as every other malformed request does
 * (`answerClientError` in `src/server.ts`).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { envelope, fail, type FailurePayloadMode, type OutcomeCode } from '../core/outcomes.js'
import { endAndLinger } from './linger.js'
import { headerReason, quote } from './reason.js'

export interface ProtocolOptions {
  failurePayload?: FailurePayloadMode
  reasons: boolean
}

/** Answers what Node would have refused without a body, instead of Node doing so. */
export function answerProtocolErrors(server: Server, opts: ProtocolOptions): void {
  // Node's own check answers a bare 400; `missingHost` answers it in the request handler instead.
  ;(server as Server & { requireHostHeader: boolean }).requireHostHeader = false
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    sendProtocolError(res, 417, `Expect ${quote(String(req.headers.expect))} is not supported: only Expect: 100-continue is`, opts),
  )
  // Without a listener Node closes a CONNECT's socket without a word.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const reason = `CONNECT ${quote(req.url ?? '')} is not allowed: the sandbox is not a proxy`
    // Nothing parses this socket any more: what the client sends after the CONNECT is read and dropped here.
    endAndLinger(socket, rawAnswer(405, 'Method Not Allowed', 'METHOD_NOT_ALLOWED', opts.reasons ? reason : undefined, opts.failurePayload), { drop: true })
  })
}

/**
 * A whole HTTP answer with the envelope (its `status_code` the status) and the reason, for a socket
 * Node does not answer on: a request it cannot parse, a refused connection, a CONNECT. The connection
 * closes after it (`endAndLinger`).
 */
export function rawAnswer(status: number, statusText: string, code: OutcomeCode, reason: string | undefined, mode: FailurePayloadMode = 'auto'): string {
  const text = JSON.stringify({ ...envelope(fail(code), mode).body, status_code: status })
  return (
    `HTTP/1.1 ${status} ${statusText}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` +
    `cache-control: no-store\r\n${reason === undefined ? '' : `x-dcb-reason: ${headerReason(reason)}\r\n`}connection: close\r\n\r\n${text}`
  )
}

/**
 * Whether a request is HTTP/1.1 without Host, or names Host twice (RFC 9112: 400 for both; Node keeps
 * the first Host silently, and a proxy in front may have read the other): answered here, then true.
 */
export function missingHost(req: IncomingMessage, res: ServerResponse, opts: ProtocolOptions): boolean {
  if (req.headers.host === undefined) {
    if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return false
    sendProtocolError(res, 400, 'an HTTP/1.1 request needs a Host header', opts)
    return true
  }
  const raw = req.rawHeaders
  let hosts = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts++
  if (hosts < 2) return false
  sendProtocolError(res, 400, `the request names Host ${hosts} times; send it once`, opts)
  return true
}

function sendProtocolError(res: ServerResponse, status: number, reason: string, opts: ProtocolOptions): void {
  const text = JSON.stringify({ ...envelope(fail('BAD_REQUEST'), opts.failurePayload ?? 'auto').body, status_code: status })
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...(opts.reasons ? { 'x-dcb-reason': headerReason(reason) } : {}),
    // The request's body, if any, is not read.
    connection: 'close',
  })
  res.end(text)
}
