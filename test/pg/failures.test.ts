import { afterEach, describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { usePostgres } from './use-postgres.js'
import { control, KEY, merchant, until } from './replicas.js'
import { useReplicas } from './use-replicas.js'

// The database is the only state: a replica that dies, or the database going away under load, loses
// nothing that was answered, and the replicas serve again once it is back.
const CLOCK = ['--clock', '2026-01-31T00:00:00']

interface Acked {
  msisdn: string
  verif: string
  sub?: string
}

/**
 * Clients running Init, OTP, Verify flows, each call on the next replica of `targets()`, until
 * stopped. A call that fails ends its flow (it may or may not have happened); what was answered
 * with success is acknowledged. `acked` holds every acknowledged Init, with its subscription once
 * its Verify was answered.
 */
function load(targets: () => Served[], clients = 4) {
  const acked: Acked[] = []
  let next = 0
  let running = true
  const flow = async (k: number) => {
    const r = targets()
    const msisdn = `6012${String(k).padStart(4, '0')}0${String(k % 100).padStart(2, '0')}`
    const init = await merchant(r[k % r.length]!.url, 'init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
    if (init.body.status !== 'SUCCESS') return
    const done: Acked = { msisdn, verif: init.body.payload.verif_request_id }
    acked.push(done)
    const otp = await control(r[(k + 1) % r.length]!.url, `/otp?msisdn=${msisdn}`)
    if (otp.http !== 200) return
    const verify = await merchant(r[(k + 2) % r.length]!.url, 'verify', { verif_request_id: done.verif, otp: otp.body.otp })
    if (verify.body.status === 'SUCCESS') done.sub = verify.body.payload.subscription_id
  }
  const client = async () => {
    while (running) await flow(next++).catch(() => {})
  }
  const all = Promise.all(Array.from({ length: clients }, client))
  return {
    acked,
    subscriptions: () => acked.filter((a) => a.sub).length,
    stop: async () => {
      running = false
      await all
    },
  }
}

/** Every acknowledged Init (its OTP) and Verify (its subscription) read through `base`. */
async function expectKept(base: string, acked: Acked[]) {
  const subs = (await control(base, '/subscriptions?limit=5000')).body.subscriptions as { subscription_id: string; status: string; msisdn: string }[]
  const byId = new Map(subs.map((s) => [s.subscription_id, s]))
  for (const a of acked.filter((x) => x.sub)) expect(byId.get(a.sub!), `subscription ${a.sub}`).toMatchObject({ status: 'ACTIVE', msisdn: a.msisdn })
  const messages = (await control(base, '/messages?limit=5000')).body.messages as { kind: string; verif_request_id?: string }[]
  const otps = new Set(messages.filter((m) => m.kind === 'otp').map((m) => m.verif_request_id))
  for (const a of acked) expect(otps.has(a.verif), `the OTP of verification ${a.verif}`).toBe(true)
}

/** A call that must answer within `seconds` (a hang fails the test with a clear message). */
async function within<T>(seconds: number, what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  try {
    return await call(AbortSignal.timeout(seconds * 1000))
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') throw new Error(`${what} did not answer within ${seconds} s`)
    throw e
  }
}

describe('failures of a replica and of the database', () => {
  const pg = usePostgres()
  const replicas = useReplicas()
  // Before the replicas stop (hooks registered later run first): the database a test stopped is back.
  afterEach(async () => {
    await pg.start()
  })

  const start = (url: string, n: number) => replicas.start(url, n, CLOCK)

  it('a replica SIGKILLed under load loses no acknowledged write, as the survivors and every replica restarted show', async () => {
    const url = await pg.createDatabase('killed')
    const r = await start(url, 3)
    // The replicas a load balancer sends to: the calls in flight to the killed one fail and end their flows.
    let alive = r
    const traffic = load(() => alive)
    await until('flows acknowledged before the kill', async () => traffic.subscriptions() >= 10, 20_000)
    const exited = new Promise((resolve) => r[1]!.child.once('exit', (_code, signal) => resolve(signal)))
    r[1]!.child.kill('SIGKILL')
    alive = [r[0]!, r[2]!]
    expect(await exited).toBe('SIGKILL')
    const atKill = traffic.subscriptions()
    await until('flows acknowledged after the kill', async () => traffic.subscriptions() >= atKill + 10, 20_000)
    await traffic.stop()
    await expectKept(r[0]!.url, traffic.acked)
    await expectKept(r[2]!.url, traffic.acked)

    await replicas.stop(r)
    const again = await start(url, 3)
    for (const x of again) await expectKept(x.url, traffic.acked)
    // And they go on as one sandbox: a flow across the restarted replicas.
    const more = load(() => again, 1)
    await until('a flow after the restart', async () => more.subscriptions() >= 1)
    await more.stop()
  }, 90_000)

  /**
   * Three replicas on database `db` under load, then the database stopped: once every replica's health
   * says so (its answers), the replicas and the load, still running.
   */
  async function stoppedUnderLoad(db: string) {
    const url = await pg.createDatabase(db)
    const r = await start(url, 3)
    const traffic = load(() => r)
    await until('flows acknowledged before the outage', async () => traffic.subscriptions() >= 10, 20_000)
    await pg.stop()
    const healths: Response[] = []
    for (const x of r)
      healths.push(
        await until('health 503 while the database is away', async () => {
          const res = await within(10, 'GET /_sandbox/health', (signal) => fetch(`${x.url}/_sandbox/health`, { signal }))
          return res.status === 503 && res
        }),
      )
    return { r: r as [Served, Served, Served], traffic, healths }
  }

  /** A clock move through `base`, answered (503) within 10 s. */
  const moveClock = (base: string) =>
    within(10, 'a clock move', (signal) =>
      fetch(`${base}/_sandbox/clock/advance`, { method: 'POST', signal, headers: { 'content-type': 'application/json' }, body: '{"by":"P1D"}' }),
    )

  it("the database stopped under load: every call answers the store's error within seconds", async () => {
    const { r, traffic, healths } = await stoppedUnderLoad('outage')
    for (const health of healths) expect(JSON.stringify(await health.json())).toMatch(/database/)
    const [a, b, c] = r
    const init = await within(10, 'an Init', (signal) =>
      fetch(`${a.url}/subscriptions/init`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', 'api-key': KEY },
        body: JSON.stringify({ msisdn: '60129999001', service_code: 'STREAMPLUS', country_code: 'my' }),
      }),
    )
    expect(init.status).toBe(500)
    expect(await init.json()).toMatchObject({ message: 'ERROR', status_code: 500 })
    expect(init.headers.get('x-dcb-reason')).toMatch(/^the change could not be stored \(the database at \S+ cannot be used: .*\); nothing was changed$/)
    const sub = traffic.acked.find((x) => x.sub)!.sub!
    const status = await within(10, 'a Status', (signal) =>
      fetch(`${b.url}/subscriptions/status`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', 'api-key': KEY },
        body: JSON.stringify({ subscription_id: sub }),
      }),
    )
    expect(status.status).toBe(500)
    // A read asked for no change: its reason names the database out of reach and speaks of no change.
    expect(status.headers.get('x-dcb-reason')).toMatch(/^the database at 127\.0\.0\.1:\d+\/outage cannot be reached: /)
    expect(status.headers.get('x-dcb-reason')).not.toMatch(/change|stored/)
    const acked = traffic.acked[0]!.msisdn
    for (const path of ['/subscriptions', '/clock', '/requests', '/sessions', `/otp?msisdn=${acked}`]) {
      const read = await within(10, `GET /_sandbox${path}`, (signal) => fetch(`${c.url}/_sandbox${path}`, { signal }))
      expect(read.status).toBe(503)
      const body = (await read.json()) as { error: string; message: string }
      expect(body.error).toBe('STORE_UNAVAILABLE')
      expect(body.message, `GET /_sandbox${path}`).toMatch(/^the database at \S+ cannot be reached: /)
      expect(body.message, `GET /_sandbox${path}`).not.toMatch(/change|stored/)
    }
    const move = await moveClock(a.url)
    expect(move.status).toBe(503)
    expect(((await move.json()) as { error: string }).error).toBe('STORE_UNAVAILABLE')

    await traffic.stop()
  }, 120_000)

  it('the database back after an outage under load: the replicas serve again, nothing acknowledged lost', async () => {
    const { r, traffic } = await stoppedUnderLoad('outage_over')
    const [a, b, c] = r
    // A clock move while it was away: answered 503, so it did not happen.
    expect((await moveClock(a.url)).status).toBe(503)
    const beforeBack = traffic.subscriptions()
    await pg.start()
    for (const x of r) await until('health 200 once the database is back', async () => (await fetch(`${x.url}/_sandbox/health`)).status === 200, 20_000)
    await until('flows acknowledged after the outage', async () => traffic.subscriptions() >= beforeBack + 10, 20_000)
    await traffic.stop()
    for (const x of r) await expectKept(x.url, traffic.acked)
    // The clock move that answered 503 did not happen.
    expect((await control(b.url, '/clock')).body.now).toBe('2026-01-31T00:00:00.000000')
    expect((await control(c.url, '/health')).body.store).toMatchObject({ kind: 'postgres', schema_version: 1 })
  }, 120_000)
})
