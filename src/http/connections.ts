/**
 * The connection cap of a listener that other machines reach (`--host 0.0.0.0`, `--lan`): they share
 * all but an eighth of `--max-connections`, which stays for loopback clients. Without it one machine on
 * the network that opens the cap's worth of connections (slow requests, idle keep-alives, each held
 * until its timeout and opened again) locks the developer's own test suite and console out.
 */
import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import type { FailurePayloadMode } from '../core/outcomes.js'
import { isLoopback, normalizeIp } from './ip.js'
import { endAndLinger } from './linger.js'
import { rawAnswer } from './protocol.js'

/** How many of `max` connections other machines may hold together (the rest are loopback's). */
export function remoteConnectionLimit(max: number): number {
  return max - Math.floor(max / 8)
}

export interface RemoteCapOptions {
  maxConnections: number
  /** Whether the socket speaks plain HTTP (a refusal is answered) or TLS (it is only closed). */
  plain: boolean
  failurePayload?: FailurePayloadMode
  reasons: boolean
}

/** Refuses a connection from another machine past its share: a 503 envelope (plain HTTP), then close. */
export function capRemoteConnections(server: Server, opts: RemoteCapOptions): void {
  const limit = remoteConnectionLimit(opts.maxConnections)
  let remote = 0
  server.on('connection', (socket: Socket) => {
    if (isLoopback(normalizeIp(socket.remoteAddress ?? ''))) return
    if (remote < limit) {
      remote++
      socket.once('close', () => remote--)
      return
    }
    if (!opts.plain) return void socket.destroy()
    const reason = `other machines hold ${limit} connections, their share of --max-connections ${opts.maxConnections} (the rest are kept for loopback clients); close some and retry`
    // The answer goes out and the connection closes; a request the client sends meanwhile is read and dropped, not
    // served (`beingClosed`), so its client reads the answer rather than a reset.
    endAndLinger(socket, rawAnswer(503, 'Service Unavailable', 'SERVER_ERROR', opts.reasons ? reason : undefined, opts.failurePayload))
  })
}

/** The calls waiting for each socket to close: one listener a socket, however many requests are pipelined on it. */
const closeWaiters = new WeakMap<Socket, Set<() => void>>()

/**
 * Runs `fn` when the socket closes; answers how to stop waiting. Each request that waits adds to one
 * listener of its socket: a listener each would pass Node's ten with eleven requests pipelined on one
 * connection (a MaxListenersExceededWarning, and as many listeners as requests queued).
 */
export function whenSocketCloses(socket: Socket, fn: () => void): () => void {
  let waiters = closeWaiters.get(socket)
  if (!waiters) {
    const all = new Set<() => void>()
    closeWaiters.set(socket, (waiters = all))
    socket.once('close', () => {
      closeWaiters.delete(socket)
      for (const f of all) f()
    })
  }
  waiters.add(fn)
  return () => void waiters.delete(fn)
}
