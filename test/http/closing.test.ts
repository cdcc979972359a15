/**
 * Connections the server closes while their client is still sending a body it will not read (a 503
 * past the share of other machines, a 405 or 400 answered before the body, on a connection that
 * closes after it): the client reads the envelope, not a reset, and cannot hold the connection
 * open by sending on. Over loopback, with raw sockets.
 */
import { connect, type Socket } from 'node:net'
import { networkInterfaces } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, type Client } from '../helpers.js'

/** This machine's first non-loopback IPv4 address: a connection to it comes from "another machine". */
const lanAddress = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)!.address

const BODY = 512 * 1024
const CHUNK = 16 * 1024

function connected(host: string, port: number): Promise<Socket> {
  const socket = connect(port, host)
  return new Promise((resolve, reject) => socket.once('connect', () => resolve(socket)).once('error', reject))
}

/**
 * A client that sends its whole request before it reads anything (as Python's http.client does): the
 * head, then the body in chunks, each once the last was taken (one turn of the event loop apart);
 * then it reads until the server closes. Answers what it read and the first socket error.
 */
async function sendThenRead(socket: Socket, head: string, body = BODY): Promise<{ text: string; error: string | null }> {
  socket.pause()
  let error: string | null = null
  socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message))
  const closed = new Promise((resolve) => socket.once('close', resolve))
  const write = (data: string | Buffer) => new Promise<boolean>((resolve) => socket.write(data, (e) => resolve(!e)))
  let ok = await write(head)
  for (let sent = 0; ok && sent < body; sent += CHUNK) {
    ok = await write(Buffer.alloc(CHUNK, 'x'))
    await new Promise(setImmediate)
  }
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (d: string) => (text += d))
  socket.resume()
  await closed
  return { text, error }
}

/** Seven connections from the network answered and kept alive: the share of --max-connections 8 is taken. */
async function takeTheShare(c: Client): Promise<Socket[]> {
  const port = Number(new URL(c.url).port)
  const held: Socket[] = []
  for (let i = 0; i < 7; i++) {
    const s = await connected(lanAddress(), port)
    held.push(s)
    s.write('GET /openapi.json HTTP/1.1\r\nHost: sandbox.test\r\n\r\n')
    await new Promise((resolve) => s.once('data', resolve))
  }
  return held
}

const envelope = (status: number, message: string) => `{"status":"FAIL","message":"${message}","status_code":${status},"payload":null}`

describe('a client still sending its body when the server closes the connection', () => {
  describe('past the share of other machines', () => {
    let got: { text: string; error: string | null }
    beforeAll(async () => {
      const c = await startClient({ host: '0.0.0.0', maxConnections: 8 })
      const held = await takeTheShare(c)
      try {
        const eighth = await connected(lanAddress(), Number(new URL(c.url).port))
        const head = `POST /_sandbox/reset HTTP/1.1\r\nHost: sandbox.test\r\nContent-Type: application/json\r\nContent-Length: ${BODY}\r\n\r\n`
        // Before: the server destroyed the socket once the request's head arrived, and the next write failed (EPIPE).
        got = await sendThenRead(eighth, head)
      } finally {
        for (const h of held) h.destroy()
        await c.close()
      }
    })

    it('reads the 503 envelope, not a socket error', () => {
      expect(got.error).toBeNull()
      expect(got.text).toMatch(/^HTTP\/1\.1 503 /)
      expect(got.text.endsWith(envelope(503, 'ERROR'))).toBe(true)
    })

    it('gets nothing it sent served', () => {
      expect(got.text.match(/HTTP\/1\.1 /g)).toHaveLength(1)
    })
  })

  describe('answered before its body', () => {
    let c: Client
    let port: number
    beforeAll(async () => {
      c = await startClient()
      port = Number(new URL(c.url).port)
    })
    afterAll(() => c?.close())

    it('with 405 or 400, on a connection that closes after the answer: reads the envelope', async () => {
      for (const [head, status, message] of [
        [`PUT /subscriptions/init HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: ${BODY}\r\n\r\n`, 405, 'METHOD_NOT_ALLOWED'],
        [`PUT /subscriptions/init HTTP/1.0\r\nContent-Length: ${BODY}\r\n\r\n`, 405, 'METHOD_NOT_ALLOWED'],
        [`POST /subscriptions/init HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${BODY}\r\n\r\n`, 400, 'BAD_REQUEST'],
      ] as const) {
        // Before: Node destroyed the socket once the answer was written (EPIPE at the next write).
        const got = await sendThenRead(await connected('127.0.0.1', port), head)
        expect(got.error, head).toBeNull()
        expect(got.text, head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
        expect(got.text.endsWith(envelope(status, message)), head).toBe(true)
      }
    })

    // A CONNECT is answered 405 and read the same way.
    it('a CONNECT, with 405: reads the envelope', async () => {
      const connectGot = await sendThenRead(await connected('127.0.0.1', port), 'CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n')
      expect(connectGot.error).toBeNull()
      expect(connectGot.text.endsWith(envelope(405, 'METHOD_NOT_ALLOWED'))).toBe(true)
    })
  })

  it('cannot hold a connection being closed by sending on: it closes when its linger time is up', async () => {
    const c = await startClient()
    const port = Number(new URL(c.url).port)
    try {
      // One sends as fast as it can and never reads, one sends a byte now and then; neither ends.
      const endless = await connected('127.0.0.1', port)
      const slow = await connected('127.0.0.1', port)
      const closed = [endless, slow].map((s) => {
        s.on('error', () => {})
        return new Promise((resolve) => s.once('close', resolve))
      })
      endless.write(`PUT /subscriptions/init HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 99999999\r\n\r\n`)
      const pump = () => {
        while (!endless.destroyed && endless.write(Buffer.alloc(CHUNK, 'x')));
      }
      endless.on('drain', pump)
      pump()
      slow.write(`PUT /subscriptions/init HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: ${BODY}\r\n\r\n`)
      const drip = setInterval(() => slow.write('x'), 100)
      await Promise.all(closed)
      clearInterval(drip)
    } finally {
      await c.close()
    }
  })
})
