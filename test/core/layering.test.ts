/**
 * docs/reference/fixtures.md at engine level: the precedence of rules, records merged by key, the checks
 * of a layered world (names in rules, duplicate prefixes, services without integrations), the world
 * as one document and back, and reset with a clock.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { Engine } from '../../src/core/engine.js'
import { layerWorlds } from '../../src/core/layering.js'
import { worldDocument } from '../../src/core/world-doc.js'
import { at, build, engineAt, layered } from './harness.js'

const DEFAULT = JSON.parse(readFileSync('fixtures/world.json', 'utf8'))
const demo = (e: Engine) => e.authenticate('sandbox-demo-key')!
const init = (e: Engine, msisdn: string, country = 'my') =>
  e.init(demo(e), { msisdn, service_code: 'STREAMPLUS', country_code: country }, { baseUrl: 'http://x' })

function problems(...docs: unknown[]): string[] {
  const r = layerWorlds([{ source: 'fixtures/world.json', data: DEFAULT }, ...docs.map((data, i) => ({ source: `${'abc'[i]}.json`, data }))])
  return r.ok ? [] : r.problems
}

describe('precedence: runtime rules (last added first), then the files from the last to the first, the default world last', () => {
  const rule = (id: string, error: string, match: object = { ending: '011' }) => ({ id, match, step: 'init', effect: { error } })

  const twoFiles = () => {
    const { world, sources } = layered({ rules: [rule('a1', 'BARRED'), rule('a2', 'NOT_ELIGIBLE')] }, { rules: [rule('b1', 'BLACKLISTED')] })
    const h = build({ world, sources, clockStart: { at: at('2026-01-10T00:00:00'), frozen: true } })
    const ids = () => h.engine.rules().rules.map((r) => `${r.id}@${r.source}`)
    return { h, ids }
  }
  /** Two runtime rules added on `twoFiles`, and one Init they decide. */
  const withRuntime = async () => {
    const files = twoFiles()
    await init(files.h.engine, '60123456011')
    await files.h.engine.addRule(rule('r1', 'INVALID_USER'))
    await files.h.engine.addRule(rule('r2', 'FAILED_INIT_SUB'))
    return { ...files, code: (await init(files.h.engine, '60123456011')).code }
  }

  it('orders every rule in force, the files from the last, the default world last', () => {
    const { ids } = twoFiles()
    expect(ids().slice(0, 4)).toEqual(['b1@b.json', 'a1@a.json', 'a2@a.json', 'ok-000-099@fixtures/world.json'])
    expect(ids().at(-1)).toBe('delay-5NN@fixtures/world.json')
  })

  it('lets the first rule that fits decide', async () => {
    const { h } = twoFiles()
    expect((await init(h.engine, '60123456011')).code).toBe('BLACKLISTED')
  })

  it('puts runtime rules first, the last added first, though the frozen clock gives them one time', async () => {
    const { h, ids, code } = await withRuntime()
    expect(ids().slice(0, 3)).toEqual(['r2@runtime', 'r1@runtime', 'b1@b.json'])
    expect(code).toBe('FAILED_INIT_SUB')
    expect(
      h.engine
        .rules()
        .rules.map((r) => r.used)
        .slice(0, 3),
    ).toEqual([1, 0, 1])
  })

  it("a runtime rule with a fixture rule's id replaces it while it exists", async () => {
    const { h, ids } = await withRuntime()
    await h.engine.addRule(rule('b1', 'TRX_COUNT_REACHED', { ending: '012' }))
    expect(ids().filter((x) => x.startsWith('b1@'))).toEqual(['b1@runtime'])
    await h.engine.deleteRule('b1')
    expect(ids().filter((x) => x.startsWith('b1@'))).toEqual(['b1@b.json'])
  })

  it('DELETE removes runtime rules only', async () => {
    const { h } = await withRuntime()
    await expect(h.engine.deleteRule('a1')).rejects.toMatchObject({ code: 'RULE_NOT_FOUND' })
  })

  it('a fixture rule with an earlier id replaces it at the place of its new file', () => {
    const { world, sources } = layered({ rules: [rule('x', 'BARRED'), rule('y', 'BARRED')] }, { rules: [rule('z', 'BARRED'), rule('y', 'NOT_ELIGIBLE')] })
    expect(world.rules.slice(0, 3).map((r) => [r.id, sources.rules[r.id], r.effect.error])).toEqual([
      ['z', 'b.json', 'BARRED'],
      ['y', 'b.json', 'NOT_ELIGIBLE'],
      ['x', 'a.json', 'BARRED'],
    ])
  })

  it('delay rules (endings 000-099, a whole country) take effect before the default world\'s "everything succeeds"', async () => {
    const { world, sources } = layered({
      rules: [
        { id: 'slow-my', match: { country: 'gb' }, step: 'api', effect: { delay_ms: 900 } },
        { id: 'slow-0xx', match: { ending_range: ['000', '099'] }, step: 'api', effect: { delay_ms: 800 } },
      ],
    })
    const h = build({ world, sources })
    expect((await init(h.engine, '60123456001')).delayMs).toBe(800)
    expect((await init(h.engine, '447700900001', 'gb')).delayMs).toBe(900)
    expect(
      h.engine
        .rules()
        .rules.slice(0, 2)
        .map((r) => r.used),
    ).toEqual([1, 1])
  })
})

