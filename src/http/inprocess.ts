/**
 * The server's own Node request listener, run without a socket: a fetch `Request` becomes an
 * in-memory request stream, the listener writes into an in-memory response, and what it wrote
 * becomes a fetch `Response`. So `sandbox.fetch` and the msw handlers answer through exactly the
 * pipeline `dcb serve` runs (same checks, same bytes), minus the rules that guard a socket.
 */
import { EventEmitter } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { bufferedResponse, wellFormed } from './buffered-response.js'
import { FAULT, type Answer } from './answer.js'
import type { FaultKind } from '../core/wire.js'
import { networkError } from './network-error.js'

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void

export interface InProcessCall {
  /** The address the request counts as coming from. */
  clientIp: string
  /** The path the listener sees (the request URL's path without a handler's prefix, plus its query). */
  url: string
  /** Where the sandbox is reached from (origin plus any path prefix), for links it makes (consent pages). */
  publicBase: string
}

/** Marks a request that came in without a socket (guards that protect a socket skip it). */
export const IN_PROCESS = Symbol.for('dcb.inProcess')
const IN_PROCESS_BODY = Symbol('dcb.inProcessBody')

/** The socket-facing parts of an IncomingMessage that the pipeline reads. */
class InProcessSocket extends EventEmitter {
  readonly encrypted = false
  readonly remotePort = 0
  constructor(readonly remoteAddress: string) {
    super()
  }
  destroy(): void {
    this.emit('close')
  }
  setTimeout(): this {
    return this
  }
}

/**
 * The parts of an IncomingMessage the pipeline reads. Not a stream: its body is already in memory,
 * and `readBodyThen` (the one body reader of the pipeline) takes it from here directly instead of
 * through stream events (which cost more than the sandbox's own work for a small JSON body).
 */
class InProcessRequest extends EventEmitter {
  readonly httpVersion = '1.1'
  readonly httpVersionMajor = 1
  readonly httpVersionMinor = 1
  readonly [IN_PROCESS]: InProcessCall
  readonly [IN_PROCESS_BODY]: string | Uint8Array | null
  complete = true
  #socket: InProcessSocket | null = null

  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: Record<string, string>,
    body: string | Uint8Array | null,
    call: InProcessCall,
  ) {
    super()
    this[IN_PROCESS] = call
    this[IN_PROCESS_BODY] = body
  }

  /** Made on first use: most calls never look at it. */
  get socket(): InProcessSocket {
    return (this.#socket ??= new InProcessSocket(this[IN_PROCESS].clientIp))
  }
  get connection(): InProcessSocket {
    return this.socket
  }
  /** Emits `close` on the socket only if someone made it (and so may listen). */
  socketClosed(): void {
    this.#socket?.emit('close')
  }
  // Stream calls a reader might make on a request whose body it does not read.
  pause(): this {
    return this
  }
  resume(): this {
    return this
  }
}

type HeaderValue = string | number | readonly string[]

/** Collects what the listener writes; settles a fetch Response when it ends (or starts streaming). */
class InProcessResponse extends EventEmitter {
  statusCode = 200
  statusMessage = ''
  headersSent = false
  writableEnded = false
  finished = false
  destroyed = false
  closed = false
  sendDate = false
  private readonly head = new Map<string, HeaderValue>()
  private chunks: Uint8Array[] = []
  private stream: ReadableStreamDefaultController<Uint8Array> | null = null
  private settled = false

  constructor(
    private readonly req: InProcessRequest,
    private readonly settle: (r: RawResponse) => void,
    private readonly refuse: (e: Error) => void = () => {},
  ) {
    super()
  }

  /**
   * The in-process writer of a fault: what Node's fetch gives for it over a socket. `truncate`
   * answers the status and headers, and its body errors after half the bytes; the others reject.
   */
  [FAULT](kind: FaultKind, answer: Answer): void {
    if (this.settled || this.destroyed) return
    this.headersSent = true
    if (kind === 'truncate') {
      const bytes = Buffer.from(answer.body)
      const half = bytes.subarray(0, Math.floor(bytes.length / 2))
      this.statusCode = answer.status
      for (const [k, v] of Object.entries(answer.headers)) this.setHeader(k, v)
      this.answer(
        new ReadableStream<Uint8Array>({
          start: (c) => {
            if (half.length) c.enqueue(half)
            c.error(networkError(kind))
          },
        }),
      )
    } else {
      this.settled = true
      this.refuse(networkError(kind))
    }
    this.writableEnded = this.finished = true
    this.markClosed()
  }

