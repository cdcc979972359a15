/**
 * Faults on purpose (the `fault` and `http` effects, the 6NN endings) through all three transports:
 * a socket to the server (a raw node:net socket where ECONNRESET must be told from a clean close),
 * `sandbox.fetch`, and msw's `setupServer` with the sandbox's handlers. Each sees the same thing.
 */
import { connect } from 'node:net'
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createSandbox, type Sandbox } from '../../src/index.js'
import { sandboxHandlers } from '../../src/msw.js'
import { DEMO, startClient, type Client } from '../helpers.js'
import { dcb } from '../cli/run.js'

const BASE = 'https://gw.carrier.test/v1'
const H = { 'api-key': DEMO, 'content-type': 'application/json' }
const my = (ending: string) => `60123456${ending}`

/** What a caller saw: an answer (status, headers, the body or that reading it failed) or a network error. */
type Seen = { error: string } | { status: number; type: string | null; retryAfter: string | null; body: string; bodyFailed?: true }

/** A transport: how the merchant's fetch reaches the sandbox, and the control calls of the test. */
interface Transport {
  name: string
  fetch(path: string, body: unknown, signal?: AbortSignal): Promise<Response>
  control(path: string, body?: unknown, method?: string): Promise<any>
}

async function seen(t: Transport, path: string, body: unknown, signal?: AbortSignal): Promise<Seen> {
  let res: Response
  try {
    res = await t.fetch(path, body, signal)
  } catch (e) {
    // Node's fetch says "fetch failed", msw's Response.error() "Failed to fetch": both a TypeError.
    return { error: (e as Error).name }
  }
  const head = { status: res.status, type: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after') }
  try {
    return { ...head, body: await res.text() }
  } catch (e) {
    return { ...head, body: '', bodyFailed: true }
  }
}

const inits = (t: Transport, msisdn: string) => seen(t, '/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
const verifies = (t: Transport, id: string, otp: string, signal?: AbortSignal) => seen(t, '/subscriptions/verify', { verif_request_id: id, otp }, signal)
async function started(t: Transport, msisdn: string): Promise<{ id: string; otp: string }> {
  const r = (await inits(t, msisdn)) as { body: string }
  const id = JSON.parse(r.body).payload.verif_request_id as string
  return { id, otp: (await t.control(`/otp?msisdn=${msisdn}`)).otp }
}
const subs = async (t: Transport, msisdn: string) => (await t.control(`/subscriptions?msisdn=${msisdn}`)).subscriptions as any[]
const latest = async (t: Transport) => (await t.control('/requests?limit=1')).requests[0]

const NETWORK = { error: 'TypeError' }

/** The checks every transport must pass alike; each answers what the caller saw, for comparing. */
function suite(get: () => Transport) {
  describe('601: the first Init reset before any byte', () => {
    it('is a network error', async () => {
      expect(await inits(get(), my('601'))).toEqual(NETWORK)
    })

    it('sends nothing: no OTP', async () => {
      const t = get()
      await inits(t, my('601'))
      await expect(t.control(`/otp?msisdn=${my('601')}`)).resolves.toMatchObject({ error: 'NO_OTP' })
    })

    it('is logged as a reset fault naming its rule', async () => {
      const t = get()
      await inits(t, my('601'))
      expect(await latest(t)).toMatchObject({ fault: { kind: 'reset', when: 'before' }, reason: expect.stringContaining('init-601') })
    })

    it('the retry succeeds', async () => {
      const t = get()
      await inits(t, my('601'))
      expect(await inits(t, my('601'))).toMatchObject({ status: 200 })
    })
  })

  describe('602: the first Init closed after it was done', () => {
    it('closes with no answer', async () => {
      expect(await inits(get(), my('602'))).toEqual(NETWORK)
    })

    it('leaves the OTP in the inbox', async () => {
      const t = get()
      await inits(t, my('602'))
      expect(await t.control(`/otp?msisdn=${my('602')}`)).toMatchObject({ otp: expect.stringMatching(/^\d+$/) })
    })

    it('is logged as a close after its 200', async () => {
      const t = get()
      await inits(t, my('602'))
      expect(await latest(t)).toMatchObject({ fault: { kind: 'close', when: 'after' }, http_status: 200 })
    })
  })

  describe('a gateway page with Retry-After (603, 604)', () => {
    it('603: the first Init gets a 429 gateway page with Retry-After', async () => {
      const first = await inits(get(), my('603'))
      expect(first).toMatchObject({ status: 429, type: 'text/html', retryAfter: '30', body: expect.stringContaining('429 Too Many Requests') })
    })

    it('603: the request log keeps the gateway page as sent', async () => {
      const t = get()
      const first = await inits(t, my('603'))
      expect(await latest(t)).toMatchObject({ http_status: 429, response: (first as { body: string }).body, response_headers: { 'retry-after': '30' } })
    })

    it('603: the retry succeeds', async () => {
      const t = get()
      await inits(t, my('603'))
      expect(await inits(t, my('603'))).toMatchObject({ status: 200 })
    })

    it('604: every Init gets a 503 gateway page with Retry-After', async () => {
      const t = get()
      for (let i = 0; i < 2; i++) expect(await inits(t, my('604'))).toMatchObject({ status: 503, retryAfter: '5', body: expect.stringContaining('503') })
    })

    it('604: a gateway page before sends no OTP', async () => {
      const t = get()
      for (let i = 0; i < 2; i++) await inits(t, my('604'))
      await expect(t.control(`/otp?msisdn=${my('604')}`)).resolves.toMatchObject({ error: 'NO_OTP' })
    })
  })

  describe('611: the first Verify reset after it was done', () => {
    /** The Verify for 611; answers what it saw and its verification. */
    async function resetVerify(t: Transport) {
      const { id, otp } = await started(t, my('611'))
      return { id, otp, first: await verifies(t, id, otp) }
    }

    it('has its connection reset', async () => {
      expect((await resetVerify(get())).first).toEqual(NETWORK)
    })

    it('activates one subscription, charged once', async () => {
      const t = get()
      await resetVerify(t)
      const [sub, ...more] = await subs(t, my('611'))
      expect(more).toEqual([])
      expect(sub).toMatchObject({ status: 'ACTIVE', charge_count: 1 })
    })

    // A retried Verify answers as the contract says for a repeated one: the request was used.
    it('a retried Verify answers PIN_EXPIRED', async () => {
      const t = get()
      const { id, otp } = await resetVerify(t)
      expect(await verifies(t, id, otp)).toMatchObject({ status: 200, body: expect.stringContaining('PIN_EXPIRED') })
    })

    it('counts as verify.SUCCESS beside verify.fault, its retry counting neither', async () => {
      const t = get()
      const { id, otp } = await resetVerify(t)
      await verifies(t, id, otp)
      const cov = await t.control('/coverage?merchant=demo')
      const count = (o: string) => cov.coverage[0].outcomes.find((x: any) => x.id === o).count
      expect([count('verify.SUCCESS'), count('verify.fault')]).toEqual([1, 1])
    })
  })

  describe('612: a 502 after', () => {
    it('answers the Verify with a 502 gateway page', async () => {
      const t = get()
      const a = await started(t, my('612'))
      expect(await verifies(t, a.id, a.otp)).toMatchObject({ status: 502, type: 'text/html', body: expect.stringContaining('502 Bad Gateway') })
    })

    it('leaves the subscription ACTIVE', async () => {
      const t = get()
      const a = await started(t, my('612'))
      await verifies(t, a.id, a.otp)
      expect(await subs(t, my('612'))).toMatchObject([{ status: 'ACTIVE' }])
    })
  })

  describe('613: a 504 before', () => {
    it('answers the Verify with a 504', async () => {
      const t = get()
      const b = await started(t, my('613'))
      expect(await verifies(t, b.id, b.otp)).toMatchObject({ status: 504, body: expect.stringContaining('504') })
    })

    it('charges nothing', async () => {
      const t = get()
      const b = await started(t, my('613'))
      await verifies(t, b.id, b.otp)
      expect(await subs(t, my('613'))).toEqual([])
    })

    it('the retry succeeds', async () => {
      const t = get()
      const b = await started(t, my('613'))
      await verifies(t, b.id, b.otp)
      expect(await verifies(t, b.id, b.otp)).toMatchObject({ status: 200, body: expect.stringContaining('SUCCESS') })
    })
  })

  describe('614: a hang', () => {
    /** A Verify for 614 held by its rule, then given up on; answers what the caller saw. */
    async function gaveUp(t: Transport) {
      const { id, otp } = await started(t, my('614'))
      const abort = new AbortController()
      const pending = verifies(t, id, otp, abort.signal)
      // The rule decided the call: it is held now.
      const used = async () => (await t.control('/rules')).rules.find((r: any) => r.id === 'verify-614').used
      await expect.poll(used, { interval: 20 }).toBe(1)
      abort.abort()
      return pending
    }

    it('ends when the caller gives up', async () => {
      expect(await gaveUp(get())).toMatchObject({ error: 'AbortError' })
    })

    it('charges nothing', async () => {
      const t = get()
      await gaveUp(t)
      expect(await subs(t, my('614'))).toEqual([])
    })
  })

  it('a hang closes with no answer once hang_ms is up', async () => {
    const t = get()
    await t.control('/rules', { id: 'short-hang', match: { ending: '091' }, step: 'init', effect: { fault: 'hang', hang_ms: 30 } })
    expect(await inits(t, my('091'))).toEqual(NETWORK)
    expect(await latest(t)).toMatchObject({ fault: { kind: 'hang', when: 'before' } })
  })

  describe('615: a truncated Verify answer', () => {
    async function truncatedVerify(t: Transport) {
      const { id, otp } = await started(t, my('615'))
      return verifies(t, id, otp)
    }

    it('keeps its head: status, content type', async () => {
      expect(await truncatedVerify(get())).toMatchObject({ status: 200, type: 'application/json; charset=utf-8' })
    })

    it('fails to read its body', async () => {
      expect(await truncatedVerify(get())).toMatchObject({ bodyFailed: true })
    })

    it('leaves the subscription ACTIVE', async () => {
      const t = get()
      await truncatedVerify(t)
      expect(await subs(t, my('615'))).toMatchObject([{ status: 'ACTIVE' }])
    })
  })

  // A Status has no `after`: its fault cuts the answer of a call that did nothing, a 500 ERROR envelope.
  describe('621: a truncated Status answer', () => {
    /** A subscription for 621; answers its id. */
    async function subscribed(t: Transport) {
      const b = await started(t, my('621'))
      return JSON.parse(((await verifies(t, b.id, b.otp)) as { body: string }).body).payload.subscription_id
    }

    it('is a 500 whose body cannot be read, each time', async () => {
      const t = get()
      const sub = await subscribed(t)
      for (let i = 0; i < 2; i++) expect(await seen(t, '/subscriptions/status', { subscription_id: sub })).toMatchObject({ status: 500, bodyFailed: true })
    })

    it('is logged with the ERROR envelope it cut', async () => {
      const t = get()
      const sub = await subscribed(t)
      for (let i = 0; i < 2; i++) await seen(t, '/subscriptions/status', { subscription_id: sub })
      expect(await latest(t)).toMatchObject({ fault: { kind: 'truncate', when: 'before' }, response: { status: 'FAIL', message: 'ERROR' } })
    })
  })

  it('622: the first Status gets garbage', async () => {
    const t = get()
    const { id, otp } = await started(t, my('622'))
    const v = (await verifies(t, id, otp)) as { body: string }
    const sub = JSON.parse(v.body).payload.subscription_id
    expect(await seen(t, '/subscriptions/status', { subscription_id: sub })).toEqual(NETWORK)
    expect(await seen(t, '/subscriptions/status', { subscription_id: sub })).toMatchObject({ status: 200 })
  })

  describe('http', () => {
    it('with a text body of its own answers that body', async () => {
      const t = get()
      await t.control('/rules', {
        id: 'txt',
        match: { ending: '092' },
        step: 'init',
        effect: { http: 503, body: { text: 'down', content_type: 'text/plain' } },
      })
      expect(await inits(t, my('092'))).toMatchObject({ status: 503, type: 'text/plain', body: 'down' })
    })

    /** An api-step rule for 093: a 502 with an empty body and Retry-After 1; answers what the Init saw. */
    async function emptyWithRetryAfter(t: Transport) {
      await t.control('/rules', { id: 'none', match: { ending: '093' }, step: 'api', effect: { http: 502, body: 'empty', retry_after: 1 } })
      return inits(t, my('093'))
    }

    it("with body 'empty' answers its status with no body", async () => {
      expect(await emptyWithRetryAfter(get())).toMatchObject({ status: 502, body: '' })
    })

    it('with retry_after sends Retry-After', async () => {
      expect(await emptyWithRetryAfter(get())).toMatchObject({ retryAfter: '1' })
    })
  })
}

describe('over a socket (dcb serve)', () => {
  let c: Client
  beforeAll(async () => {
    c = await startClient()
  })
  afterAll(() => c.close())
  beforeEach(() => c.control('/reset', {}))
  const t = (): Transport => ({
    name: 'socket',
    fetch: (path, body, signal) => fetch(c.url + path, { method: 'POST', headers: H, body: JSON.stringify(body), signal }),
    control: async (path, body, method) => (await c.control(path, body, { method })).body,
  })
  suite(t)

  /** The bytes a raw socket got for one request, and how it ended. */
  const raw = (body: unknown, path = '/subscriptions/init') =>
    new Promise<{ bytes: Buffer; ended: 'reset' | 'closed' }>((resolve) => {
      const { port } = new URL(c.url)
      const s = connect(Number(port), '127.0.0.1')
      const got: Buffer[] = []
      const text = JSON.stringify(body)
      s.on('connect', () =>
        s.write(
          `POST ${path} HTTP/1.1\r\nhost: x\r\napi-key: ${DEMO}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
        ),
      )
      s.on('data', (d) => got.push(d))
      s.on('error', (e: NodeJS.ErrnoException) => resolve({ bytes: Buffer.concat(got), ended: e.code === 'ECONNRESET' ? 'reset' : (e.code as never) }))
      s.on('end', () => resolve({ bytes: Buffer.concat(got), ended: 'closed' }))
    })
  const init = (msisdn: string) => ({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' })

  describe('dcb logs', () => {
    let stdout: string
    beforeAll(async () => {
      await c.control('/reset', {})
      expect(await raw(init(my('601')))).toMatchObject({ ended: 'reset' })
      stdout = (await dcb(['logs', '--base-url', c.url])).stdout
    })

    it('shows the fault', () => {
      expect(stdout).toContain('(fault reset, before)')
    })

    it('shows the rule that made it', () => {
      expect(stdout).toMatch(/why:.*init-601/)
    })
  })

  it('tells a reset (ECONNRESET) from a clean close', async () => {
    expect(await raw(init(my('601')))).toEqual({ bytes: Buffer.alloc(0), ended: 'reset' })
    expect(await raw(init(my('602')))).toEqual({ bytes: Buffer.alloc(0), ended: 'closed' })
  })

  it('sends 64 bytes of garbage, no HTTP, as said', async () => {
    await c.control('/rules', { id: 'g', match: { ending: '094' }, step: 'init', effect: { fault: 'garbage' } })
    const g = await raw(init(my('094')))
    expect([g.bytes.length, g.bytes.subarray(0, 5).toString() === 'HTTP/', g.ended]).toEqual([64, false, 'closed'])
  })

  it('sends a truncated answer as said: its head, half its body', async () => {
    await c.control('/rules', { id: 'cut', match: { ending: '095' }, step: 'init', effect: { fault: 'truncate', when: 'after' } })
    const cut = await raw(init(my('095')))
    const [head, sent] = cut.bytes.toString().split('\r\n\r\n') as [string, string]
    const length = Number(/content-length: (\d+)/i.exec(head)![1])
    expect([head.split('\r\n')[0], sent.length, cut.ended]).toEqual(['HTTP/1.1 200 OK', Math.floor(length / 2), 'closed'])
  })
})

describe('in process (sandbox.fetch)', () => {
  let sandbox: Sandbox
  beforeAll(async () => {
    sandbox = await createSandbox()
  })
  afterAll(() => sandbox.close())
  beforeEach(() => sandbox.reset())
  suite(() =>
    controlOf(sandbox, (path, body, signal) => sandbox.fetch(`http://localhost${path}`, { method: 'POST', headers: H, body: JSON.stringify(body), signal })),
  )
})

describe('through msw (setupServer with sandboxHandlers)', () => {
  let sandbox: Sandbox
  const server = setupServer()
  beforeAll(async () => {
    sandbox = await createSandbox()
    server.use(...sandboxHandlers(sandbox, { baseUrl: BASE }))
    server.listen({ onUnhandledRequest: 'error' })
  })
  afterAll(async () => {
    server.close()
    await sandbox.close()
  })
  beforeEach(() => sandbox.reset())
  suite(() => controlOf(sandbox, (path, body, signal) => fetch(BASE + path, { method: 'POST', headers: H, body: JSON.stringify(body), signal })))
})

/** The control calls of the test through the sandbox's own `fetch` (as the socket's through HTTP). */
function controlOf(sandbox: Sandbox, f: Transport['fetch']): Transport {
  return {
    name: 'in process',
    fetch: f,
    control: async (path, body, method) => {
      const res = await sandbox.fetch(`http://localhost/_sandbox${path}`, {
        method: method ?? (body === undefined ? 'GET' : 'POST'),
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return res.json()
    },
  }
}
