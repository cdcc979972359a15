import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DcbClient } from '../../src/client/index.js'
import { DEMO_API_KEY } from '../../src/contract/defaults.js'
import { createControlOperations } from '../../src/control/operations.js'
import { Engine } from '../../src/core/engine.js'
import { CONTROL_ERRORS, SandboxError, statusOf } from '../../src/core/errors.js'
import { parseTimestamp } from '../../src/core/time.js'
import { loadWorld } from '../../src/world/load.js'
import { RequestLog } from '../../src/runtime/request-log.js'
import { useSandbox } from '../helpers.js'

const world = loadWorld([]).world

/** The operations over a fresh engine (clock frozen) and request log: no HTTP anywhere. */
function inProcess() {
  const engine = new Engine({ world, clockStart: { at: parseTimestamp('2026-01-31T00:00:00'), frozen: true } })
  const journal = new RequestLog(10)
  const ops = createControlOperations({ engine, requestLog: journal, version: '1.2.3' })
  const init = (msisdn: string) =>
    engine.init(engine.authenticate(DEMO_API_KEY)!, { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: 'http://x' })
  return { engine, journal, ops, init }
}

/** The error an operation throws (fails the test when it answers). */
async function refusal(p: Promise<unknown>): Promise<SandboxError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  )
  expect(e).toBeInstanceOf(SandboxError)
  return e as SandboxError
}

