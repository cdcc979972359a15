import pg from 'pg'
import { beforeAll, describe, expect, it } from 'vitest'
import { State, type Change } from '../../src/core/state.js'
import type { Served } from '../cli/run.js'
import { usePostgres } from './use-postgres.js'
import { control, merchant, until } from './replicas.js'
import { useReplicas } from './use-replicas.js'

// Three replicas of `dcb serve --store` on one real PostgreSQL act as one sandbox.
describe('replicas on one database', () => {
  const db = usePostgres()
  const replicas = useReplicas()
  let r: Served[]
  beforeAll(async () => {
    r = await replicas.start(await db.createDatabase('flows'), 3, ['--clock', '2026-01-31T00:00:00'])
  }, 60_000)

  it('an OTP flow with each call on another replica: read-your-writes across them', async () => {
    const init = await merchant(r[0]!.url, 'init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    expect(init.body.status).toBe('SUCCESS')
    const id = init.body.payload.verif_request_id
    const otp = await control(r[1]!.url, '/otp?msisdn=60123456001')
    expect(otp.http).toBe(200)
    const verify = await merchant(r[2]!.url, 'verify', { verif_request_id: id, otp: otp.body.otp })
    expect(verify.body.status).toBe('SUCCESS')
    const sub = verify.body.payload.subscription_id
    const status = await merchant(r[0]!.url, 'status', { subscription_id: sub })
    expect(status.body.status).toBe('SUCCESS')
    expect(status.body.payload.subscription_status ?? status.body.payload.status).toBe('ACTIVE')
    for (const x of r) expect((await control(x.url, `/subscriptions/${sub}`)).body.status).toBe('ACTIVE')
  })
  it('a Status decided by a counting rule takes the lock: a rule for two Status calls fails two, through different replicas, then answers', async () => {
    const msisdn = '60123456043'
    const rule = { id: 'status-twice', match: { msisdn }, step: 'status', times: 2, effect: { http: 500 } }
    expect((await control(r[2]!.url, '/rules', rule)).http).toBe(200)
    const init = await merchant(r[0]!.url, 'init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
    const otp = (await control(r[1]!.url, `/otp?msisdn=${msisdn}`)).body.otp
    const sub = (await merchant(r[2]!.url, 'verify', { verif_request_id: init.body.payload.verif_request_id, otp })).body.payload.subscription_id
    const answers = []
    for (const x of [r[0]!, r[1]!, r[2]!]) answers.push(await merchant(x.url, 'status', { subscription_id: sub }))
    expect(answers.map((a) => a.http)).toEqual([500, 500, 200])
    for (const a of answers.slice(0, 2)) expect(a.reason ?? '').not.toMatch(/could not be stored/)
  })

  it('the log holds each changed record whole: a replica of the version before (a rolling upgrade) reads every change as this one does', async () => {
    const session = { 'x-dcb-session': 'rolling' }
    // A renewal that fails and is retried, a wrong OTP, a rule counting its uses, a cancellation: each changes records already there.
    const rule = { match: { ending: '302' }, step: 'retry', times: 1, effect: { error: 'INSUFFICIENT_FUNDS' } }
    expect((await control(r[2]!.url, '/rules', rule, session)).http).toBe(200)
    const subs: string[] = []
    for (const [i, msisdn] of ['60123456302', '60123456002'].entries()) {
      const init = await merchant(r[i]!.url, 'init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, session)
      const otp = (await control(r[i + 1]!.url, `/otp?msisdn=${msisdn}`, undefined, session)).body.otp
      const id = init.body.payload.verif_request_id
      expect((await merchant(r[i]!.url, 'verify', { verif_request_id: id, otp: otp === '0000' ? '1111' : '0000' }, session)).body.status).toBe('FAIL')
      subs.push((await merchant(r[i + 1]!.url, 'verify', { verif_request_id: id, otp }, session)).body.payload.subscription_id)
    }
    expect((await control(r[0]!.url, '/clock/advance', { by: 'P3M' }, session)).http).toBe(200)
    expect((await control(r[1]!.url, `/subscriptions/${subs[1]}/cancel`, {}, session)).http).toBe(200)
    const { rows } = await db.query(`SELECT changes FROM dcb_changes WHERE session = 'rolling' ORDER BY seq`, [], 'flows')
    // The version before applies a change's `v` as the record (it knows no fields-only changes).
    const here = new State()
    const before = new State()
    for (const row of rows)
      for (const change of JSON.parse(row.changes) as Change[]) {
        here.apply(change)
        const { merge: _, ...asBefore } = change as Change & { merge?: true }
        before.apply(asBefore as Change)
      }
    expect(here.subs.size).toBe(2)
    expect([...here.subs.values()].map((s) => s.charge_count)).toEqual([expect.any(Number), 4])
    for (const c of ['subs', 'verifs', 'rules'] as const) expect(before[c]).toEqual(here[c])
  })
})

// A SIGTERM while turns are under way: the replica waits for the turns queued (their answers go out) and exits.
describe('a replica stopped while it writes', () => {
  const db = usePostgres()
  const replicas = useReplicas()

  it('stops cleanly on SIGTERM while a turn waits for the session lock: exit 0, every acknowledged write kept', async () => {
    const url = await db.createDatabase('stopping')
    const [one] = await replicas.start(url, 1)
    const body = { msisdn: '60123457001', service_code: 'STREAMPLUS', country_code: 'my' }
    const stored = await merchant(one!.url, 'init', body)
    expect(stored.body.status).toBe('SUCCESS')
    // Another client holds the default session's lock: the replica's next turn waits for it.
    const holder = new pg.Client({ connectionString: url })
    await holder.connect()
    await holder.query('BEGIN')
    await holder.query(`SELECT pg_advisory_xact_lock(4242, hashtext('default'))`)
    try {
      const waiting = merchant(one!.url, 'init', { ...body, msisdn: '60123457002' }).catch(() => null)
      await until(
        'the replica waits in its turn',
        async () => (await holder.query(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rows[0].n > 0,
      )
      const stopping = one!.stop('SIGTERM')
      await holder.query('ROLLBACK')
      expect(await stopping).toBe(0)
      await waiting
    } finally {
      await holder.end()
    }
    const [again] = await replicas.start(url, 1)
    const verify = await merchant(again!.url, 'verify', { verif_request_id: stored.body.payload.verif_request_id, otp: '000000' })
    // A stored verification answers a wrong OTP as such, not as an unknown id.
    expect(verify.reason ?? '').not.toMatch(/is unknown/)
  })

  it('a SIGTERM right after a Status writes its coverage count before exiting', async () => {
    const url = await db.createDatabase('counts')
    const [one] = await replicas.start(url, 1)
    // A Status's count waits for the replica's next turn: none comes before the signal.
    expect((await merchant(one!.url, 'status', { subscription_id: 'no-such-subscription' })).body.message).toBe('SUBSCRIPTION_NOT_FOUND')
    expect(await one!.stop('SIGTERM')).toBe(0)
    const [again] = await replicas.start(url, 1)
    const report = (await control(again!.url, '/coverage?merchant=demo')).body.coverage[0]
    expect(report.outcomes.find((o: { id: string }) => o.id === 'status.SUBSCRIPTION_NOT_FOUND').count).toBe(1)
  })
})
