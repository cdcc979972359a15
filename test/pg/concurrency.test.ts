import { describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { usePostgres } from './use-postgres.js'
import { control, liveStream, merchant, until } from './replicas.js'
import { useReplicas } from './use-replicas.js'

// Replicas racing on one database give what one server gives: each decision (a Verify, a renewal, a
// rule's use) is made once, and what one replica changes every other one reports next.
const CLOCK = '2026-01-31T00:00:00'

describe('replicas at once on one database', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  /** `n` replicas on a fresh database of their own (stopped after the test). */
  async function sandbox(db: string, n = 3, args: string[] = ['--clock', CLOCK]): Promise<Served[]> {
    return replicas.start(await pg.createDatabase(db), n, args)
  }

  /** Init through one replica, the OTP read through another: the verification and its OTP. */
  async function initWithOtp(r: Served[], msisdn: string, headers: Record<string, string> = {}) {
    const init = await merchant(r[0]!.url, 'init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, headers)
    expect(init.body.status).toBe('SUCCESS')
    const otp = await control(r[1 % r.length]!.url, `/otp?msisdn=${msisdn}`, undefined, headers)
    expect(otp.http).toBe(200)
    return { id: init.body.payload.verif_request_id as string, otp: otp.body.otp as string }
  }

  /** A subscription made through the replicas in turn: its id. */
  async function subscribe(r: Served[], msisdn: string): Promise<string> {
    const { id, otp } = await initWithOtp(r, msisdn)
    const verify = await merchant(r[2 % r.length]!.url, 'verify', { verif_request_id: id, otp })
    expect(verify.body.status).toBe('SUCCESS')
    return verify.body.payload.subscription_id
  }

  it('concurrent Verifies of one verification on three replicas: one subscription, the others PIN_EXPIRED as on one server', async () => {
    const r = await sandbox('verifies')
    for (let round = 0; round < 10; round++) {
      const msisdn = `601237${String(round).padStart(2, '0')}0${String(round).padStart(2, '0')}`
      const { id, otp } = await initWithOtp(round % 2 ? [r[1]!, r[2]!] : [r[2]!, r[0]!], msisdn)
      const answers = await Promise.all(r.map((x) => merchant(x.url, 'verify', { verif_request_id: id, otp })))
      const won = answers.filter((a) => a.body.status === 'SUCCESS')
      expect(won, JSON.stringify(answers)).toHaveLength(1)
      for (const lost of answers.filter((a) => a !== won[0])) {
        // What a single server answers to a Verify of a verification that was used (merchant-flow.ts).
        expect(lost.http).toBe(200)
        expect(lost.body).toMatchObject({ status: 'FAIL', message: 'PIN_EXPIRED' })
        expect(lost.reason).toBe(`verification request ${id} was used already (SUCCESS)`)
      }
      for (const x of r) {
        const subs = (await control(x.url, `/subscriptions?msisdn=${msisdn}`)).body.subscriptions
        expect(subs.map((s: { subscription_id: string }) => s.subscription_id)).toEqual([won[0]!.body.payload.subscription_id])
      }
    }
  })

  // Two verifications, two rows: only the session's lock orders the two activations. Without it both
  // replicas decide on a state with no ACTIVE subscription and write the same log entry: one Verify is
  // answered HTTP 500 (the entry's key taken), not ALREADY_SUBSCRIBED; numbered apart, two would be ACTIVE.
  it("concurrent Verifies of two verifications of one MSISDN's service on two replicas: one subscription, the other ALREADY_SUBSCRIBED", async () => {
    const r = await sandbox('two_verifies')
    const body = (msisdn: string) => ({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
    for (let round = 0; round < 5; round++) {
      const msisdn = `601237910${String(round).padStart(2, '0')}`
      // Both Inits first: once one Verify has won, an Init is refused ALREADY_SUBSCRIBED itself.
      const verifs: { id: string; otp: string }[] = []
      for (const x of [r[0]!, r[1]!]) {
        const init = await merchant(x.url, 'init', body(msisdn))
        expect(init.body.status).toBe('SUCCESS')
        const id = init.body.payload.verif_request_id as string
        const otp = await control(r[2]!.url, `/otp?verif_request_id=${id}`)
        expect(otp.http).toBe(200)
        verifs.push({ id, otp: otp.body.otp as string })
      }
      expect(verifs[0]!.id).not.toBe(verifs[1]!.id)
      const pair = round % 2 ? [r[1]!, r[0]!] : [r[0]!, r[1]!]
      const answers = await Promise.all(verifs.map((v, i) => merchant(pair[i]!.url, 'verify', { verif_request_id: v.id, otp: v.otp })))
      const won = answers.filter((a) => a.body.status === 'SUCCESS')
      expect(won, JSON.stringify(answers)).toHaveLength(1)
      const sub = won[0]!.body.payload.subscription_id as string
      const lost = answers.find((a) => a !== won[0])!
      // What a single server answers to a Verify for a number that holds an ACTIVE subscription (subscriptions.ts).
      expect(lost.http).toBe(200)
      expect(lost.body).toMatchObject({ status: 'FAIL', message: 'ALREADY_SUBSCRIBED' })
      expect(lost.reason).toBe(`msisdn ${msisdn} has ACTIVE subscription ${sub} to STREAMPLUS`)
      const subs = (await control(r[2]!.url, `/subscriptions?msisdn=${msisdn}`)).body.subscriptions as {
        subscription_id: string
        service_code: string
        status: string
        charges: { outcome: string }[]
      }[]
      const active = subs.filter((s) => s.service_code === 'STREAMPLUS' && s.status === 'ACTIVE')
      expect(active.map((s) => s.subscription_id)).toEqual([sub])
      expect(subs.flatMap((s) => s.charges).filter((c) => c.outcome === 'SUCCESS')).toHaveLength(1)
    }
  })

  it('a clock move through one replica is what every replica reports next', async () => {
    const r = await sandbox('clock')
    const moves = ['PT1H', 'P1D', 'PT90M']
    for (let i = 0; i < moves.length; i++) {
      const moved = await control(r[i]!.url, '/clock/advance', { by: moves[i] })
      expect(moved.http).toBe(200)
      for (const x of r) expect((await control(x.url, '/clock')).body).toEqual(moved.body.clock)
    }
    expect((await control(r[0]!.url, '/clock')).body.now).toBe('2026-02-01T02:30:00.000000')
  })

  /** The subscription's charges and renewal SMS as a merchant sees them (no ids). */
  async function renewalsOf(base: string, sub: string, msisdn: string) {
    const view = (await control(base, `/subscriptions/${sub}`)).body
    const sms = (await control(base, `/sms?msisdn=${msisdn}`)).body.messages as { kind: string; at: string; text: string }[]
    return {
      status: view.status,
      expiry_dt: view.expiry_dt,
      charge_count: view.charge_count,
      charges: view.charges,
      renewal_sms: sms.filter((m) => m.kind === 'renewal').map((m) => ({ at: m.at, text: m.text })),
    }
  }

  it('renewals run once with the timers of three replicas running: the charges one server makes', async () => {
    // From the first of a month, P1M twice reaches two renewal dates.
    const r = await sandbox('renewals', 3, ['--clock', '2026-01-01T00:00:00'])
    const msisdn = '60123780001'
    const sub = await subscribe(r, msisdn)
    expect((await control(r[1]!.url, '/clock/advance', { by: 'P1M' })).http).toBe(200)
    expect((await control(r[2]!.url, '/clock/advance', { by: 'P1M' })).http).toBe(200)

    const one = await replicas.serve(['--in-memory', '--clock', '2026-01-01T00:00:00'])
    const single = await subscribe([one], msisdn)
    await control(one.url, '/clock/advance', { by: 'P1M' })
    await control(one.url, '/clock/advance', { by: 'P1M' })
    const expected = await renewalsOf(one.url, single, msisdn)
    expect(expected.charge_count).toBe(3)
    expect(expected.renewal_sms).toHaveLength(2)
    for (const x of r) expect(await renewalsOf(x.url, sub, msisdn)).toEqual(expected)
  })

  it('a renewal that falls due on a running clock is run by one replica timer, once', async () => {
    const r = await sandbox('timers', 3, ['--clock', CLOCK, '--clock-running'])
    const msisdn = '60123780002'
    const sub = await subscribe(r, msisdn)
    const expiry = (await control(r[0]!.url, `/subscriptions/${sub}`)).body.expiry_dt as string
    // A second before it falls due: the replicas' timers (each ticking every second) race to run it.
    const before = new Date(Date.parse(`${expiry.slice(0, 23)}Z`) - 1000).toISOString().slice(0, 19)
    expect((await control(r[1]!.url, '/clock/set', { to: before })).http).toBe(200)
    await until('the renewal', async () => (await control(r[2]!.url, `/subscriptions/${sub}`)).body.charge_count === 2)
    // Every replica's clock three seconds past the renewal: each timer has had its turns since.
    const later = Date.parse(`${expiry.slice(0, 23)}Z`) + 3000
    for (const x of r) await until('the clock past the renewal', async () => Date.parse(`${(await control(x.url, '/clock')).body.now.slice(0, 23)}Z`) > later)
    for (const x of r) {
      const seen = await renewalsOf(x.url, sub, msisdn)
      expect(seen.charge_count).toBe(2)
      expect(seen.charges.map((c: { kind: string }) => c.kind)).toEqual(['first', 'renewal'])
      expect(seen.renewal_sms).toHaveLength(1)
    }
  })

  /** Rule `once` added through the first replica: it refuses the next Init of `msisdn`. */
  async function addRuleOnce(r: Served[], msisdn: string) {
    const added = await control(r[0]!.url, '/rules', { id: 'once', match: { msisdn }, step: 'init', times: 1, effect: { error: 'NOT_ELIGIBLE' } })
    expect(added.http).toBe(200)
  }

  it('a runtime rule added through one replica applies on the others, used up once', async () => {
    const r = await sandbox('rules')
    const msisdn = '60123780011'
    await addRuleOnce(r, msisdn)
    const body = { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }
    const first = await merchant(r[1]!.url, 'init', body)
    expect(first.body).toMatchObject({ status: 'FAIL', message: 'NOT_ELIGIBLE' })
    // Used up by that Init: the next one, on the third replica, goes through as on one server.
    expect((await merchant(r[2]!.url, 'init', body)).body.status).toBe('SUCCESS')
  })

  it('the runtime rules removed through one replica are gone on the others', async () => {
    const r = await sandbox('rules_removed')
    await addRuleOnce(r, '60123780012')
    const listed = (await control(r[2]!.url, '/rules')).body
    expect(JSON.stringify(listed)).toContain('"once"')
    expect((await control(r[1]!.url, '/rules', undefined, {}, 'DELETE')).http).toBe(200)
    expect(JSON.stringify((await control(r[0]!.url, '/rules')).body)).not.toContain('"once"')
  })

  const TEAM = { 'x-dcb-session': 'team-a' }

  /** A subscription of `msisdn` in session team-a, made through the replicas in turn: its id. */
  async function subscribeInTeam(r: Served[], msisdn: string): Promise<string> {
    const { id, otp } = await initWithOtp(r, msisdn, TEAM)
    const verify = await merchant(r[2]!.url, 'verify', { verif_request_id: id, otp }, TEAM)
    expect(verify.body.status).toBe('SUCCESS')
    return verify.body.payload.subscription_id
  }

  it('a session made on one replica is used through the others, apart from the default session', async () => {
    const r = await sandbox('sessions')
    const msisdn = '60123780021'
    const sub = await subscribeInTeam(r, msisdn)
    expect((await merchant(r[0]!.url, 'status', { subscription_id: sub }, TEAM)).body.status).toBe('SUCCESS')
    // The default session saw nothing of it.
    expect((await control(r[1]!.url, `/sms?msisdn=${msisdn}`)).body.messages).toEqual([])
    expect((await control(r[1]!.url, `/subscriptions/${sub}`)).body.error).toBe('SUBSCRIPTION_NOT_FOUND')
  })

  it('a session reset through one replica is empty on the others', async () => {
    const r = await sandbox('sessions_reset')
    const msisdn = '60123780022'
    const sub = await subscribeInTeam(r, msisdn)
    expect((await control(r[2]!.url, '/reset', {}, TEAM)).http).toBe(200)
    expect((await control(r[0]!.url, `/sms?msisdn=${msisdn}`, undefined, TEAM)).body.messages).toEqual([])
    expect((await control(r[1]!.url, `/subscriptions/${sub}`, undefined, TEAM)).body.error).toBe('SUBSCRIPTION_NOT_FOUND')
  })

  it('a session deleted through one replica starts anew when used through another', async () => {
    const r = await sandbox('sessions_deleted')
    const msisdn = '60123780023'
    await initWithOtp(r, msisdn, TEAM)
    expect((await control(r[2]!.url, '/sessions/team-a', undefined, {}, 'DELETE')).body).toEqual({ deleted: 'team-a' })
    // Used again after its deletion, it starts anew (as on one server): nothing of the old one is left.
    expect((await control(r[0]!.url, `/sms?msisdn=${msisdn}`, undefined, TEAM)).body.messages).toEqual([])
  })

  // Rounds: a replica's one-second timer reads the list of sessions anew, and must not be what this relies on.
  it('GET /_sandbox/sessions on any replica lists the sessions as they are in the database', async () => {
    const r = await sandbox('session_list')
    const row = (base: string, name: string) =>
      control(base, '/sessions').then((a) => (a.body.sessions as { name: string; messages: number }[]).find((s) => s.name === name))
    for (let round = 0; round < 3; round++) {
      const name = `team-${round}`
      const team = { 'x-dcb-session': name }
      const msisdn = `6012378005${round}`
      await merchant(r[0]!.url, 'init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, team)
      expect(await row(r[1]!.url, name)).toMatchObject({ name, messages: 1 })
      expect((await control(r[2]!.url, '/reset', {}, team)).http).toBe(200)
      expect(await row(r[1]!.url, name)).toMatchObject({ name, messages: 0 })
      expect((await control(r[2]!.url, `/sessions/${name}`, undefined, {}, 'DELETE')).http).toBe(200)
      expect(await row(r[1]!.url, name)).toBeUndefined()
      expect((await control(r[0]!.url, `/sessions/${name}`, undefined, {}, 'DELETE')).body.error).toBe('SESSION_NOT_FOUND')
    }
  })

  it('GET /_sandbox/requests on any replica lists what every replica logged', async () => {
    const r = await sandbox('journal')
    const numbers = ['60123780031', '60123780032', '60123780033']
    for (let i = 0; i < 3; i++) await merchant(r[i]!.url, 'init', { msisdn: numbers[i], service_code: 'STREAMPLUS', country_code: 'my' })
    for (const x of r) {
      const listed = await until('every replica’s Init in the request log', async () => {
        const entries = (await control(x.url, '/requests')).body.requests as { msisdn: string; path: string; id: number }[]
        const inits = entries.filter((e) => e.path === '/subscriptions/init')
        return inits.length === 3 && inits
      })
      expect(listed.map((e) => e.msisdn).sort()).toEqual(numbers)
      // One numbering for the session, whichever replica logged the entry.
      expect(new Set(listed.map((e) => e.id)).size).toBe(3)
    }
  })

  it('the live stream of one replica streams what another one does', async () => {
    const r = await sandbox('live')
    const stream = await liveStream(r[0]!.url)
    try {
      await stream.event('hello')
      const msisdn = '60123780041'
      const sub = await subscribe([r[1]!, r[2]!], msisdn)
      expect(await stream.event('subscriptions', (d) => d.ids.includes(sub))).toEqual({ ids: [sub], more: false })
      await stream.event('requests', (d) => d.requests.some((e: { path: string }) => e.path === '/subscriptions/verify'))
      // The Init may come in an earlier frame than the Verify (this replica read the database between them).
      const paths = stream.events.filter((e) => e.event === 'requests').flatMap((e) => e.data.requests.map((q: { path: string }) => q.path))
      expect(paths).toContain('/subscriptions/init')
      const moved = await control(r[2]!.url, '/clock/advance', { by: 'PT1H' })
      expect((await stream.event('clock', (d) => d.clock.now === moved.body.clock.now)).clock).toEqual(moved.body.clock)
    } finally {
      stream.close()
    }
  })

  it('the live stream of one replica streams the SMS another one sends', async () => {
    const r = await sandbox('live_sms', 2)
    const stream = await liveStream(r[0]!.url)
    try {
      await stream.event('hello')
      const msisdn = '60123780042'
      await merchant(r[1]!.url, 'init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
      // The Init's request log entry arrives: the SMS, sent before it was answered, would have too.
      await stream.event('requests', (d) => d.requests.some((e: { msisdn: string }) => e.msisdn === msisdn))
      await until('the OTP on this replica', async () => (await control(r[0]!.url, `/sms?msisdn=${msisdn}`)).body.messages.length === 1)
      expect(stream.events.filter((e) => e.event === 'sms').map((e) => e.data.message.msisdn)).toEqual([msisdn])
    } finally {
      stream.close()
    }
  })
})