describe('control operations in-process', () => {
  it('otp, verify, subscriptions, subscription, cancel: the control API answers as typed values', async () => {
    const { ops, init, engine } = inProcess()
    expect(await refusal(ops.otp('60123456001'))).toMatchObject({ code: 'NO_OTP', status: 404 })
    const i = await init('60123456001')
    const otp = await ops.otp('60123456001')
    expect(otp).toMatchObject({ msisdn: '60123456001', verif_request_id: (i.payload as { verif_request_id: string }).verif_request_id })
    await engine.verify(engine.authenticate(DEMO_API_KEY)!, { verif_request_id: otp.verif_request_id, otp: otp.otp })
    const [sub] = (await ops.subscriptions({ msisdn: '60123456001' })).subscriptions
    expect(sub).toMatchObject({ status: 'ACTIVE', merchant: 'demo', charges: [{ kind: 'first', outcome: 'SUCCESS' }] })
    expect((await ops.subscription(sub!.subscription_id)).subscription_id).toBe(sub!.subscription_id)
    expect((await ops.cancel(sub!.subscription_id)).status).toBe('CANCELED')
    expect(await refusal(ops.cancel(sub!.subscription_id))).toMatchObject({ code: 'ALREADY_CANCELED', status: 409 })
    expect(await refusal(ops.subscription('nope'))).toMatchObject({ code: 'SUBSCRIPTION_NOT_FOUND', status: 404 })
    expect((await ops.sms('60123456001')).messages.map((m) => m.kind)).toContain('otp')
  })

  it('otp waits for one with { wait }', async () => {
    const { ops, init } = inProcess()
    const waiting = ops.otp('60123456002', { wait: 5 })
    await init('60123456002')
    expect((await waiting).msisdn).toBe('60123456002')
  })

  it('otp gives up waiting when the signal aborts', async () => {
    const { ops } = inProcess()
    const abort = new AbortController()
    const given = ops.otp('60123456003', { wait: 60, signal: abort.signal })
    abort.abort()
    expect(await refusal(given)).toMatchObject({ code: 'NO_OTP' })
  })

  it('mo subscribes by keyword', async () => {
    const { ops } = inProcess()
    expect(await ops.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' })).toMatchObject({ action: 'subscribed', service_code: 'STREAMPLUS' })
  })

  it('mo refuses an MSISDN that is none', async () => {
    const { ops } = inProcess()
    expect(await refusal(ops.mo({ msisdn: '999', short_code: '32123', text: 'STREAM' }))).toMatchObject({ code: 'INVALID_MSISDN', status: 400 })
  })

  /** Operations with rule r1 added. */
  const withRule = async () => {
    const { ops } = inProcess()
    const rule = await ops.rules.add({ id: 'r1', match: { msisdn: '60123456011' }, step: 'charge', effect: { error: 'BARRED' } })
    return { ops, rule }
  }

  it('rules.add adds a rule', async () => {
    const { rule } = await withRule()
    expect(rule).toMatchObject({ id: 'r1', used: 0 })
  })

  it('rules.add refuses an id it has (409)', async () => {
    const { ops } = await withRule()
    expect(await refusal(ops.rules.add({ id: 'r1', step: 'init' }))).toMatchObject({ code: 'RULE_EXISTS', status: 409 })
  })

  it('rules.list lists the runtime rules', async () => {
    const { ops } = await withRule()
    expect((await ops.rules.list()).runtime.map((r) => r.id)).toEqual(['r1'])
  })

  it('rules.remove removes a rule', async () => {
    const { ops } = await withRule()
    expect(await ops.rules.remove('r1')).toEqual({ deleted: 1 })
  })

  it('rules.remove refuses a rule removed already (404)', async () => {
    const { ops } = await withRule()
    await ops.rules.remove('r1')
    expect(await refusal(ops.rules.remove('r1'))).toMatchObject({ code: 'RULE_NOT_FOUND', status: 404 })
  })

  it('rules.clear removes every rule', async () => {
    const { ops } = await withRule()
    await ops.rules.remove('r1')
    await ops.rules.add({ step: 'init', effect: { error: 'BARRED' } })
    expect(await ops.rules.clear()).toEqual({ deleted: 1 })
  })

  const subscribedByMo = async () => {
    const { ops } = inProcess()
    await ops.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' })
    return ops
  }

  it('the clock: now answers the time', async () => {
    const ops = await subscribedByMo()
    expect((await ops.now()).now).toBe('2026-01-31T00:00:00.000000')
  })

  it('the clock: advance runs what falls due, answered as plain JSON', async () => {
    const ops = await subscribedByMo()
    const moved = await ops.advance('P1M')
    expect(moved.clock.now).toBe('2026-02-28T00:00:00.000000')
    expect(JSON.parse(JSON.stringify(moved))).toEqual({ clock: moved.clock, events: moved.events })
    expect(moved.events.map((e) => e.type)).toContain('renewed')
  })

  it('the clock: refuses a move backwards (409)', async () => {
    const ops = await subscribedByMo()
    await ops.advance('P1M')
    expect(await refusal(ops.setTime('2026-01-01T00:00:00'))).toMatchObject({ code: 'CLOCK_BACKWARDS', status: 409 })
  })

  it('the clock: refuses a bad duration (400)', async () => {
    const ops = await subscribedByMo()
    expect(await refusal(ops.advance('soon'))).toMatchObject({ code: 'BAD_DURATION', status: 400 })
  })

  it('refuses a bad argument by name, as the control API does (BAD_REQUEST)', async () => {
    const { ops } = inProcess()
    expect(await refusal(ops.advance(''))).toMatchObject({ code: 'BAD_REQUEST', status: 400, message: 'by: expected a duration such as P1M or 36h' })
    expect(await refusal(ops.otp('60123456001', { wait: 500 }))).toMatchObject({
      code: 'BAD_REQUEST',
      message: 'wait: expected a number of seconds from 0 to 120',
    })
    expect(await refusal(ops.mo({ msisdn: '60133456001', short_code: '', text: 'x' }))).toMatchObject({
      message: 'short_code: expected a short code, e.g. 32123',
    })
    expect(await refusal(ops.requests({ limit: 0 }))).toMatchObject({ message: 'limit: expected a positive whole number' })
  })

  it('health answers ok with the version, the time', async () => {
    const { ops } = inProcess()
    expect(await ops.health()).toMatchObject({ ok: true, version: '1.2.3', now: '2026-01-31T00:00:00.000000' })
  })

  it('scenarios lists the scenarios', async () => {
    const { ops } = inProcess()
    expect((await ops.scenarios()).scenarios.length).toBeGreaterThan(10)
  })

  const oneRequest = () => {
    const { ops, journal, init } = inProcess()
    journal.add({
      time: 0,
      sandbox_time: 0,
      method: 'POST',
      path: '/x',
      ip: null,
      merchant: null,
      http_status: 200,
      message: '',
      duration_ms: 1,
      request: null,
      response: null,
    })
    return { ops, init }
  }

  it('requests lists the request log', async () => {
    const { ops } = oneRequest()
    expect((await ops.requests()).requests).toHaveLength(1)
  })

  it('reset clears the clock, the request log, the messages', async () => {
    const { ops, init } = oneRequest()
    await init('60123456001')
    expect(await ops.reset()).toMatchObject({ ok: true, clock: { now: '2026-01-31T00:00:00.000000' } })
    expect((await ops.requests()).requests).toEqual([])
    expect((await ops.sms('60123456001')).messages).toEqual([])
  })
})

describe('the HTTP client: the same operations over the control API', () => {
  const c = useSandbox({ clock: '2026-01-31T00:00:00' })
  const client = () => new DcbClient({ baseUrl: c.url, apiKey: DEMO_API_KEY })

  it('answers what the in-process operations answer', async () => {
    const http = client()
    const local = c.sandbox.sessions.default.operations
    expect(await http.now()).toEqual(await local.now())
    expect(await http.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' })).toMatchObject({ action: 'subscribed' })
    expect(await http.subscriptions({ msisdn: '60133456001' })).toEqual(await local.subscriptions({ msisdn: '60133456001' }))
    expect(await http.rules.add({ id: 'r2', step: 'init', match: { ending: '099' }, effect: { error: 'BARRED' } })).toMatchObject({ id: 'r2' })
    expect((await http.rules.list()).runtime.map((r) => r.id)).toEqual(['r2'])
    expect(await http.rules.remove('r2')).toEqual({ deleted: 1 })
    expect((await http.advance('P1M')).clock.now).toBe('2026-02-28T00:00:00.000000')
    expect(await http.requests({ limit: 1 })).toMatchObject({ requests: [{ path: '/_sandbox/clock/advance' }] })
  })

  it('throws the same SandboxError as the in-process operations', async () => {
    const http = client()
    await http.rules.add({ id: 'r2', step: 'init', match: { ending: '099' }, effect: { error: 'BARRED' } })
    await http.rules.remove('r2')
    expect(await refusal(http.rules.remove('r2'))).toMatchObject({ code: 'RULE_NOT_FOUND', status: 404 })
    expect(await refusal(http.otp('60123456009'))).toMatchObject({ code: 'NO_OTP', status: 404 })
    expect(await refusal(http.advance(''))).toMatchObject({ code: 'BAD_REQUEST', status: 400, message: 'by: expected a duration such as P1M or 36h' })
  })
})

describe('the control error table', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : f.endsWith('.ts') ? [join(dir, f)] : []))

  it('one error class stands for refusals', () => {
    for (const file of files('src')) expect(readFileSync(file, 'utf8'), file).not.toMatch(/class (ControlError|SessionError)\b/)
  })

  it('every code src throws is in the table (its status comes from there only)', () => {
    const uses: string[] = []
    for (const file of files('src')) {
      const text = readFileSync(file, 'utf8')
      for (const m of text.matchAll(/new SandboxError\(\s*'([A-Z_]+)'/g)) {
        uses.push(m[1]!)
        expect(Object.keys(CONTROL_ERRORS), file).toContain(m[1])
        expect(statusOf(m[1]!)).toBe(CONTROL_ERRORS[m[1] as keyof typeof CONTROL_ERRORS].status)
      }
    }
    expect(uses.length).toBeGreaterThan(5)
    for (const [code, { status }] of Object.entries(CONTROL_ERRORS)) expect(new SandboxError(code, 'x').status).toBe(status)
  })
})
