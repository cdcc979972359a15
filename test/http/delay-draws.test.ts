/**
 * Delay distributions through every transport: `dcb serve` (the binary, over loopback),
 * `sandbox.fetch` and msw. After `reset { seed }` the same calls get the same delays (the request
 * log's `delay_ms`, checked against the generator's own draws, not a clock), another seed others;
 * the seed survives a restart of the server with a data file. Each refused input is refused by name.
 */
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox, type Sandbox } from '../../src/index.js'
import { sandboxHandlers } from '../../src/msw.js'
import { DEFAULT_SEED, drawn, seededUnit, type DelaySpec } from '../../src/core/delays.js'
import { layerWorlds } from '../../src/core/layering.js'
import { DEMO, tempDir, tempFolderPerTest } from '../helpers.js'
import { dcb, serve, type Served } from '../cli/run.js'

const H = { 'api-key': DEMO, 'content-type': 'application/json' }
const BASE = 'https://gw.carrier.test/v1'
const UNIFORM = { min: 1, max: 40 }
const LOGNORMAL = { median: 5, p99: 30 }
const RULES = [
  { id: 'uniform-091', match: { ending: '091' }, step: 'api', effect: { delay_ms: UNIFORM } },
  { id: 'lognormal-092', match: { ending: '092' }, step: 'status', effect: { delay_ms: LOGNORMAL } },
]

/** The n-th draw since the reset of a seed, as the generator makes it. */
const nth = (spec: Exclude<DelaySpec, number>, seed: number, n: number) => drawn(spec, seededUnit(seed, n))

interface Transport {
  merchant(op: string, body: unknown): Promise<any>
  control(path: string, body?: unknown): Promise<{ status: number; body: any }>
}

/** Five Inits on numbers of the uniform rule, then two Status calls of the log-normal one: the delays the request log recorded, oldest first. */
async function sequence(t: Transport, reset: Record<string, unknown>): Promise<number[]> {
  expect((await t.control('/reset', reset)).status).toBe(200)
  for (const r of RULES) expect((await t.control('/rules', r)).status).toBe(200)
  for (let i = 0; i < 5; i++) await t.merchant('init', { msisdn: `6012345${i}091`, service_code: 'STREAMPLUS', country_code: 'my' })
  const init = await t.merchant('init', { msisdn: '60123456092', service_code: 'STREAMPLUS', country_code: 'my' })
  const { otp } = (await t.control('/otp?msisdn=60123456092')).body
  const verify = await t.merchant('verify', { verif_request_id: init.payload.verif_request_id, otp })
  for (let i = 0; i < 2; i++) expect((await t.merchant('status', { subscription_id: verify.payload.subscription_id })).status).toBe('SUCCESS')
  const { requests } = (await t.control('/requests')).body
  return requests
    .filter((e: any) => e.path.startsWith('/subscriptions/'))
    .reverse()
    .map((e: any) => e.delay_ms ?? 0)
}

/** What the generator draws for `sequence`: five uniform draws, none for the plain Init and Verify, two log-normal ones. */
const expected = (seed: number) => [...[1, 2, 3, 4, 5].map((n) => nth(UNIFORM, seed, n)), 0, 0, nth(LOGNORMAL, seed, 6), nth(LOGNORMAL, seed, 7)]

function suite(get: () => Transport) {
  it('the same seed gives the same delays after a reset', async () => {
    const t = get()
    const seven = await sequence(t, { seed: 7 })
    expect(seven).toEqual(expected(7))
    expect(await sequence(t, { seed: 7 })).toEqual(seven)
  })

  it('another seed gives other delays', async () => {
    const eight = await sequence(get(), { seed: 8 })
    expect(eight).toEqual(expected(8))
    expect(eight).not.toEqual(expected(7))
  })

  it('a reset with no seed gives the delays of the default seed', async () => {
    const t = get()
    expect(await sequence(t, {})).toEqual(expected(DEFAULT_SEED))
    expect(await sequence(t, {})).toEqual(expected(DEFAULT_SEED))
  })

  it('a reset answers the seed in force', async () => {
    const t = get()
    expect((await t.control('/reset', { seed: 12 })).body).toMatchObject({ ok: true, seed: 12 })
    expect((await t.control('/reset', {})).body).toMatchObject({ ok: true, seed: DEFAULT_SEED })
  })

  it('a seed that is not a whole number from 0 is refused by name', async () => {
    const t = get()
    for (const seed of [-1, 1.5, '7', null, 2 ** 60])
      expect(await t.control('/reset', { seed })).toEqual({
        status: 400,
        body: { error: 'BAD_REQUEST', message: 'seed: expected a whole number from 0 to 9007199254740991' },
      })
  })
}

