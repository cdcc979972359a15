/**
 * The step/effect table of docs/reference/fixtures.md at engine level: every pair the table has takes
 * effect (and `nth`, `times` work on every step, `used` counts every decision); every other pair is
 * refused naming the field and the steps that take it.
 */
import { describe, expect, it } from 'vitest'
import type { Engine } from '../../src/core/engine.js'
import { layerWorlds } from '../../src/core/layering.js'
import { validateRule } from '../../src/core/rule-check.js'
import { EFFECTS, STEP_EFFECTS, STEPS, type EffectName, type Step } from '../../src/core/world-schema.js'
import { at, build, layered, type Harness } from './harness.js'

/** Carriers retry a failed renewal every day up to five times here (a partial carrier override). */
const RETRYING = { carriers: [{ code: 'sbx-my-otp', retry: { max: 5 } }] }

function engineWith(...docs: unknown[]): Harness {
  const { world, sources } = layered(...docs)
  return build({ world, sources, clockStart: { at: at('2026-01-10T00:00:00'), frozen: true } })
}

const demo = (e: Engine) => e.authenticate('sandbox-demo-key')!
const M = '60123456071'

async function initOtp(e: Engine, msisdn = M) {
  return e.init(demo(e), { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: 'http://sandbox.test' })
}

async function verifyLatest(e: Engine, init: Awaited<ReturnType<typeof initOtp>>, msisdn = M) {
  return e.verify(demo(e), { verif_request_id: init.payload!.verif_request_id as string, otp: e.latestOtp(msisdn)!.otp! })
}

/** Ends the MSISDN's active subscriptions (so the next occurrence can subscribe again). */
async function cancelAll(e: Engine, msisdn = M) {
  for (const s of e.listSubscriptions({ msisdn })) if (s.status === 'ACTIVE') await e.cancel(s.subscription_id as string)
}

/**
 * For each step, the effect used to see it, and a driver that makes `n` occurrences of the step for
 * one MSISDN and says for each whether that effect was seen (renewals and retries: every one of a year).
 */
const DRIVERS: Record<Step, { effect: Record<string, unknown>; match?: Record<string, unknown>; run(h: Harness, n: number): Promise<boolean[]> }> = {
  api: {
    effect: { delay_ms: 700 },
    async run({ engine }, n) {
      const seen: boolean[] = []
      for (let i = 0; i < n; i++) seen.push(((await initOtp(engine)).delayMs ?? 0) >= 700)
      return seen
    },
  },
  init: {
    effect: { error: 'BARRED' },
    async run({ engine }, n) {
      const seen: boolean[] = []
      for (let i = 0; i < n; i++) seen.push((await initOtp(engine)).code === 'BARRED')
      return seen
    },
  },
  verify: {
    effect: { error: 'BARRED' },
    async run({ engine }, n) {
      const seen: boolean[] = []
      for (let i = 0; i < n; i++) {
        seen.push((await verifyLatest(engine, await initOtp(engine))).code === 'BARRED')
        await cancelAll(engine)
      }
      return seen
    },
  },
  status: {
    effect: { http: 500 },
    async run(h, n) {
      const id = await h.subscribe(M)
      const seen: boolean[] = []
      for (let i = 0; i < n; i++) seen.push((await h.engine.status(demo(h.engine), { subscription_id: id })).code === 'SERVER_ERROR')
      return seen
    },
  },
  otp: {
    effect: { otp: '9999' },
    async run({ engine }, n) {
      const seen: boolean[] = []
      for (let i = 0; i < n; i++) {
        await initOtp(engine)
        seen.push(engine.latestOtp(M)!.otp === '9999')
      }
      return seen
    },
  },
  charge: {
    effect: { error: 'BARRED' },
    async run({ engine }, n) {
      const seen: boolean[] = []
      for (let i = 0; i < n; i++) {
        seen.push((await verifyLatest(engine, await initOtp(engine))).code === 'BARRED')
        await cancelAll(engine)
      }
      return seen
    },
  },
  activate: {
    effect: { cancel_after: 'P1D' },
    async run(h, n) {
      const seen: boolean[] = []
      for (let i = 0; i < n; i++) {
        const id = await h.subscribe(M)
        seen.push(h.engine.subscription(id).carrier_cancel_dt !== null)
        await cancelAll(h.engine)
      }
      return seen
    },
  },
  renewal: {
    effect: { error: 'INSUFFICIENT_FUNDS' },
    async run(h, n) {
      const id = await h.subscribe(M)
      await h.engine.advance('P1Y')
      const renewals = h.engine.subscription(id).charges.filter((c) => c.kind === 'renewal')
      return renewals.map((c) => c.outcome === 'INSUFFICIENT_FUNDS')
    },
  },
  retry: {
    // Every renewal of this MSISDN fails (a second rule), so each one is retried.
    effect: { error: 'INSUFFICIENT_FUNDS' },
    async run(h, n) {
      await h.engine.addRule({ id: 'every-renewal-fails', match: { msisdn: M }, step: 'renewal', effect: { error: 'NOT_ELIGIBLE' } })
      const id = await h.subscribe(M)
      await h.engine.advance('P1Y')
      const retries = h.engine.subscription(id).charges.filter((c) => c.kind === 'retry')
      return retries.map((c) => c.outcome === 'INSUFFICIENT_FUNDS')
    },
  },
  mo: {
    effect: { error: 'BARRED' },
    async run({ engine }, n) {
      const seen: boolean[] = []
      for (let i = 0; i < n; i++) {
        const r = await engine.mo({ msisdn: '60133456071', short_code: '32123', text: 'STREAM' })
        seen.push(r.action === 'rejected' && r.code === 'BARRED')
        await cancelAll(engine, '60133456071')
      }
      return seen
    },
  },
  consent: {
    effect: { error: 'BARRED' },
    async run({ engine }, n) {
      const seen: boolean[] = []
      for (let i = 0; i < n; i++) {
        const init = await engine.init(demo(engine), { msisdn: '359881234071', service_code: 'STREAMPLUS', country_code: 'bg' }, { baseUrl: 'http://x' })
        const id = String(init.payload!.redirect_url).split('/').pop()!
        seen.push((await engine.consent(id, 'approve')).result === 'BARRED')
        await cancelAll(engine, '359881234071')
      }
      return seen
    },
  },
}

