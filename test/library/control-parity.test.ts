/**
 * Every typed control function, of the library (`createSandbox`) and of the HTTP client (against a
 * real server over loopback), answers what the control API answers for the same call: one script of
 * calls runs twice on twin sandboxes (frozen clock), once through the typed functions and once as
 * the raw requests written out here by hand, and the two transcripts are equal. Refusals compare as
 * `{ error, status }`. Ids are random, so each transcript names them in order of first appearance.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { DcbClient } from '../../src/client/index.js'
import { OPERATION_NAMES, type OperationName } from '../../src/contract/calls.js'
import type { ControlOperations, Rule } from '../../src/contract/operations.js'
import { createSandbox, SandboxError } from '../../src/index.js'
import { startSandbox, type RunningSandbox } from '../../src/server.js'

const CLOCK = '2026-01-31T00:00:00'
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
const M = '60123456001'
const KEY = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }

/** What a twin remembers between steps (ids it made). */
interface Ctx {
  sub?: string
  otp?: string
  verif?: string
}

interface Step {
  op: OperationName
  /** The typed call. */
  typed(ops: ControlOperations, ctx: Ctx): Promise<unknown>
  /** The same call written as the control API's request (path under /_sandbox). */
  raw(ctx: Ctx): { method: 'GET' | 'POST' | 'DELETE'; path: string; body?: unknown }
}

const step = (op: OperationName, typed: Step['typed'], raw: Step['raw']): Step => ({ op, typed, raw })
const get = (path: string) => ({ method: 'GET' as const, path })
const post = (path: string, body: unknown = {}) => ({ method: 'POST' as const, path, body })
const del = (path: string) => ({ method: 'DELETE' as const, path })

const RULE: Rule = { id: 'r1', match: { msisdn: '60123456011' }, step: 'charge', effect: { error: 'BARRED' } }

