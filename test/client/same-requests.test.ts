/**
 * The CLI's client and createClient are one client over two fetch functions: for the same call
 * they send the same request and answer the same shape, and the live stream goes through the
 * fetch function it is given.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/create.js'
import type { FetchInit } from '../../src/client/fetch.js'
import { DcbClient } from '../../src/client/index.js'
import { nodeFetch } from '../../src/client/node-fetch.js'

let server: Server
let base = ''
let answer: (req: IncomingMessage, res: ServerResponse) => void = () => {}
const seen: { method?: string; url?: string; headers: Record<string, unknown>; body: string }[] = []

/** Headers each transport adds of its own (the global fetch: user-agent, accept `*\/*`, …): not the client's. */
const TRANSPORT = new Set(['host', 'connection', 'user-agent', 'accept-encoding', 'accept-language', 'sec-fetch-mode', 'keep-alive'])
const ours = (h: IncomingMessage['headers']) => Object.fromEntries(Object.entries(h).filter(([k, v]) => !TRANSPORT.has(k) && !(k === 'accept' && v === '*/*')))

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (d: string) => (body += d))
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: ours(req.headers), body })
      answer(req, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
  (answer = (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(value))
  })

const options = () => ({ baseUrl: base, apiKey: 'k1', adminToken: 't1', session: 's1' })

/** What each client sent and answered for one call. */
async function both<T>(call: (c: DcbClient | ReturnType<typeof createClient>) => Promise<T>) {
  const cli = await call(new DcbClient(options()))
  const cliSent = seen.at(-1)
  const lib = await call(createClient(options()))
  return { cli, lib, cliSent, libSent: seen.at(-1) }
}

describe('the same call from the CLI client and createClient', () => {
  const OK = { status: 'SUCCESS', message: '', status_code: 200, payload: { subscription_id: 'sub1' } }
  type Call = (c: DcbClient | ReturnType<typeof createClient>) => Promise<unknown>
  it.each<[string, Call]>([
    ['init', (c) => c.init({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })],
    ['verify', (c) => c.verify({ verif_request_id: 'v1', otp: '1234' })],
    ['status', (c) => c.status({ subscription_id: 'sub1' })],
  ])('%s sends the same request and answers the same { httpStatus, envelope, reason }', async (_name, call) => {
    json(200, OK, { 'x-dcb-reason': 'why' })
    const { cli, lib, cliSent, libSent } = await both(call)
    expect(cli).toEqual({ httpStatus: 200, envelope: OK, reason: 'why' })
    expect(lib).toEqual(cli)
    expect(libSent).toEqual(cliSent)
    expect(cliSent!.headers).toMatchObject({ 'api-key': 'k1', 'x-dcb-session': 's1' })
  })

  const advanced = async () => {
    json(200, { now: '2026-01-01T00:00:00.000Z', ran: [] })
    return both((c) => c.advance('1d'))
  }

  it('a control call answers the same JSON', async () => {
    const { cli, lib } = await advanced()
    expect(lib).toEqual(cli)
  })

  it('a control call sends the same request (session with admin token)', async () => {
    const { cliSent, libSent } = await advanced()
    expect(libSent).toEqual(cliSent)
    expect(cliSent).toMatchObject({ method: 'POST', url: '/_sandbox/clock/advance', body: '{"by":"1d"}' })
    expect(cliSent!.headers).toMatchObject({ authorization: 'Bearer t1', 'x-dcb-session': 's1' })
  })

  const denied = async () => {
    answer = (_req, res) => {
      res.writeHead(303, { location: 'https://shop.test/back?status=FAIL&message=DENIED', 'x-dcb-reason': 'denied' })
      res.end()
    }
    return both((c) => c.consent('c/1', 'deny'))
  }

  it('a consent decision by id sends the same request', async () => {
    const { cliSent, libSent } = await denied()
    expect(libSent).toEqual(cliSent)
    expect(cliSent).toMatchObject({ method: 'POST', url: '/consent/c%2F1', body: 'action=deny' })
  })

  it('the CLI answer to a consent decision adds the query with the reason to the same status, location', async () => {
    const { cli, lib } = await denied()
    expect(lib).toEqual({ status: 303, location: 'https://shop.test/back?status=FAIL&message=DENIED' })
    expect(cli).toEqual({ ...lib, query: { status: 'FAIL', message: 'DENIED' }, reason: 'denied' })
  })
})

describe('the live stream of the CLI client', () => {
  /** An event stream through a fetch function of its own, read until its first event, then closed. */
  const streamed = async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('event: hello\ndata: {"next_request_id":3}\n\n')
    }
    const asked: { url: string; init: FetchInit }[] = []
    const inner = nodeFetch()
    const c = new DcbClient({ ...options(), fetch: (url, init) => (asked.push({ url, init }), inner(url, init)) })
    const got: unknown[] = []
    let first: () => void
    const arrived = new Promise<void>((resolve) => (first = resolve))
    const stream = c.events((event, data) => {
      got.push([event, data])
      first()
    })
    await arrived
    stream.close()
    await stream.done
    return { got, asked }
  }

  it('reads events as they come until close() ends it', async () => {
    const { got } = await streamed()
    expect(got).toEqual([['hello', { next_request_id: 3 }]])
  })

  it('goes through the fetch function it is given', async () => {
    const { asked } = await streamed()
    expect(asked.map((a) => [a.url, a.init.stream])).toEqual([[`${base}/_sandbox/events`, true]])
    expect(seen.at(-1)!.headers).toMatchObject({ accept: 'text/event-stream', authorization: 'Bearer t1', 'x-dcb-session': 's1' })
  })
})