describe('records merged by key', () => {
  const overridden = () =>
    layered({
      carriers: [{ code: 'sbx-my-otp', otp: { ttl: 'PT2M' }, retry: { max: 3 } }],
      countries: [{ code: 'my', lengths: [12] }],
    })

  it('overriding one carrier setting merges its objects field by field', () => {
    const { world } = overridden()
    const c = world.carriers.find((x) => x.code === 'sbx-my-otp')!
    expect(c).toMatchObject({ prefixes: ['6012'], flow: 'otp', otp: { length: 4, ttl: 'PT2M', max_attempts: 3 }, retry: { every: 'P1D', max: 3 } })
  })

  it('overriding a setting that is an array replaces it whole', () => {
    const { world } = overridden()
    expect(world.countries.find((x) => x.code === 'my')!.lengths).toEqual([12])
  })

  it('an overridden carrier names each file it comes from', () => {
    const { sources } = overridden()
    expect(sources.carriers['sbx-my-otp']).toEqual(['fixtures/world.json', 'a.json'])
  })

  it('a partial service (only return_url) keeps its integrations: Init still works', async () => {
    const { world } = layered({ services: [{ code: 'STREAMPLUS', return_url: 'https://merchant.example/back' }] })
    const s = world.services.find((x) => x.code === 'STREAMPLUS')!
    expect(s.return_url).toBe('https://merchant.example/back')
    expect(s.integrations.map((i) => i.country)).toEqual(['my', 'gb', 'bg'])
    expect((await init(build({ world }).engine, '60123456001')).code).toBe('SUCCESS')
  })

  it('a partial record is checked after the merge: a new carrier without its flow is refused in its file', () => {
    expect(problems({ carriers: [{ code: 'sbx-my-new', country: 'my', prefixes: ['6014'] }] })).toEqual([
      'a.json: $.carriers[0].flow: Invalid option: expected one of "otp"|"psms"|"redirect" (after merging the layers: a.json)',
    ])
  })
})

