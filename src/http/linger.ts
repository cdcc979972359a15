/**
 * Closing a connection while its client is still sending resets it: the kernel answers bytes nobody
 * read with RST, and a client that sends its whole request before reading (or whose next write fails
 * first) never sees the answer it was sent. So a connection the server closes first is ended (FIN,
 * after the answer) and kept reading until its client closes its side, for at most LINGER_MS (a slow
 * or endless sender cannot hold it); what arrives meanwhile is dropped. A request still parsed off it
 * is not served (`beingClosed`).
 */
import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'

/** How long a connection the server ended keeps reading what its client still sends. */
export const LINGER_MS = 2000

const lingering = new WeakSet<Duplex>()

/** Whether the server is closing this connection: a request parsed off it now is not served, only read. */
export function beingClosed(socket: Duplex): boolean {
  return lingering.has(socket)
}

/**
 * Ends `socket` (after `answer`, when given) and closes it once its client has closed its side, or
 * after LINGER_MS. While Node's HTTP parser reads the socket, it reads what comes (and the request
 * listener drops the requests); a socket nothing reads any more (a CONNECT's) is read here, `drop`.
 */
export function endAndLinger(socket: Duplex, answer?: string, opts: { drop?: boolean } = {}): void {
  if (lingering.has(socket)) return
  lingering.add(socket)
  socket.on('error', () => socket.destroy())
  if (answer === undefined) socket.end()
  else socket.end(answer)
  // The client has closed its side already: the socket closes once the answer is written.
  if (socket.readableEnded || socket.destroyed) return
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  socket.once('close', () => clearTimeout(timer))
  // The client closed its side: nothing is left unread, so closing now resets nothing.
  socket.once('end', () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy())))
  if (opts.drop) socket.on('data', () => {}).resume()
}

/**
 * Node closes a connection after its last answer (`Connection: close` either way, HTTP/1.0) with
 * `socket.destroySoon()`: end, and destroy once written, however much of the request body is still
 * on its way (an early 405, a 413). The connections of `server` linger instead; Node's parser goes on
 * reading the body it was told to drop.
 */
export function lingerOnClose(server: Server): void {
  const linger = (socket: Socket) => {
    socket.destroySoon = () => endAndLinger(socket)
  }
  server.on('connection', linger)
  // Over TLS (listhen's https) the HTTP parser reads the TLS socket, which comes with this event.
  server.on('secureConnection', linger)
}
