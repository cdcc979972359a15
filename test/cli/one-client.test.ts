/**
 * Issue 43 through the real binary: nothing one client does stalls or crashes the server, or leaves
 * a trace it was refused. Pipelined requests on one socket, a refused control write naming a session.
 */
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { serve, type Served } from './run.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())

/** The statuses of the answers in what a socket read (a body does not end in a newline: no `^`). */
const statuses = (got: string) => [...got.matchAll(/HTTP\/1\.1 (\d{3}) [A-Z]/g)].map((m) => m[1])

/** Sends `raw` on one socket and answers what came back once `count` answers did. */
function pipeline(url: string, raw: string, count: number): Promise<string> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname)
    let got = ''
    socket.on('data', (d) => {
      got += d
      if (statuses(got).length >= count) {
        socket.destroy()
        resolve(got)
      }
    })
    socket.on('error', reject)
    socket.write(raw)
  })
}

/** Stops the server and answers all it wrote (stdio closed: nothing more can come). */
const stopped = (s: Served) =>
  new Promise<string>((resolve) => {
    s.child.once('close', () => resolve(s.output()))
    s.child.kill('SIGTERM')
  })

const request = (method: string, path: string, body = '', headers: Record<string, string> = {}) =>
  `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries({ 'content-type': 'application/json', ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

describe('pipelined requests on one connection', () => {
  // One server; the tests run in order, the last one stopping it to read all it wrote.
  let s: Served
  let out: string | undefined
  const kinds = [
    request('GET', '/_sandbox/health'),
    request('GET', '/_sandbox/clock'),
    request('POST', '/_sandbox/clock/advance', '{"by":"1s"}'),
    request('GET', '/_sandbox/requests?limit=5'),
    request('POST', '/subscriptions/init', '{"msisdn":"60123456001","service_code":"STREAMPLUS","country_code":"my"}', { 'api-key': 'sandbox-demo-key' }),
    request('GET', '/'),
  ]
  beforeAll(async () => {
    s = await serve(['--in-memory'])
  })
  afterAll(async () => {
    if (out === undefined) await stopped(s)
  })

  it('25 of each kind are all answered, in order', async () => {
    for (const kind of kinds) {
      const got = await pipeline(s.url, kind.repeat(25), 25)
      expect(statuses(got), kind.split('\r\n')[0]).toEqual(Array(25).fill('200'))
    }
  }, 60_000)

  it('all kinds mixed are answered, in order', async () => {
    const mixed = await pipeline(s.url, kinds.join('').repeat(4), kinds.length * 4)
    expect(statuses(mixed)).toEqual(Array(kinds.length * 4).fill('200'))
  })

  it('leave the server warning of nothing (no MaxListenersExceededWarning)', async () => {
    out = await stopped(s)
    expect(out).not.toMatch(/Warning|listeners added/)
  })
})

describe('a refused control call', () => {
  // The tests are the steps of one flow on one data file: they run in order, each after the last.
  const data = join(tmp.dir, 'sandbox.json')
  let s: Served
  const call = (method: string, path: string, session: string, body?: unknown) =>
    fetch(`${s.url}/_sandbox${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-dcb-session': session },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  const names = async () => ((await (await fetch(`${s.url}/_sandbox/sessions`)).json()) as { sessions: { name: string }[] }).sessions.map((x) => x.name)
  beforeAll(async () => {
    s = await serve(['--data', data])
  })
  afterAll(() => s?.stop())

  it('creates no session', async () => {
    const refused: [string, Promise<Response>, number][] = [
      ['a rule refused', call('POST', '/rules', 'bad-rule', { match: { regex: '[0-9]{1,999}'.repeat(30) }, step: 'init', effect: { error: 'BARRED' } }), 400],
      ['a rule naming no carrier', call('POST', '/rules', 'bad-carrier', { match: { carrier: 'nope' }, step: 'init', effect: { error: 'BARRED' } }), 400],
      ['a clock set backwards', call('POST', '/clock/set', 'backwards', { to: '2000-01-01T00:00:00Z' }), 409],
      ['a cancel of no subscription', call('POST', '/subscriptions/sub-nope/cancel', 'cancel', {}), 404],
      ['a rule removed that is not there', call('DELETE', '/rules/nope', 'remove'), 404],
    ]
    for (const [what, answer, status] of refused) expect((await answer).status, what).toBe(status)
    expect(await names()).toEqual(['default'])
  })

  it('leaves no session after a restart either', async () => {
    expect(await s.stop()).toBe(0)
    s = await serve(['--data', data])
    expect(await names()).toEqual(['default'])
  })

  it('once allowed, makes its session', async () => {
    // The same kind of call: the refusals are what kept the sessions out.
    expect((await call('POST', '/rules', 'bad-rule', { match: { ending: '777' }, step: 'init', effect: { error: 'BARRED' } })).status).toBe(200)
    expect(await names()).toEqual(['default', 'bad-rule'])
  })
})
