/**
 * A server other machines reach (`--host 0.0.0.0`), attacked from the network as a hostile user on a
 * shared network would: each test failed on the code before its fix.
 */
import { connect, type Socket } from 'node:net'
import { networkInterfaces } from 'node:os'
import { describe, expect, it } from 'vitest'
import { startClient } from '../helpers.js'

/** This machine's first non-loopback IPv4 address: a connection to it comes from "another machine". */
const lanAddress = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)!.address

/** A connection and the bytes it got until the server closed it (or the test did). */
function open(host: string, port: number): { socket: Socket; received: () => string; closed: Promise<string> } {
  const socket = connect(port, host)
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (d) => (text += d))
  socket.on('error', () => {})
  return { socket, received: () => text, closed: new Promise((resolve) => socket.on('close', () => resolve(text))) }
}

/** Sends a request on a kept-alive connection and resolves once its answer's head arrived. */
function ask(c: ReturnType<typeof open>, path: string): Promise<string> {
  const before = c.received().length
  return new Promise((resolve) => {
    const check = () => {
      const got = c.received().slice(before)
      if (got.includes('\r\n\r\n')) {
        c.socket.off('data', check)
        resolve(got)
      }
    }
    c.socket.on('data', check)
    c.socket.write(`GET ${path} HTTP/1.1\r\nHost: sandbox.test\r\n\r\n`)
  })
}

describe('connections from other machines', () => {
  it('cannot take the connections loopback clients need: past 7/8 of --max-connections they get a 503 envelope', async () => {
    const c = await startClient({ host: '0.0.0.0', maxConnections: 8 })
    const port = Number(new URL(c.url).port)
    const lan = lanAddress()
    const held: ReturnType<typeof open>[] = []
    try {
      // Seven connections from the network, each answered (so the server holds all seven), kept alive.
      for (let i = 0; i < 7; i++) {
        const conn = open(lan, port)
        held.push(conn)
        expect(await ask(conn, '/openapi.json')).toMatch(/^HTTP\/1\.1 200 /)
      }
      // The eighth from the network is refused with a reason, and nothing it sends is served.
      const eighth = open(lan, port)
      eighth.socket.write('POST /_sandbox/reset HTTP/1.1\r\nHost: sandbox.test\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}')
      const refused = await eighth.closed
      expect(refused).toMatch(/^HTTP\/1\.1 503 /)
      expect(refused).toMatch(/x-dcb-reason: other machines hold 7 connections, their share of --max-connections 8/)
      expect(refused).toContain('"status_code":503')
      expect(refused.match(/HTTP\/1\.1 /g)).toHaveLength(1)
      // Loopback still gets in: the developer's own clients and console keep working.
      const health = await fetch(`${c.url}/_sandbox/health`)
      expect(health.status).toBe(200)
    } finally {
      for (const h of held) h.socket.destroy()
      await c.close()
    }
  })
})

describe('what one request can make the sandbox keep', () => {
  it('an MO text is at most 1600 characters: a longer one is 400 naming text, and nothing is kept', async () => {
    const c = await startClient()
    try {
      const long = await c.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'x'.repeat(1601) })
      expect(long).toEqual({ status: 400, body: { error: 'BAD_REQUEST', message: 'text: expected at most 1600 characters (a long SMS of ten parts)' } })
      expect((await c.control('/sms?msisdn=60133456001')).body.messages).toEqual([])
      const longest = await c.control('/mo', { msisdn: '60133456001', short_code: '32123', text: 'x'.repeat(1600) })
      expect(longest.status).toBe(200)
      const kept = (await c.control('/sms?msisdn=60133456001')).body.messages
      expect(kept.find((m: { direction: string }) => m.direction === 'mo').text).toHaveLength(1600)
    } finally {
      await c.close()
    }
  })
})
