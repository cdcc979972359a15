/**
 * A control call the server refuses says what the caller needs in its situation: from another machine,
 * that the control API is loopback-only and how to open it (no token set) or that it needs the token;
 * the DNS-rebinding words only for a loopback caller naming a foreign Host. The binary serves on
 * every interface; "another machine" is a connection to this machine's LAN address.
 */
import { request as httpRequest } from 'node:http'
import { networkInterfaces } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dcb, serve, type Served } from './run.js'

/** This machine's first non-loopback IPv4 address: a connection to it comes from "another machine". */
const lanAddress = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)!.address

/** A GET with the Host given (fetch cannot set it); answers status and the JSON body. */
function get(address: string, port: string, path: string, host: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: address, port, path, headers: { host }, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('a refused control call says what it needs', () => {
  describe('no admin token set', () => {
    // One server for the file's part: the calls only read.
    let s: Served
    let port: string
    beforeAll(async () => {
      s = await serve(['--in-memory', '--host', '0.0.0.0'])
      port = new URL(s.url).port
    })
    afterAll(() => s?.stop())

    it('from another machine, dcb says the control API is loopback-only and how to open it', async () => {
      const clock = await dcb(['clock', '--base-url', `http://${lanAddress()}:${port}`])
      expect(clock.stderr).toBe(
        'dcb: FORBIDDEN: the control API is open from loopback only; start the server with --admin-token <token> (or --lan, which makes one up and prints it) to open it to other addresses\n',
      )
      expect(clock.code).toBe(1)
    })

    it("from another machine, the console's live stream says the same in the console's words", async () => {
      // No sign-in to offer: there is no token.
      const stream = await get(lanAddress(), port, '/_sandbox/events', `${lanAddress()}:${port}`)
      expect(stream).toEqual({
        status: 403,
        body: {
          error: 'FORBIDDEN',
          message:
            'the console is open from loopback only; start the server with --admin-token <token> (or --lan, which makes one up and prints it) to open it to other addresses',
        },
      })
    })

    it('from another machine, a loopback name as Host changes nothing', async () => {
      expect((await get(lanAddress(), port, '/_sandbox/health', `127.0.0.1:${port}`)).body.message).toMatch(/^the control API is open from loopback only; /)
    })

    it('from loopback with a foreign Host, it states the DNS-rebinding rule, with no token to ask for', async () => {
      // A page a browser loaded from that name.
      const rebound = await get('127.0.0.1', port, '/_sandbox/health', `lan-name.example:${port}`)
      expect(rebound).toEqual({
        status: 403,
        body: {
          error: 'FORBIDDEN',
          message: `the Host "lan-name.example:${port}" is not a loopback name or an --allow-host name: from loopback the control API answers only those (DNS rebinding); call it by localhost or 127.0.0.1, or start the server with --allow-host lan-name.example`,
        },
      })
    })
  })

  describe('an admin token set', () => {
    let s: Served
    let port: string
    let far: string
    beforeAll(async () => {
      s = await serve(['--in-memory', '--host', '0.0.0.0', '--admin-token', 'remote-secret'])
      port = new URL(s.url).port
      far = `http://${lanAddress()}:${port}`
    })
    afterAll(() => s?.stop())

    it('from another machine, dcb is told the control API needs the token', async () => {
      const refused = await dcb(['clock', '--base-url', far])
      expect(refused.stderr).toBe('dcb: FORBIDDEN: the control API needs Authorization: Bearer <admin token> from this address\n')
      expect(refused.code).toBe(1)
    })

    it('from another machine, the token opens it', async () => {
      const opened = await dcb(['clock', '--base-url', far, '--admin-token', 'remote-secret'])
      expect(opened.stderr).toBe('')
      expect(opened.code).toBe(0)
    })

    it('from another machine, the console asks to sign in', async () => {
      expect((await get(lanAddress(), port, '/_sandbox/events', `${lanAddress()}:${port}`)).body.message).toBe(
        'the console needs the admin token from this address: sign in at / (or send Authorization: Bearer <admin token>)',
      )
    })

    it('from loopback with a foreign Host, it needs the token too (DNS rebinding)', async () => {
      expect((await get('127.0.0.1', port, '/_sandbox/health', `lan-name.example:${port}`)).body.message).toBe(
        `the Host "lan-name.example:${port}" is not a loopback name or an --allow-host name: the control API needs Authorization: Bearer <admin token> for it, from loopback too (DNS rebinding)`,
      )
    })
  })
})
