/**
 * The live stream: one server-sent-events stream (`GET /_sandbox/events`) that tells the console and
 * `dcb logs --follow` what happens: SMS sent and received, subscriptions changed, requests
 * logged, clock moves, resets. The hub listens to the engine and the request log only while a client
 * is connected (no client: no listener, no work on the merchant hot path), gathers what happened for
 * a moment and sends it in bounded batches: a year of renewals or a load test sends a summary, not
 * one event per change.
 *
 * Events (each `data:` is one JSON object):
 * - `hello` {clock, next_request_id}: on connecting.
 * - `sms` {message}: an SMS (as `GET /_sandbox/sms` lists it); `sms-many` {count}: more than a batch
 *   holds arrived (read `GET /_sandbox/messages` again).
 * - `subscriptions` {ids, more}: these subscriptions changed (`more`: others too, ids not listed).
 * - `requests` {requests, skipped}: request log entries newest first; `skipped` entries between them and
 *   the previous batch were not sent (read them with `GET /_sandbox/requests?since=`).
 * - `clock` {clock}: the clock moved. `reset` {}: the sandbox was reset.
 * - a comment line (`: keep-alive`) at least every 15 s.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Engine } from '../core/engine.js'
import type { Change, SmsRecord } from '../core/state.js'
import { smsView } from '../control/operations.js'
import type { RequestLog } from './request-log.js'

/** The most of each kind one batch carries. */
const BATCH_SMS = 50
const BATCH_SUBSCRIPTIONS = 100
const BATCH_REQUESTS = 20
/**
 * The most a client's stream holds unread (written, not taken by the client) before the next batch:
 * past it the client is cut (it reconnects and reloads). Every client holds the same frames, written
 * as one buffer (not a copy each), so a thousand clients that never read hold one copy of these bytes.
 */
export const MAX_UNREAD_BYTES = 2 ** 20

export interface LiveHubOptions {
  /** How long events gather before a batch goes out (ms). */
  batchMs?: number
  /** The keep-alive comment's interval (ms); at most 15 s. */
  heartbeatMs?: number
}

export class LiveHub {
  private readonly clients = new Set<ServerResponse>()
  private detach: (() => void) | null = null
  private timer: NodeJS.Timeout | null = null
  private heartbeat: NodeJS.Timeout | null = null
  private readonly batchMs: number
  private readonly heartbeatMs: number
  // What happened since the last batch.
  private sms: SmsRecord[] = []
  private smsCount = 0
  private subs = new Set<string>()
  private subsMore = false
  private clockMoved = false
  private wasReset = false
  private requestsAdded = 0
  /** The newest request log entry sent. */
  private lastRequest = 0
  /** The request log's `restarts` that `lastRequest` counts in. */
  private restarts = 0

  constructor(
    private readonly engine: Engine,
    private readonly requestLog: RequestLog,
    opts: LiveHubOptions = {},
  ) {
    this.batchMs = opts.batchMs ?? 250
    this.heartbeatMs = Math.min(opts.heartbeatMs ?? 10_000, 15_000)
  }

  get clientCount(): number {
    return this.clients.size
  }

  /** Serves one client: the stream stays open until it goes away (or the server closes). */
  serve(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    })
    // No idle timeout on this socket: the keep-alive comment shows it is alive.
    req.socket.setTimeout(0)
    req.socket.setNoDelay(true)
    if (!this.clients.size) {
      // Request log entries from before the first client are not news; the clients already connected keep their place.
      this.lastRequest = this.requestLog.nextId - 1
      this.restarts = this.requestLog.restarts
      this.attach()
    }
    this.clients.add(res)
    res.write(`retry: 2000\n: dcb live stream\n\n${frame('hello', { clock: this.engine.clockView(), next_request_id: this.requestLog.nextId })}`)
    const gone = () => {
      this.clients.delete(res)
      if (!this.clients.size) this.stop()
    }
    res.once('close', gone)
    req.once('close', gone)
  }

  /** Ends every stream (server shutdown). */
  close(): void {
    for (const res of this.clients) res.end()
    this.clients.clear()
    this.stop()
  }

  private attach(): void {
    const offSms = this.engine.onSms((m) => {
      this.smsCount++
      this.sms.push(m)
      if (this.sms.length > BATCH_SMS * 2) this.sms = this.sms.slice(-BATCH_SMS)
      this.schedule()
    })
    const offChange = this.engine.onChange((changes) => this.changed(changes))
    this.requestLog.onAdd = () => {
      this.requestsAdded++
      this.schedule()
    }
    this.heartbeat = setInterval(() => this.broadcast(': keep-alive\n\n'), this.heartbeatMs)
    this.heartbeat.unref()
    this.detach = () => {
      offSms()
      offChange()
      this.requestLog.onAdd = null
    }
  }

  private stop(): void {
    this.detach?.()
    this.detach = null
    if (this.heartbeat) clearInterval(this.heartbeat)
    if (this.timer) clearTimeout(this.timer)
    this.heartbeat = this.timer = null
    this.forget()
  }

  /** Called inside the engine's transaction: only notes what changed (never throws into the engine). */
  private changed(changes: readonly Change[]): void {
    let any = false
    for (const ch of changes) {
      if ('reset' in ch) {
        this.wasReset = any = true
        continue
      }
      if (ch.c === 'subs') {
        any = true
        if (this.subs.size < BATCH_SUBSCRIPTIONS) this.subs.add(ch.id)
        else if (!this.subs.has(ch.id)) this.subsMore = true
      } else if (ch.c === 'meta' && ch.id === 'clock') this.clockMoved = any = true
    }
    if (any) this.schedule()
  }

  private schedule(): void {
    if (this.timer || !this.clients.size) return
    this.timer = setTimeout(() => this.flush(), this.batchMs)
    this.timer.unref()
  }

  private flush(): void {
    this.timer = null
    let out = ''
    try {
      if (this.wasReset) out += frame('reset', {})
      if (this.clockMoved || this.wasReset) out += frame('clock', { clock: this.engine.clockView() })
      if (this.smsCount > BATCH_SMS) out += frame('sms-many', { count: this.smsCount })
      else for (const m of this.sms) out += frame('sms', { message: smsView(m) })
      if (this.subs.size || this.subsMore) out += frame('subscriptions', { ids: [...this.subs], more: this.subsMore })
      if (this.requestsAdded) {
        // Numbered anew since (a shared session deleted, then made again): every entry is news.
        if (this.requestLog.restarts !== this.restarts) [this.lastRequest, this.restarts] = [0, this.requestLog.restarts]
        const newest = this.requestLog.nextId - 1
        const requests = this.requestLog.list(BATCH_REQUESTS, this.lastRequest)
        const skipped = newest - this.lastRequest - requests.length
        this.lastRequest = newest
        out += frame('requests', { requests, skipped })
      }
    } finally {
      this.forget()
    }
    if (out) this.broadcast(out)
  }

  private forget(): void {
    this.sms = []
    this.smsCount = 0
    this.subs = new Set()
    this.subsMore = this.clockMoved = this.wasReset = false
    this.requestsAdded = 0
  }

  private broadcast(text: string): void {
    // One buffer for every client: a string written would be copied for each socket that cannot take it at once.
    const frames = Buffer.from(text)
    for (const res of this.clients) {
      // A client that stopped reading is cut (it reconnects and reloads) rather than buffered for.
      if (res.writableLength > MAX_UNREAD_BYTES) {
        this.clients.delete(res)
        res.destroy()
      } else if (!res.destroyed) res.write(frames)
    }
    if (!this.clients.size) this.stop()
  }
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}