describe('nth and times on every step; used counts every decision', () => {
  it.each(STEPS)('%s: a plain rule decides every occurrence, nth: 2 only the second, times: 1 only the first', async (step) => {
    const d = DRIVERS[step]
    const rule = (extra: object) => ({ id: `r-${step}`, match: { ending: '071' }, step, effect: d.effect, ...extra })
    const plain = engineWith(RETRYING)
    await plain.engine.addRule(rule({}))
    const all = await d.run(plain, 3)
    expect(all.slice(0, 3)).toEqual([true, true, true])
    expect(plain.engine.rules().rules.find((r) => r.id === `r-${step}`)!.used).toBe(all.length)
    const nth = engineWith(RETRYING)
    await nth.engine.addRule(rule({ nth: 2 }))
    expect((await d.run(nth, 3)).slice(0, 3)).toEqual([false, true, false])
    const times = engineWith(RETRYING)
    await times.engine.addRule(rule({ times: 1 }))
    expect((await d.run(times, 3)).slice(0, 3)).toEqual([true, false, false])
    expect(times.engine.rules().rules.find((r) => r.id === `r-${step}`)!.used).toBe(1)
  })

  it('the same rules as fixture rules (not runtime) behave the same: api with nth, counted as used', async () => {
    const h = engineWith({ rules: [{ id: 'slow-second', match: { ending: '071' }, step: 'api', nth: 2, effect: { delay_ms: 700 } }] })
    expect(await DRIVERS.api.run(h, 3)).toEqual([false, true, false])
    expect(h.engine.rules().rules[0]).toMatchObject({ id: 'slow-second', source: 'a.json', used: 1 })
  })
})

/** One example value of each effect. */
const VALUES: Record<EffectName, unknown> = {
  error: 'BARRED',
  http: 500,
  delay_ms: 700,
  delay_per_unit: { group: 'nn', ms: 100 },
  otp: '9999',
  deliver: false,
  deliver_after: 'PT2M',
  cancel_after: 'P1D',
  fault: 'reset',
  hang_ms: 1000,
  when: 'after',
  body: 'empty',
  retry_after: 5,
}

/** The effects that need a partner, given with it (`hang_ms` with `fault: hang`, `body` with `http`…). */
const WITH: Partial<Record<EffectName, Record<string, unknown>>> = {
  hang_ms: { fault: 'hang' },
  when: { fault: 'close' },
  body: { http: 503 },
  retry_after: { http: 429 },
}
const faulted = (o: { wire?: { fault?: string; http?: number } }) => o.wire?.fault ?? o.wire?.http