describe('over loopback (the dcb binary)', () => {
  let s: Served
  beforeAll(async () => {
    s = await serve(['--in-memory'])
  })
  afterAll(() => s.stop())
  const t = (): Transport => ({
    merchant: async (op, body) => (await fetch(`${s.url}/subscriptions/${op}`, { method: 'POST', headers: H, body: JSON.stringify(body) })).json(),
    control: async (path, body) => {
      const res = await fetch(`${s.url}/_sandbox${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return { status: res.status, body: await res.json() }
    },
  })
  suite(t)

  it('dcb logs shows the delay drawn after dcb reset --seed N', async () => {
    const r = await dcb(['reset', '--seed', '31', '--base-url', s.url])
    expect([r.code, r.stdout.trim()]).toEqual([0, '✔ back to the loaded fixtures, delays drawn from seed 31'])
    await t().control('/rules', RULES[0])
    await t().merchant('init', { msisdn: '60123450091', service_code: 'STREAMPLUS', country_code: 'my' })
    expect((await dcb(['logs', '--base-url', s.url])).stdout).toContain(`(held ${nth(UNIFORM, 31, 1)} ms by a rule)`)
  })

  it('dcb reset refuses a bad seed in one line with a non-zero exit', async () => {
    for (const bad of ['-1', '1.5', 'x']) {
      const b = await dcb(['reset', '--seed', bad, '--base-url', s.url])
      expect(b.code).not.toBe(0)
      expect(b.stderr.trim().split('\n')).toEqual([expect.stringMatching(/--seed must be a whole number from 0 to 9007199254740991/)])
    }
  })
})

describe('in process (sandbox.fetch)', () => {
  let sandbox: Sandbox
  beforeAll(async () => {
    sandbox = await createSandbox()
  })
  afterAll(() => sandbox.close())
  suite(() =>
    viaSandbox(sandbox, (op, body) => sandbox.fetch(`http://localhost/subscriptions/${op}`, { method: 'POST', headers: H, body: JSON.stringify(body) })),
  )

  it('reset({ seed }) on the library sandbox answers the seed', async () => {
    expect(await sandbox.reset({ seed: 5 })).toMatchObject({ seed: 5 })
  })

  it('reset({ seed }) with a bad seed rejects by name', async () => {
    await expect(sandbox.reset({ seed: -3 })).rejects.toThrow(/seed: expected a whole number from 0/)
  })
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
  suite(() => viaSandbox(sandbox, (op, body) => fetch(`${BASE}/subscriptions/${op}`, { method: 'POST', headers: H, body: JSON.stringify(body) })))
})

/** Merchant calls through `call`; the control calls through the sandbox's own fetch. */
function viaSandbox(sandbox: Sandbox, call: (op: string, body: unknown) => Promise<Response>): Transport {
  return {
    merchant: async (op, body) => (await call(op, body)).json(),
    control: async (path, body) => {
      const res = await sandbox.fetch(`http://localhost/_sandbox${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return { status: res.status, body: await res.json() }
    },
  }
}

describe('the seed is durable', () => {
  it('survives a restart of dcb serve with a data file: the draws go on where they were', async () => {
    const t = tempDir()
    let s = await serve(['--data', `${t.dir}/sandbox.json`])
    try {
      const init = (i: number) =>
        fetch(`${s.url}/subscriptions/init`, {
          method: 'POST',
          headers: H,
          body: JSON.stringify({ msisdn: `6012345${i}091`, service_code: 'STREAMPLUS', country_code: 'my' }),
        })
      const logged = async () => (await (await fetch(`${s.url}/_sandbox/requests?limit=1`)).json()).requests[0].delay_ms as number
      expect((await dcb(['reset', '--seed', '77', '--base-url', s.url])).code).toBe(0)
      expect((await dcb(['rules', 'add', JSON.stringify(RULES[0]), '--base-url', s.url])).code).toBe(0)
      await init(0)
      await init(1)
      expect(await logged()).toBe(nth(UNIFORM, 77, 2))
      await s.stop()
      s = await serve(['--data', `${t.dir}/sandbox.json`])
      await init(2)
      expect(await logged()).toBe(nth(UNIFORM, 77, 3))
    } finally {
      await s.stop()
      t.cleanup()
    }
  })
})

describe('a delay distribution refused by name', () => {
  const files = tempFolderPerTest()
  const rule = (delay_ms: unknown) => ({ id: 'bad', match: { ending: '091' }, step: 'init', effect: { delay_ms } })
  /** Each refused delay, the field its refusal names and the words. */
  const REFUSED: [string, unknown, string, RegExp][] = [
    ['a max over the bound', { min: 0, max: 60_001 }, 'effect.delay_ms.max', /60001 ms is over the bound of held answers: at most 60000 ms/],
    ['a p99 over the bound', { median: 100, p99: 70_000 }, 'effect.delay_ms.p99', /70000 ms is over the bound of held answers/],
    ['a number over the bound', 60_001, 'effect.delay_ms', /60001 ms is over the bound/],
    ['min above max', { min: 500, max: 100 }, 'effect.delay_ms', /min 500 is above max 100/],
    ['p99 below the median', { median: 200, p99: 100 }, 'effect.delay_ms', /p99 100 is below the median 200/],
    ['an unknown key', { median: 200, p90: 900 }, 'effect.delay_ms', /a log-normal delay takes median and p99: unknown key "p90"; did you mean p99\?/],
    ['keys of both shapes', { min: 1, max: 2, median: 3 }, 'effect.delay_ms', /Unrecognized key: "median"/],
    [
      'a shape of neither',
      { mean: 3 },
      'effect.delay_ms',
      /expected a number of ms, \{ "min": A, "max": B \} \(uniform\) or \{ "median": M, "p99": P \} \(log-normal\); unknown key "mean"/,
    ],
    ['half a uniform', { min: 3 }, 'effect.delay_ms', /a uniform delay needs both min and max \(max missing\)/],
    ['a median of 0', { median: 0, p99: 10 }, 'effect.delay_ms.median', /at least 1 ms/],
    ['a fraction', { min: 1.5, max: 3 }, 'effect.delay_ms', /a uniform delay: min 1.5 is not a whole number of ms/],
    ['text', '100', 'effect.delay_ms', /not "100"/],
  ]
  let s: Served
  beforeAll(async () => {
    s = await serve(['--in-memory'])
  })
  afterAll(() => s.stop())

  it.each(REFUSED)('%s: by POST /_sandbox/rules and in a fixture file', async (_what, delay, field, words) => {
    const res = await fetch(`${s.url}/_sandbox/rules`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rule(delay)) })
    const body = await res.json()
    expect([res.status, body.error]).toEqual([400, 'BAD_RULE'])
    expect(body.message).toContain(`${field}:`)
    expect(body.message).toMatch(words)
    const layered = layerWorlds([{ source: 'ticket.json', data: { rules: [rule(delay)] } }])
    const problems = layered.ok ? [] : layered.problems
    expect(problems.filter((p) => p.startsWith(`ticket.json: $.rules[0].${field}:`) && words.test(p))).toHaveLength(1)
  })

  it('a delay_per_unit with a distribution counts its largest draw: a max, a log-normal p99', async () => {
    const add = async (delay_ms: unknown) =>
      (
        await fetch(`${s.url}/_sandbox/rules`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ match: { regex: '5(?<n>[0-5]\\d)$' }, step: 'api', effect: { delay_ms, delay_per_unit: { group: 'n', ms: 1000 } } }),
        })
      ).json()
    expect((await add({ min: 0, max: 1001 })).message).toContain(
      'can hold an answer 60001 ms (59, the largest value group "n" can match, x 1000 ms + delay_ms 1001, its max)',
    )
    expect((await add({ median: 10, p99: 1001 })).message).toContain('+ delay_ms 1001, its p99)')
    expect(await add({ median: 900, p99: 1000 })).toMatchObject({ id: expect.any(String) })
  })

  it('dcb rules add refuses one with one line naming the field', async () => {
    const f = files.json('bad.json', [rule({ min: 9, max: 2 })])
    const r = await dcb(['rules', 'add', f, '--base-url', s.url])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/effect\.delay_ms: min 9 is above max 2/)
  })

  it('dcb serve refuses a fixture file with one', async () => {
    const fixture = files.json('fixture.json', { rules: [rule({ median: 100, p99: 70_000 })] })
    const bad = await dcb(['serve', '--port', '0', '--in-memory', '--fixtures', fixture])
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toMatch(/fixture\.json: \$\.rules\[0\]\.effect\.delay_ms\.p99: 70000 ms is over the bound/)
  })

  it('a run file resets with a seed', async () => {
    const steps = [{ reset: { seed: 7 } }, { rule: RULES[0] }, { init: { msisdn: '60123450091', service_code: 'STREAMPLUS', country_code: 'my' } }]
    const good = files.json('seeded.run.json', { steps: [...steps, { expect: { 'reset.seed': 7 } }] })
    const r = await dcb(['run', good, '--clock', '2026-01-31T00:00:00'])
    expect([r.code, r.stderr]).toEqual([0, ''])
  })

  it('a run file with a seed that is not a whole number from 0 is refused before anything runs', async () => {
    const bad = files.json('bad-seed.run.json', { steps: [{ reset: { seed: 1.5 } }] })
    const b = await dcb(['run', bad, '--clock', '2026-01-31T00:00:00'])
    expect([b.code, b.stderr]).toEqual([2, `dcb: ${bad}: $.steps[0].reset: reset "seed" must be a whole number from 0, not 1.5\n`])
  })

  describe('a distribution in force', () => {
    beforeAll(async () => {
      for (const r of RULES)
        await fetch(`${s.url}/_sandbox/rules`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(r) })
    })

    it('is described by dcb scenarios', async () => {
      const out = (await dcb(['scenarios', '--base-url', s.url])).stdout
      expect(out).toContain('delay 1-40 ms (uniform)')
      expect(out).toContain('delay median 5 ms, p99 30 ms (log-normal)')
    })

    it('is described by dcb world', async () => {
      const listed = (await dcb(['world', '--base-url', s.url])).stdout
      expect(listed).toMatch(/uniform-091: ending 091 at api: delay 1-40 ms \(uniform\); used 0/)
    })
  })
})