const SCRIPT: Step[] = [
  step(
    'health',
    (o) => o.health(),
    () => get('/health'),
  ),
  step(
    'scenarios',
    (o) => o.scenarios(),
    () => get('/scenarios'),
  ),
  step(
    'world',
    (o) => o.world(),
    () => get('/world'),
  ),
  step(
    'worldSources',
    (o) => o.worldSources(),
    () => get('/world?sources=1'),
  ),
  step(
    'otp',
    (o) => o.otp('60123456999'),
    () => get('/otp?msisdn=60123456999'),
  ),
  step(
    'otp',
    (o) => o.otp(M),
    () => get(`/otp?msisdn=${M}`),
  ),
  step(
    'otp',
    (o) => o.otp(M, { wait: 1 }),
    () => get(`/otp?msisdn=${M}&wait=1`),
  ),
  step(
    'otp',
    (o, ctx) => o.otp({ verif_request_id: ctx.verif! }),
    (ctx) => get(`/otp?verif_request_id=${ctx.verif}`),
  ),
  step(
    'otp',
    (o) => o.otp({ verif_request_id: 'nope' }),
    () => get('/otp?verif_request_id=nope'),
  ),
  step(
    'sms',
    (o) => o.sms(M),
    () => get(`/sms?msisdn=${M}`),
  ),
  step(
    'sms',
    (o) => o.sms('abc'),
    () => get('/sms?msisdn=abc'),
  ),
  step(
    'messages',
    (o) => o.messages(),
    () => get('/messages'),
  ),
  step(
    'messages',
    (o) => o.messages({ msisdn: M, limit: 1 }),
    () => get(`/messages?msisdn=${M}&limit=1`),
  ),
  step(
    'mo',
    (o) => o.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' }),
    () => post('/mo', { msisdn: '60133456001', short_code: '32123', text: 'STREAM' }),
  ),
  step(
    'mo',
    (o) => o.mo({ msisdn: '1', short_code: '32123', text: 'STREAM' }),
    () => post('/mo', { msisdn: '1', short_code: '32123', text: 'STREAM' }),
  ),
  step(
    'subscriptions',
    (o) => o.subscriptions(),
    () => get('/subscriptions'),
  ),
  step(
    'subscriptions',
    (o) => o.subscriptions({ msisdn: M, status: 'ACTIVE' }),
    () => get(`/subscriptions?msisdn=${M}&status=ACTIVE`),
  ),
  step(
    'subscriptions',
    (o) => o.subscriptions({ merchant: 'demo', service: 'STREAMPLUS', limit: 1 }),
    () => get('/subscriptions?merchant=demo&service=STREAMPLUS&limit=1'),
  ),
  step(
    'subscription',
    (o, c) => o.subscription(c.sub!),
    (c) => get(`/subscriptions/${c.sub}`),
  ),
  step(
    'subscription',
    (o) => o.subscription('no such/id'),
    () => get('/subscriptions/no%20such%2Fid'),
  ),
  step(
    'requests',
    (o) => o.requests(),
    () => get('/requests'),
  ),
  step(
    'requests',
    (o) => o.requests({ msisdn: M }),
    () => get(`/requests?msisdn=${M}`),
  ),
  step(
    'requests',
    (o) => o.requests({ msisdn: '60133456001', limit: 5, since: 1 }),
    () => get('/requests?msisdn=60133456001&limit=5&since=1'),
  ),
  step(
    'coverage',
    (o) => o.coverage(),
    () => get('/coverage'),
  ),
  step(
    'coverage',
    (o) => o.coverage({ merchant: 'other' }),
    () => get('/coverage?merchant=other'),
  ),
  step(
    'coverage',
    (o) => o.coverage({ merchant: 'nobody' }),
    () => get('/coverage?merchant=nobody'),
  ),
  step(
    'cancel',
    (o, c) => o.cancel(c.sub!),
    (c) => post(`/subscriptions/${c.sub}/cancel`),
  ),
  step(
    'cancel',
    (o, c) => o.cancel(c.sub!),
    (c) => post(`/subscriptions/${c.sub}/cancel`),
  ),
  step(
    'now',
    (o) => o.now(),
    () => get('/clock'),
  ),
  step(
    'advance',
    (o) => o.advance('P1D'),
    () => post('/clock/advance', { by: 'P1D' }),
  ),
  step(
    'advance',
    (o) => o.advance('soon'),
    () => post('/clock/advance', { by: 'soon' }),
  ),
  step(
    'setTime',
    (o) => o.setTime('2026-03-01T00:00:00'),
    () => post('/clock/set', { to: '2026-03-01T00:00:00' }),
  ),
  step(
    'setTime',
    (o) => o.setTime('2020-01-01T00:00:00'),
    () => post('/clock/set', { to: '2020-01-01T00:00:00' }),
  ),
  step(
    'rules.add',
    (o) => o.rules.add(RULE),
    () => post('/rules', RULE),
  ),
  step(
    'rules.add',
    (o) => o.rules.add(RULE),
    () => post('/rules', RULE),
  ),
  step(
    'rules.list',
    (o) => o.rules.list(),
    () => get('/rules'),
  ),
  step(
    'rules.remove',
    (o) => o.rules.remove('r1'),
    () => del('/rules/r1'),
  ),
  step(
    'rules.remove',
    (o) => o.rules.remove('r1'),
    () => del('/rules/r1'),
  ),
  step(
    'rules.add',
    (o) => o.rules.add({ ...RULE, id: 'r2' }),
    () => post('/rules', { ...RULE, id: 'r2' }),
  ),
  step(
    'rules.clear',
    (o) => o.rules.clear(),
    () => del('/rules'),
  ),
  step(
    'reset',
    (o) => o.reset({ clock: '2026-02-01T00:00:00', frozen: true }),
    () => post('/reset', { clock: '2026-02-01T00:00:00', frozen: true }),
  ),
  step(
    'reset',
    (o) => o.reset(),
    () => post('/reset'),
  ),
  step(
    'now',
    (o) => o.now(),
    () => get('/clock'),
  ),
]