describe('every pair of the step/effect table takes effect', () => {
  const d = (h: Harness) => h.engine
  const cases: [Step, EffectName, (h: Harness) => Promise<void>][] = [
    ['api', 'delay_ms', async (h) => expect((await initOtp(d(h))).delayMs).toBe(700)],
    ['api', 'delay_per_unit', async (h) => expect((await initOtp(d(h), '60123456571')).delayMs).toBe(7100)],
    ['api', 'http', async (h) => expect((await initOtp(d(h))).code).toBe('SERVER_ERROR')],
    ['init', 'delay_ms', async (h) => expect((await initOtp(d(h))).delayMs).toBe(700)],
    ['init', 'http', async (h) => expect((await initOtp(d(h))).code).toBe('SERVER_ERROR')],
    ['init', 'error', async (h) => expect((await initOtp(d(h))).code).toBe('BARRED')],
    ['verify', 'delay_ms', async (h) => expect((await verifyLatest(d(h), await initOtp(d(h)))).delayMs).toBe(700)],
    ['verify', 'http', async (h) => expect((await verifyLatest(d(h), await initOtp(d(h)))).code).toBe('SERVER_ERROR')],
    ['verify', 'error', async (h) => expect((await verifyLatest(d(h), await initOtp(d(h)))).code).toBe('BARRED')],
    ['status', 'delay_ms', async (h) => expect((await d(h).status(demo(d(h)), { subscription_id: await h.subscribe(M) })).delayMs).toBe(700)],
    ['status', 'http', async (h) => expect((await d(h).status(demo(d(h)), { subscription_id: await h.subscribe(M) })).code).toBe('SERVER_ERROR')],
    ...(['api', 'init'] as const).flatMap((step): [Step, EffectName, (h: Harness) => Promise<void>][] => [
      [step, 'fault', async (h) => expect(faulted(await initOtp(d(h)))).toBe('reset')],
      [step, 'hang_ms', async (h) => expect((await initOtp(d(h))).wire).toMatchObject({ fault: 'hang', hangMs: 1000 })],
      [step, 'body', async (h) => expect((await initOtp(d(h))).wire).toMatchObject({ http: 503, body: 'empty' })],
      [step, 'retry_after', async (h) => expect((await initOtp(d(h))).wire).toMatchObject({ http: 429, retryAfter: 5 })],
    ]),
    ['init', 'when', async (h) => expect(await initOtp(d(h))).toMatchObject({ code: 'SUCCESS', wire: { fault: 'close', when: 'after' } })],
    ...(['verify', 'status'] as const).flatMap((step): [Step, EffectName, (h: Harness) => Promise<void>][] => {
      const call = async (h: Harness) =>
        step === 'verify' ? verifyLatest(d(h), await initOtp(d(h))) : d(h).status(demo(d(h)), { subscription_id: await h.subscribe(M) })
      return [
        [step, 'fault', async (h) => expect(faulted(await call(h))).toBe('reset')],
        [step, 'hang_ms', async (h) => expect((await call(h)).wire).toMatchObject({ fault: 'hang', hangMs: 1000 })],
        [step, 'body', async (h) => expect((await call(h)).wire).toMatchObject({ http: 503, body: 'empty' })],
        [step, 'retry_after', async (h) => expect((await call(h)).wire).toMatchObject({ http: 429, retryAfter: 5 })],
      ]
    }),
    [
      'verify',
      'when',
      async (h) => expect(await verifyLatest(d(h), await initOtp(d(h)))).toMatchObject({ code: 'SUCCESS', wire: { fault: 'close', when: 'after' } }),
    ],
    ['otp', 'otp', async (h) => expect((await initOtp(d(h)), d(h).latestOtp(M)!.otp)).toBe('9999')],
    [
      'otp',
      'deliver',
      async (h) => {
        expect((await initOtp(d(h))).code).toBe('SUCCESS')
        expect(
          d(h)
            .smsFor(M)
            .filter((m) => m.kind === 'otp'),
        ).toEqual([])
      },
    ],
    [
      'otp',
      'deliver_after',
      async (h) => {
        await initOtp(d(h))
        expect(d(h).latestOtp(M)).toBeUndefined()
        await d(h).advance('PT2M')
        expect(d(h).latestOtp(M)).toBeDefined()
      },
    ],
    ['charge', 'error', async (h) => expect((await verifyLatest(d(h), await initOtp(d(h)))).code).toBe('BARRED')],
    [
      'charge',
      'http',
      async (h) => {
        // At Verify: HTTP 500 ERROR; at an MO and a consent approval the charge fails with ERROR.
        expect((await verifyLatest(d(h), await initOtp(d(h)))).code).toBe('SERVER_ERROR')
        expect(await d(h).mo({ msisdn: '60133456071', short_code: '32123', text: 'STREAM' })).toMatchObject({ action: 'charge_failed', code: 'ERROR' })
        const init = await d(h).init(demo(d(h)), { msisdn: '359881234071', service_code: 'STREAMPLUS', country_code: 'bg' }, { baseUrl: 'http://x' })
        const consent = await d(h).consent(String(init.payload!.redirect_url).split('/').pop()!, 'approve')
        expect(consent).toMatchObject({ result: 'ERROR', location: expect.stringContaining('message=ERROR') })
      },
    ],
    [
      'activate',
      'cancel_after',
      async (h) => {
        const id = await h.subscribe(M)
        await d(h).advance('P1D')
        expect(d(h).subscription(id).status).toBe('CANCELED')
      },
    ],
    ['renewal', 'error', async (h) => expect((await h.subscribe(M), (await d(h).advance('P1M')).events[0])).toMatchObject({ type: 'renewal_failed' })],
    [
      'retry',
      'error',
      async (h) => {
        await d(h).addRule({ id: 'every-renewal-fails', match: { msisdn: M }, step: 'renewal', effect: { error: 'NOT_ELIGIBLE' } })
        const id = await h.subscribe(M)
        await d(h).advance('P1M1D')
        expect(
          d(h)
            .subscription(id)
            .charges.map((c) => [c.kind, c.outcome]),
        ).toEqual([
          ['first', 'SUCCESS'],
          ['renewal', 'NOT_ELIGIBLE'],
          ['retry', 'BARRED'],
        ])
      },
    ],
    [
      'mo',
      'error',
      async (h) => expect(await d(h).mo({ msisdn: '60133456071', short_code: '32123', text: 'STREAM' })).toMatchObject({ action: 'rejected', code: 'BARRED' }),
    ],
    [
      'consent',
      'error',
      async (h) => {
        const init = await d(h).init(demo(d(h)), { msisdn: '359881234071', service_code: 'STREAMPLUS', country_code: 'bg' }, { baseUrl: 'http://x' })
        expect(await d(h).consent(String(init.payload!.redirect_url).split('/').pop()!, 'approve')).toMatchObject({ result: 'BARRED', subscription_id: null })
      },
    ],
  ]

  it('the cases below are exactly the table', () => {
    expect(cases.map(([s, e]) => `${s}.${e}`).sort()).toEqual(STEPS.flatMap((s) => STEP_EFFECTS[s].map((e) => `${s}.${e}`)).sort())
  })

  it.each(cases)('%s takes %s', async (step, effect, check) => {
    const match = effect === 'delay_per_unit' ? { regex: '5(?<nn>\\d{2})$' } : { ending: '071' }
    const h = engineWith({ rules: [{ id: 'under-test', match, step, effect: { ...WITH[effect], [effect]: VALUES[effect] } }] })
    await check(h)
    expect(h.engine.rules().rules.find((r) => r.id === 'under-test')!.used).toBeGreaterThan(0)
  })

  it("a step's delay_ms adds to the api delay (5NN ending)", async () => {
    const h = engineWith({ rules: [{ id: 'slow-init', match: { ending: '503' }, step: 'init', effect: { delay_ms: 1000 } }] })
    expect((await initOtp(h.engine, '60123456503')).delayMs).toBe(300 + 1000)
  })
})

