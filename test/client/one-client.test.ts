import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/create.js'
import { DcbClient, TransportError } from '../../src/client/index.js'
import { nodeFetch } from '../../src/client/node-fetch.js'
import { SandboxError } from '../../src/core/errors.js'

/** A server over loopback whose answer each test sets; it records what it was sent. */
let server: Server
let base = ''
let answer: (req: IncomingMessage, res: ServerResponse, body: string) => void = () => {}
const seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (d: string) => (body += d))
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body })
      answer(req, res, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const FAIL = { status: 'FAIL', message: 'BAD_REQUEST', status_code: 400, payload: null }
const send = (status: number, text: string, headers: Record<string, string> = {}) =>
  (answer = (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(text)
  })

describe('the CLI client and createClient answer alike', () => {
  it('a merchant call answers { httpStatus, envelope, reason } from either client', async () => {
    send(400, JSON.stringify(FAIL), { 'x-dcb-reason': 'country_code: must be lower case (got "MY")' })
    const body = { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'MY' }
    const cli = await new DcbClient({ baseUrl: base, apiKey: 'k1', session: 's1' }).init(body)
    const lib = await createClient({ baseUrl: base, apiKey: 'k1', session: 's1' }).init(body)
    const expected = { httpStatus: 400, envelope: FAIL, reason: 'country_code: must be lower case (got "MY")' }
    expect(cli).toEqual(expected)
    expect(lib).toEqual(expected)
    // Both posted the same request to the declared path.
    const [a, b] = seen.slice(-2)
    for (const r of [a!, b!]) {
      expect(r.method).toBe('POST')
      expect(r.url).toBe('/subscriptions/init')
      expect(r.headers['api-key']).toBe('k1')
      expect(r.headers['x-dcb-session']).toBe('s1')
      expect(JSON.parse(r.body)).toEqual(body)
    }
  })

  it('a control refusal throws the same SandboxError (code, status) from either client', async () => {
    send(404, JSON.stringify({ error: 'SUBSCRIPTION_NOT_FOUND', message: 'no subscription "x"' }))
    const errors = await Promise.all([
      new DcbClient({ baseUrl: base, apiKey: 'k' }).subscription('x').catch((e: unknown) => e),
      createClient({ baseUrl: base })
        .subscription('x')
        .catch((e: unknown) => e),
    ])
    for (const e of errors) {
      expect(e).toBeInstanceOf(SandboxError)
      expect((e as SandboxError).code).toBe('SUBSCRIPTION_NOT_FOUND')
      expect((e as SandboxError).status).toBe(404)
    }
    expect(seen.slice(-2).map((r) => `${r.method} ${r.url}`)).toEqual(['GET /_sandbox/subscriptions/x', 'GET /_sandbox/subscriptions/x'])
  })

  it('an answer that is not the API envelope is a TransportError for the CLI, naming what came', async () => {
    send(502, '<html>bad gateway</html>', { 'content-type': 'text/html' })
    const e = await new DcbClient({ baseUrl: base, apiKey: 'k' }).status({ subscription_id: 'x' }).catch((err: unknown) => err)
    expect(e).toBeInstanceOf(TransportError)
    expect((e as Error).message).toBe(`${base}/subscriptions/status answered HTTP 502 without the API's envelope: <html>bad gateway</html>`)
    const lib = await createClient({ baseUrl: base })
      .status({ subscription_id: 'x' })
      .catch((err: unknown) => err)
    expect(lib).toBeInstanceOf(SandboxError)
    expect((lib as Error).message).toContain('is this a dcb sandbox?')
  })
})

describe('the node:http fetch of the CLI', () => {
  it('answers as a Response (status, headers, body)', async () => {
    send(201, '{"a":1}', { 'x-one': 'yes' })
    const res = await nodeFetch()(`${base}/p?q=1`, { method: 'POST', headers: { 'x-in': 'v' }, body: 'hello' })
    expect(res.status).toBe(201)
    expect(res.headers.get('x-one')).toBe('yes')
    expect(await res.json()).toEqual({ a: 1 })
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/p?q=1', body: 'hello' })
    expect(seen.at(-1)!.headers['x-in']).toBe('v')
  })

  it('says how to start a server when nothing answers', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const e = await nodeFetch('npx dcb')(`http://127.0.0.1:${port}/x`, { method: 'GET' }).catch((err: unknown) => err)
    expect(e).toBeInstanceOf(TransportError)
    expect((e as Error).message).toBe(`cannot reach http://127.0.0.1:${port}: connection refused (is \`npx dcb serve\` running?)`)
  })

  it('gives up after its time-out, saying it timed out', async () => {
    answer = () => {} // never answers
    const e = await nodeFetch()(`${base}/slow`, { method: 'GET', timeoutMs: 200 }).catch((err: unknown) => err)
    expect(e).toBeInstanceOf(TransportError)
    expect((e as TransportError).timedOut).toBe(true)
    expect((e as Error).message).toContain('no answer within')
  })

  it('refuses what is not an http(s) URL', async () => {
    await expect(nodeFetch()('ftp://x/y', { method: 'GET' })).rejects.toThrow('"ftp://x/y" is not an http(s) URL')
  })
})
