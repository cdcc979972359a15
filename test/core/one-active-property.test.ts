/**
 * A property test of the one-subscription rule, through the engine on a frozen (injected) clock:
 * random sequences of OTP, consent and PSMS flows (a bare MO, or a merchant's Init then the MO it
 * asks for, at once or steps later), STOPs, clock moves (carrier renewals, retries and rule cancels),
 * control API cancels, runtime rules and seeds, each checked after every step:
 *   - at most one subscription of an MSISDN to a service is ACTIVE;
 *   - no two successful charges of an MSISDN and service pay for overlapping time (a charge pays
 *     from when it is made to the next charge of its subscription, or its expiry, cut at its cancel).
 * The PRNG is seeded; a failure names the seed and the steps. Run one seed alone with
 * DCB_PROPERTY_SEED=N (and DCB_PROPERTY_RUNS for more sequences).
 */
import { describe, expect, it } from 'vitest'
import { Engine, SandboxError } from '../../src/core/engine.js'
import type { SubscriptionRecord } from '../../src/core/state.js'
import { build } from './harness.js'

/** mulberry32: a small seeded PRNG (no dependency), the same sequence for the same seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// Few numbers, so that flows meet: the renewal endings (first fails / retried / every one fails), a carrier cancel, a plain one.
const OTP = ['60123456001', '60123456302', '60123456303', '60123456301']
const PSMS = ['60133456001', '60133456302', '60133456303', '60133456401']
const REDIRECT = ['359881234001', '359881234302']
const MY_SERVICES = ['STREAMPLUS', 'QUICKTEST', 'GAMECLUB']
const KEYWORDS = ['STREAM', 'QUICK', 'GAME']
const MOVES = ['PT30M', 'PT1H', 'PT2H', 'PT6H', 'P1D', 'P1D', 'P2D', 'P1W', 'P1M']
const RULES: Record<string, unknown>[] = [
  { step: 'renewal', effect: { error: 'INSUFFICIENT_FUNDS' } },
  { step: 'renewal', nth: 1, effect: { error: 'INSUFFICIENT_FUNDS' } },
  { step: ['renewal', 'retry'], effect: { error: 'SPENDING_LIMIT_REACHED' } },
  { step: 'retry', effect: { error: 'INSUFFICIENT_FUNDS' } },
  { step: 'activate', effect: { cancel_after: 'PT2H' } },
  { step: 'charge', effect: { error: 'INSUFFICIENT_FUNDS' } },
]

type Step =
  | { op: 'otp'; msisdn: string; service: string }
  | { op: 'init'; msisdn: string; service: string; country: string }
  | { op: 'verify'; pick: number }
  | { op: 'consent'; pick: number; deny: boolean }
  | { op: 'mo'; msisdn: string; keyword: string }
  | { op: 'psms'; msisdn: string; service: string; mo: 'now' | 'later' }
  | { op: 'confirm'; pick: number }
  | { op: 'stop'; msisdn: string; keyword: string | null }
  | { op: 'advance'; by: string }
  | { op: 'cancel'; pick: number }
  | { op: 'rule'; msisdn: string; rule: number }
  | { op: 'unrule'; pick: number }
  | { op: 'seed'; msisdn: string; service: string }

/**
 * The steps of one seed. The PSMS Inits (and their later MOs) come from a second stream, put between
 * the other steps: those are drawn as they were before the Inits were added, so a seed still plays them.
 */
function randomSteps(seed: number): Step[] {
  const rand = prng(seed)
  const one = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!
  const pick = () => Math.floor(rand() * 1000)
  const n = 30 + Math.floor(rand() * 31)
  const steps: Step[] = []
  for (let i = 0; i < n; i++) {
    const r = rand()
    if (r < 0.13) steps.push({ op: 'otp', msisdn: one(OTP), service: one(MY_SERVICES) })
    else if (r < 0.22) {
      const redirect = rand() < 0.5
      steps.push({ op: 'init', msisdn: one(redirect ? REDIRECT : OTP), service: redirect ? 'STREAMPLUS' : one(MY_SERVICES), country: redirect ? 'bg' : 'my' })
    } else if (r < 0.3) steps.push({ op: 'verify', pick: pick() })
    else if (r < 0.37) steps.push({ op: 'consent', pick: pick(), deny: rand() < 0.2 })
    else if (r < 0.5) steps.push({ op: 'mo', msisdn: one(PSMS), keyword: one(KEYWORDS) })
    else if (r < 0.55) steps.push({ op: 'stop', msisdn: one(PSMS), keyword: rand() < 0.5 ? one(KEYWORDS) : null })
    else if (r < 0.8) steps.push({ op: 'advance', by: one(MOVES) })
    else if (r < 0.87) steps.push({ op: 'cancel', pick: pick() })
    else if (r < 0.93) steps.push({ op: 'rule', msisdn: one([...OTP, ...PSMS, ...REDIRECT]), rule: Math.floor(rand() * RULES.length) })
    else if (r < 0.97) steps.push({ op: 'unrule', pick: pick() })
    // `dcb seed` of one of the always-succeeds numbers (a runtime rule may fail its renewals).
    else steps.push({ op: 'seed', msisdn: one(['60123456001', '60133456001']), service: one(MY_SERVICES) })
  }
  const extra = prng(seed ^ 0x5a5a5a5a)
  const mixed: Step[] = []
  for (const s of steps) {
    const r = extra()
    if (r < 0.08) {
      const msisdn = PSMS[Math.floor(extra() * PSMS.length)]!
      mixed.push({ op: 'psms', msisdn, service: MY_SERVICES[Math.floor(extra() * MY_SERVICES.length)]!, mo: extra() < 0.5 ? 'now' : 'later' })
    } else if (r < 0.12) mixed.push({ op: 'confirm', pick: Math.floor(extra() * 1000) })
    mixed.push(s)
  }
  return mixed
}