  setHeader(name: string, value: HeaderValue): this {
    this.head.set(name.toLowerCase(), value)
    return this
  }
  getHeader(name: string): HeaderValue | undefined {
    return this.head.get(name.toLowerCase())
  }
  getHeaders(): Record<string, HeaderValue> {
    return Object.fromEntries(this.head)
  }
  getHeaderNames(): string[] {
    return [...this.head.keys()]
  }
  hasHeader(name: string): boolean {
    return this.head.has(name.toLowerCase())
  }
  removeHeader(name: string): void {
    this.head.delete(name.toLowerCase())
  }
  flushHeaders(): void {
    this.writeHead(this.statusCode)
  }

  writeHead(status: number, reason?: string | Record<string, HeaderValue> | HeaderValue[], headers?: Record<string, HeaderValue> | HeaderValue[]): this {
    if (this.headersSent) return this
    this.statusCode = status
    if (typeof reason === 'string') this.statusMessage = reason
    else headers = reason
    if (Array.isArray(headers)) for (let i = 0; i + 1 < headers.length; i += 2) this.setHeader(String(headers[i]), headers[i + 1] as HeaderValue)
    else if (headers) for (const k in headers) this.setHeader(k, (headers as Record<string, HeaderValue>)[k]!)
    this.headersSent = true
    return this
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | (() => void), cb?: () => void): boolean {
    if (this.writableEnded || this.destroyed) return false
    if (!this.headersSent) this.writeHead(this.statusCode)
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk
    if (this.stream) this.stream.enqueue(bytes)
    else {
      this.chunks.push(bytes)
      // Still open after this tick: a stream (the console's events); answer with what is there and go on.
      if (this.chunks.length === 1) setImmediate(() => this.startStreaming())
    }
    const done = typeof encoding === 'function' ? encoding : cb
    if (done) queueMicrotask(done)
    return true
  }

  end(chunk?: string | Uint8Array | (() => void), encoding?: BufferEncoding | (() => void), cb?: () => void): this {
    if (this.writableEnded) return this
    if (typeof chunk === 'function') cb = chunk
    if (!this.headersSent) this.writeHead(this.statusCode)
    this.writableEnded = this.finished = true
    const last = typeof chunk === 'function' || chunk === undefined || chunk === null ? null : chunk
    if (this.stream) {
      if (last !== null) this.stream.enqueue(typeof last === 'string' ? Buffer.from(last, typeof encoding === 'string' ? encoding : 'utf8') : last)
      this.stream.close()
    } else if (this.chunks.length === 0) {
      // The usual answer: one piece, given to end(). A string stays a string until it is read.
      this.answer(
        last === null
          ? null
          : typeof last === 'string' && typeof encoding !== 'string'
            ? last
            : typeof last === 'string'
              ? Buffer.from(last, encoding as BufferEncoding)
              : last,
      )
    } else {
      if (last !== null) this.chunks.push(typeof last === 'string' ? Buffer.from(last, typeof encoding === 'string' ? encoding : 'utf8') : last)
      this.answer(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks))
    }
    const done = typeof encoding === 'function' ? encoding : cb
    if (done) queueMicrotask(done)
    queueMicrotask(() => {
      this.emit('finish')
      this.markClosed()
    })
    return this
  }

  destroy(reason?: unknown): this {
    if (this.destroyed) return this
    this.destroyed = true
    if (this.stream) this.stream.error(reason ?? new Error('the sandbox cut the response'))
    else if (!this.settled) this.answer(this.chunks.length ? Buffer.concat(this.chunks) : null)
    this.markClosed()
    return this
  }

  // Node methods some middleware calls; nothing to do without a socket.
  setTimeout(): this {
    return this
  }
  cork(): void {}
  uncork(): void {}

  private markClosed(): void {
    if (this.closed) return
    this.closed = true
    this.emit('close')
    this.req.socketClosed()
  }

  private startStreaming(): void {
    if (this.settled || this.writableEnded || this.destroyed) return
    const pending = this.chunks
    this.chunks = []
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.stream = controller
        for (const c of pending) controller.enqueue(c)
      },
      // The reader went away: as a client closing its connection.
      cancel: () => {
        this.destroyed = true
        this.markClosed()
      },
    })
    this.answer(body)
  }

  private answer(body: Body): void {
    if (this.settled) return
    this.settled = true
    const headers: [string, string][] = []
    for (const [name, value] of this.head) {
      if (Array.isArray(value)) for (const v of value) headers.push([name, String(v)])
      else headers.push([name, String(value)])
    }
    const noBody = this.req.method === 'HEAD' || this.statusCode === 204 || this.statusCode === 304
    this.settle({ status: this.statusCode, statusText: this.statusMessage, headers, body: noBody ? null : body })
  }
}