describe('every other step/effect pair is refused, naming the field and the steps that take it', () => {
  const refused = STEPS.flatMap((step) => EFFECTS.filter((e) => !STEP_EFFECTS[step].includes(e)).map((e) => [step, e] as [Step, EffectName]))
  const names = { carriers: new Set<string>(), services: new Set<string>(), countries: new Set<string>() }

  it.each(refused)('%s with %s', async (step, effect) => {
    const rule = { id: 'x', match: { regex: '5(?<nn>\\d{2})$' }, step, effect: { [effect]: VALUES[effect] } }
    const takes = STEPS.filter((s) => STEP_EFFECTS[s].includes(effect)).join(', ')
    const r = validateRule(rule, names)
    expect(r.ok).toBe(false)
    expect(r.ok ? [] : r.problems).toContainEqual({
      path: ['effect', effect],
      message: `step ${step} does not take ${effect} (the steps that take it: ${takes})`,
    })
    const h = engineWith()
    await expect(h.engine.addRule(rule)).rejects.toMatchObject({
      status: 400,
      code: 'BAD_RULE',
      message: expect.stringContaining(`effect.${effect}: step ${step} does not take`),
    })
    const fixture = layerWorlds([{ source: 'ticket.json', data: { extends: 'none', rules: [rule] } }])
    expect(fixture.ok ? [] : fixture.problems).toContainEqual(
      expect.stringMatching(
        new RegExp(`^ticket\\.json: \\$\\.rules\\[0\\]\\.effect\\.${effect}: step ${step} does not take ${effect} \\(the steps that take it: ${takes}\\)`),
      ),
    )
  })

  it('a rule with several steps needs the effect taken by each', () => {
    const r = validateRule({ id: 'x', step: ['init', 'charge', 'otp'], effect: { error: 'BARRED' } }, names)
    expect(r.ok ? [] : r.problems.map((p) => p.message)).toEqual([
      'step otp does not take error (the steps that take it: init, verify, charge, renewal, retry, mo, consent)',
    ])
  })
})