/** A PSMS Init's answer: the MO the user is asked to send. */
interface PsmsAsk {
  msisdn: string
  short_code: string
  keyword: string
}

/** Runs one step; answers what it did, in words (for the failure's step list). */
async function run(engine: Engine, pending: string[], asked: PsmsAsk[], s: Step): Promise<string> {
  const demo = engine.authenticate('sandbox-demo-key')!
  const of = <T>(list: T[], n: number): T | undefined => (list.length ? list[n % list.length] : undefined)
  switch (s.op) {
    case 'otp': {
      const init = await engine.init(demo, { msisdn: s.msisdn, service_code: s.service, country_code: 'my' }, { baseUrl: 'http://x' })
      if (init.code !== 'SUCCESS') return `init ${init.code}`
      const id = init.payload!.verif_request_id as string
      const v = await engine.verify(demo, { verif_request_id: id, otp: engine.latestOtp(s.msisdn)!.otp! })
      return `verify ${v.code} ${v.payload?.subscription_id ?? ''}`
    }
    case 'init': {
      const init = await engine.init(demo, { msisdn: s.msisdn, service_code: s.service, country_code: s.country }, { baseUrl: 'http://x' })
      if (init.code !== 'SUCCESS') return `init ${init.code}`
      const url = init.payload!.redirect_url as string | undefined
      const id = url ? url.slice(url.lastIndexOf('/') + 1) : (init.payload!.verif_request_id as string)
      pending.push(id)
      return `pending ${id}`
    }
    case 'verify': {
      const id = of(
        pending.filter((p) => engine.state.verifs.get(p)?.flow === 'otp'),
        s.pick,
      )
      const verif = id && engine.state.verifs.get(id)
      if (!verif) return 'no OTP request'
      const v = await engine.verify(demo, { verif_request_id: verif.id, otp: verif.otp! })
      return `verify ${verif.id} ${v.code} ${v.payload?.subscription_id ?? ''}`
    }
    case 'consent': {
      const id = of(
        pending.filter((p) => engine.state.verifs.get(p)?.flow === 'redirect'),
        s.pick,
      )
      if (!id) return 'no consent request'
      const r = await engine.consent(id, s.deny ? 'deny' : 'approve')
      return `consent ${id} ${r.result} ${r.subscription_id ?? ''}`
    }
    case 'mo':
    case 'stop': {
      const text = s.op === 'mo' ? s.keyword : s.keyword ? `STOP ${s.keyword}` : 'STOP'
      const r = await engine.mo({ msisdn: s.msisdn, short_code: '32123', text: text! })
      return `mo ${JSON.stringify(r)}`
    }
    case 'psms': {
      const init = await engine.init(demo, { msisdn: s.msisdn, service_code: s.service, country_code: 'my' }, { baseUrl: 'http://x' })
      if (init.code !== 'SUCCESS') return `init ${init.code}`
      const ask = { msisdn: s.msisdn, short_code: init.payload!.short_code as string, keyword: init.payload!.keyword as string }
      if (s.mo === 'later') {
        asked.push(ask)
        return `asked ${ask.keyword} to ${ask.short_code}`
      }
      return `mo ${JSON.stringify(await engine.mo({ msisdn: ask.msisdn, short_code: ask.short_code, text: ask.keyword }))}`
    }
    case 'confirm': {
      if (!asked.length) return 'no PSMS Init'
      // The user may send it long after, or twice: it stays asked.
      const ask = asked[s.pick % asked.length]!
      return `mo ${ask.msisdn} ${ask.keyword} ${JSON.stringify(await engine.mo({ msisdn: ask.msisdn, short_code: ask.short_code, text: ask.keyword }))}`
    }
    case 'advance': {
      const m = await engine.advance(s.by)
      return `${m.eventCount} events to ${m.clock.now}`
    }
    case 'cancel': {
      const id = of([...engine.state.subs.keys()], s.pick)
      if (!id) return 'no subscription'
      try {
        const done = await engine.cancel(id)
        return `canceled ${done.subscription_id}`
      } catch (e) {
        if (!(e instanceof SandboxError)) throw e
        return `${id}: ${e.code}`
      }
    }
    case 'rule': {
      const r = await engine.addRule({ match: { msisdn: s.msisdn }, ...RULES[s.rule] })
      return `rule ${r.id}`
    }
    case 'seed': {
      try {
        return `seeded ${(await engine.seed(1, { firstMsisdn: s.msisdn, service: s.service })).join()}`
      } catch (e) {
        if (!(e instanceof SandboxError)) throw e
        return e.code
      }
    }
    case 'unrule': {
      const id = of([...engine.state.rules.keys()], s.pick)
      if (!id) return 'no rule'
      await engine.deleteRule(id)
      return `removed ${id}`
    }
  }
}