/** A body in memory (a string is sent as its UTF-8 bytes), or a stream for an answer that stays open. */
type Body = string | Uint8Array | ReadableStream<Uint8Array> | null

/** What the listener answered. `body` is the text or bytes, or a stream when the answer stayed open (events). */
export interface RawResponse {
  status: number
  statusText: string
  headers: [string, string][]
  body: Body
}

/** A request as the listener should see it. */
export interface RawRequest {
  method: string
  /** Lower-case names. */
  headers: Record<string, string>
  /** A string body is sent as its UTF-8 bytes. */
  body: string | Uint8Array | null
}

/**
 * Runs `listener` for one request, in memory. A `signal` that aborts before the answer rejects with
 * its reason, as fetch does, and the listener sees a client that went away (the response closes, as
 * when a socket closes): a held answer is logged `client_closed`. One that aborts later errors a
 * streamed body with its reason.
 */
export function runListener(listener: NodeListener, request: RawRequest, call: InProcessCall, signal?: AbortSignal | null): Promise<RawResponse> {
  if (signal?.aborted) return Promise.reject(signal.reason)
  return new Promise<RawResponse>((resolve, reject) => {
    const req = new InProcessRequest(request.method, call.url, request.headers, request.body, call)
    const res = new InProcessResponse(req, resolve, reject)
    if (signal) {
      const onAbort = () => {
        reject(signal.reason)
        res.destroy(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      res.once('close', () => signal.removeEventListener('abort', onAbort))
    }
    listener(req as unknown as IncomingMessage, res as unknown as ServerResponse)
  })
}

/**
 * The body of an in-process request as a socket would carry it (UTF-8 text), or undefined for a
 * request that came over a socket (whose body is read from the stream).
 */
export function inProcessBody(req: IncomingMessage): { text: string; bytes: number } | undefined {
  if (!(req instanceof InProcessRequest)) return undefined
  const body = req[IN_PROCESS_BODY]
  if (body === null) return { text: '', bytes: 0 }
  if (typeof body === 'string') {
    const text = wellFormed(body)
    return { text, bytes: Buffer.byteLength(text) }
  }
  return { text: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'), bytes: body.byteLength }
}

/** A fetch Request's parts (its body read). */
export async function rawRequest(request: Request): Promise<RawRequest> {
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => {
    headers[name] = value
  })
  const body = request.body ? new Uint8Array(await request.arrayBuffer()) : null
  return { method: request.method, headers, body }
}

/** A fetch Response of what the listener answered. */
export function toResponse(raw: RawResponse): Response {
  if (raw.body instanceof ReadableStream) return new Response(raw.body, { status: raw.status, statusText: raw.statusText, headers: raw.headers })
  return bufferedResponse(raw.status, raw.statusText, raw.headers, raw.body)
}

/** What an in-process request carries, or undefined for one that came over a socket. */
export function inProcessCall(req: IncomingMessage): InProcessCall | undefined {
  return (req as unknown as { [IN_PROCESS]?: InProcessCall })[IN_PROCESS]
}