/** A twin sandbox: its typed operations, a raw control call, and a merchant call (to make state). */
interface Twin {
  ops: ControlOperations
  raw(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>
  merchant(path: string, body: unknown): Promise<any>
}

/** An OTP subscription made the same way in a twin (through the merchant API, not compared). */
async function subscribe(t: Twin, ctx: Ctx): Promise<void> {
  const init = await t.merchant('/subscriptions/init', { msisdn: M, service_code: 'STREAMPLUS', country_code: 'my' })
  ctx.verif = init.payload.verif_request_id
  ctx.otp = (await t.raw('GET', `/otp?msisdn=${M}`)).json.otp
  const verified = await t.merchant('/subscriptions/verify', { verif_request_id: ctx.verif, otp: ctx.otp })
  ctx.sub = verified.payload.subscription_id
}

/** One transcript: each step's answer (or refusal), ids named in order, volatile fields out. */
async function transcript(t: Twin, how: 'typed' | 'raw'): Promise<unknown[]> {
  const ctx: Ctx = {}
  await subscribe(t, ctx)
  const ids = new Map<string, string>()
  const out: unknown[] = []
  for (const s of SCRIPT) {
    let answer: unknown
    if (how === 'typed') {
      try {
        answer = await s.typed(t.ops, ctx)
      } catch (e) {
        if (!(e instanceof SandboxError)) throw e
        answer = { error: e.code, status: e.status }
      }
    } else {
      const r = s.raw(ctx)
      const { status, json } = await t.raw(r.method, r.path, r.body)
      answer = status === 200 ? json : { error: json.error, status }
    }
    const text = JSON.stringify(answer, (k, v) => (k === 'time' || k === 'duration_ms' || k === 'memory_mib' || k === 'store' ? undefined : v))
    // The OTP is random too: named where it shows (the answer, the SMS text, the Verify body in the request log).
    const named = text.replace(new RegExp(`("otp":"|code is )${ctx.otp}\\b`, 'g'), '$1<otp>')
    out.push([s.op, JSON.parse(named.replace(UUID, (id) => ids.get(id) ?? (ids.set(id, `<id${ids.size + 1}>`), ids.get(id)!)))])
  }
  return out
}

describe('the typed control functions answer what the control API answers', () => {
  it('the script calls every typed control function', () => {
    expect([...new Set(SCRIPT.map((s) => s.op))].sort()).toEqual([...OPERATION_NAMES].sort())
  })

  it('the library (createSandbox): typed functions answer as sandbox.fetch of the same calls does', async () => {
    const twin = async (): Promise<Twin> => {
      const sandbox = await createSandbox({ clock: CLOCK })
      const json = async (res: Response) => ({ status: res.status, json: await res.json() })
      return {
        ops: sandbox,
        raw: async (method, path, body) =>
          json(
            await sandbox.fetch(`http://localhost/_sandbox${path}`, {
              method,
              ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
            }),
          ),
        merchant: async (path, body) => (await sandbox.fetch(`http://localhost${path}`, { method: 'POST', headers: KEY, body: JSON.stringify(body) })).json(),
      }
    }
    const typed = await transcript(await twin(), 'typed')
    expect(typed.length).toBe(SCRIPT.length)
    expect(await transcript(await twin(), 'raw')).toEqual(typed)
  })

  const servers: RunningSandbox[] = []
  afterAll(async () => {
    for (const s of servers) await s.close()
  })

  it('the HTTP client (DcbClient over loopback): typed functions answer as fetch of the same calls does', async () => {
    const twin = async (): Promise<Twin> => {
      const server = await startSandbox({ port: 0, host: '127.0.0.1', inMemory: true, clock: CLOCK })
      servers.push(server)
      const client = new DcbClient({ baseUrl: server.url, apiKey: 'sandbox-demo-key' })
      return {
        ops: client,
        raw: async (method, path, body) => {
          const res = await fetch(`${server.url}/_sandbox${path}`, {
            method,
            ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
          })
          return { status: res.status, json: await res.json() }
        },
        merchant: async (path, body) => (await fetch(server.url + path, { method: 'POST', headers: KEY, body: JSON.stringify(body) })).json(),
      }
    }
    const typed = await transcript(await twin(), 'typed')
    expect(await transcript(await twin(), 'raw')).toEqual(typed)
  })
})