/** What breaks either invariant, in words, or null. */
export function violation(subs: Iterable<SubscriptionRecord>): string | null {
  const groups = new Map<string, SubscriptionRecord[]>()
  for (const s of subs) {
    const key = `${s.msisdn} ${s.merchant}/${s.service}`
    const list = groups.get(key)
    if (list) list.push(s)
    else groups.set(key, [s])
  }
  for (const [key, list] of groups) {
    const active = list.filter((s) => s.status === 'ACTIVE')
    if (active.length > 1) return `${key}: ${active.length} ACTIVE subscriptions (${active.map((s) => s.id).join(', ')})`
    const paid: { id: string; from: number; to: number }[] = []
    for (const s of list) {
      if (s.charges.length !== s.charge_count) throw new Error(`subscription ${s.id}: its charges were cut (raise chargesPerSubscription)`)
      s.charges.forEach((c, i) => {
        if (c.outcome !== 'SUCCESS') return
        let to = i + 1 < s.charges.length ? s.charges[i + 1]!.at : s.expiry_at
        if (s.canceled_at !== null) to = Math.min(to, s.canceled_at)
        paid.push({ id: `${s.id} ${c.kind} charge`, from: c.at, to })
      })
    }
    paid.sort((a, b) => a.from - b.from)
    for (let i = 1; i < paid.length; i++) {
      const a = paid[i - 1]!
      const b = paid[i]!
      if (b.from < a.to)
        return `${key}: ${b.id} at ${new Date(b.from).toISOString()} pays for time ${a.id} paid (${new Date(a.from).toISOString()} to ${new Date(a.to).toISOString()})`
    }
  }
  return null
}

/** Plays one seeded sequence; throws naming the seed, the steps and what broke. */
async function sequence(seed: number): Promise<void> {
  const steps = randomSteps(seed)
  const { engine } = build({ clockStart: { at: Date.parse('2026-01-28T09:00:00Z'), frozen: true }, chargesPerSubscription: 1_000_000 })
  const pending: string[] = []
  const asked: PsmsAsk[] = []
  const done: string[] = []
  for (const [i, s] of steps.entries()) {
    done.push(`${String(i).padStart(2)} ${JSON.stringify(s)} -> ${await run(engine, pending, asked, s)}`)
    const broken = violation(engine.state.subs.values())
    if (broken)
      throw new Error(
        `seed ${seed}, after step ${i}: ${broken}\nsteps:\n${done.join('\n')}\nagain: DCB_PROPERTY_SEED=${seed} npx vitest run test/core/one-active-property.test.ts`,
      )
  }
}

describe('one ACTIVE subscription per MSISDN and service, and no time paid twice (property)', () => {
  const only = process.env.DCB_PROPERTY_SEED
  const runs = Number(process.env.DCB_PROPERTY_RUNS ?? 200)
  it(`holds after every step of ${only ? `seed ${only}` : `${runs} random sequences of 30-60 steps and PSMS Inits`}`, { timeout: 120_000 }, async () => {
    const seeds = only ? [Number(only)] : Array.from({ length: runs }, (_, i) => 0x41 * 1000 + i)
    for (const seed of seeds) await sequence(seed)
  })

  const base = { merchant: 'demo', service: 'STREAMPLUS', msisdn: '60133456302', canceled_at: null, charge_count: 1 } as const
  const sub = (id: string, status: SubscriptionRecord['status'], at: number, expiry: number) =>
    ({
      ...base,
      id,
      status,
      expiry_at: expiry,
      charges: [{ at, kind: 'first', outcome: 'SUCCESS', amount: null, currency: null }],
    }) as unknown as SubscriptionRecord

  it('the check itself sees two ACTIVE', () => {
    expect(violation([sub('a', 'ACTIVE', 0, 100), sub('b', 'ACTIVE', 100, 200)])).toMatch(/2 ACTIVE subscriptions/)
  })

  it('the check itself sees a charge inside time paid by another subscription', () => {
    expect(violation([sub('a', 'EXPIRED', 0, 100), sub('b', 'ACTIVE', 50, 200)])).toMatch(/b first charge .* pays for time a first charge paid/)
    expect(violation([sub('a', 'EXPIRED', 0, 100), sub('b', 'ACTIVE', 100, 200)])).toBeNull()
  })
})