describe('validation of a layered world', () => {
  it('refuses rule names the world lacks, with file, path, value', () => {
    const p = problems({
      rules: [
        { id: 'typo', match: { carrier: 'sbx-my-opt' }, step: 'init', effect: { error: 'BARRED' } },
        { id: 'svc', match: { service: 'STREAMPLUSS' }, step: 'init', effect: { error: 'BARRED' } },
        { id: 'cc', match: { country: 'fr' }, step: 'init', effect: { error: 'BARRED' } },
      ],
    })
    expect(p).toEqual([
      expect.stringMatching(/^a\.json: \$\.rules\[0\]\.match\.carrier: unknown carrier "sbx-my-opt" \(carriers: sbx-bg-otp, /),
      expect.stringMatching(/^a\.json: \$\.rules\[1\]\.match\.service: unknown service "STREAMPLUSS" \(services: GAMECLUB, /),
      'a.json: $.rules[2].match.country: unknown country "fr" (countries: bg, gb, my)',
    ])
  })

  it('refuses an upper-case country in a rule, with file, path, value', () => {
    expect(problems({ rules: [{ id: 'up', match: { country: 'MY' }, step: 'init' }] })).toEqual([
      'a.json: $.rules[0].match.country: a lower-case country code such as "my" (got "MY")',
    ])
  })

  it('refuses a carrier with the prefix of another of its country, naming that carrier', () => {
    expect(problems({ carriers: [{ code: 'sbx-my-opt', country: 'my', prefixes: ['6012'], flow: 'otp' }] })).toEqual([
      'a.json: $.carriers[0].prefixes[0]: "6012" is already the prefix of carrier "sbx-my-otp" in "my" (to change that carrier, give its code "sbx-my-otp")',
    ])
  })

  it('warns about a service left with no integration', () => {
    const r = layered({ services: [{ code: 'GAMECLUB', integrations: [] }] })
    expect(r.warnings).toEqual([
      'a.json: $.services[0].integrations: service "GAMECLUB" has no integration: every Init for it answers 403 MERCHANT_SERVICE_NOT_CONFIGURED',
    ])
  })
})

describe('the world as one document', () => {
  it('loaded alone, it gives the same world (keys in sha256 form still open it)', async () => {
    const { world } = layered({
      carriers: [{ code: 'sbx-my-otp', otp: { length: 6 } }],
      rules: [{ id: 'mine', match: { ending: '077' }, step: 'init', effect: { error: 'BARRED' } }],
    })
    const doc = worldDocument(world)
    expect(doc.extends).toBe('none')
    expect(JSON.stringify(doc)).not.toContain('sandbox-demo-key')
    const again = layerWorlds([{ source: 'world.json', data: JSON.parse(JSON.stringify(doc)) }])
    if (!again.ok) throw new Error(again.problems.join('\n'))
    expect(worldDocument(again.world)).toEqual(doc)
    expect(again.world.rules.map((r) => r.id)).toEqual(world.rules.map((r) => r.id))
    const e = build({ world: again.world }).engine
    expect((await init(e, '60123456077')).code).toBe('BARRED')
    expect((await init(e, '60123456001')).code).toBe('SUCCESS')
    expect(e.latestOtp('60123456001')!.otp).toHaveLength(6)
  })
})

describe('reset with a clock', () => {
  it('is named by the refusal of a move back of the clock (CLOCK_BACKWARDS)', async () => {
    const h = engineAt('2026-06-01T00:00:00')
    await expect(h.engine.setTime('2026-01-01T00:00:00')).rejects.toMatchObject({
      code: 'CLOCK_BACKWARDS',
      message: expect.stringContaining('reset with a clock: POST /_sandbox/reset {"clock": "2026-01-01T00:00:00"} or dcb reset --clock 2026-01-01T00:00:00'),
    })
  })

  it('starts over at an earlier time with nothing kept, the clock still frozen', async () => {
    const h = engineAt('2026-06-01T00:00:00')
    await h.subscribe('60123456001')
    await h.engine.reset({ at: at('2026-01-01T00:00:00') })
    expect(h.engine.clockView()).toMatchObject({ now: '2026-01-01T00:00:00.000000', frozen: true })
    expect(h.engine.listSubscriptions({})).toEqual([])
  })

  it('a running clock runs on from the time given', async () => {
    let real = at('2026-06-01T00:00:00')
    const h = build({ realNow: () => real, clockStart: { at: at('2026-06-01T00:00:00'), frozen: false } })
    await h.engine.reset({ at: at('2025-12-31T00:00:00') })
    real += 60_000
    expect(h.engine.clockView()).toMatchObject({ now: '2025-12-31T00:01:00.000000', frozen: false })
  })
})
