/**
 * The rules and the world over the control API: `GET /_sandbox/world` loaded alone with `--fixtures`
 * gives the same world; `GET /_sandbox/rules` lists every rule in force in order with source and
 * used; a rule a step does not take is a 400 naming the field and the steps; reset with a clock.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'

describe('GET /_sandbox/world', () => {
  it('round trip: the document of a layered world, loaded alone, gives the same world', async () => {
    const t = tempDir()
    const a = await startClient({ fixtures: ['fixtures/scenarios/barred.json', 'test/fixtures/streamplus-gb-only.json'] })
    try {
      await a.control('/rules', { id: 'runtime-only', step: 'init', match: { ending: '099' }, effect: { error: 'BARRED' } })
      const doc = (await a.control('/world')).body
      expect(doc.extends).toBe('none')
      expect(doc.merchants[0].api_keys[0]).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })
      expect(doc.rules.map((r: any) => r.id)).not.toContain('runtime-only')
      expect(doc.rules[0].id).toBe('scenario-barred')
      const file = join(t.dir, 'world.json')
      writeFileSync(file, JSON.stringify(doc))
      const b = await startClient({ fixtures: [file] })
      try {
        expect((await b.control('/world')).body).toEqual(doc)
        const rules = (r: any) => r.body.rules.filter((x: any) => x.source !== 'runtime').map((x: any) => x.id)
        expect(rules(await b.control('/rules'))).toEqual(rules(await a.control('/rules')))
        const gb = await b.api('/subscriptions/init', { msisdn: '447700900017', service_code: 'STREAMPLUS', country_code: 'gb' })
        expect(gb.body.status).toBe('SUCCESS')
        const my = await b.api('/subscriptions/init', { msisdn: '601234000017', service_code: 'STREAMPLUS', country_code: 'my' })
        expect(my.body.message).toBe('MERCHANT_SERVICE_NOT_CONFIGURED')
      } finally {
        await b.close()
      }
      const withSources = (await a.control('/world?sources=1')).body
      expect(withSources.world).toEqual(doc)
      expect(withSources.sources.rules['scenario-barred']).toBe('fixtures/scenarios/barred.json')
      expect(withSources.sources.services.STREAMPLUS).toEqual(['fixtures/world.json', 'test/fixtures/streamplus-gb-only.json'])
    } finally {
      await a.close()
      t.cleanup()
    }
  })
})

describe('GET, POST /_sandbox/rules', () => {
  // One server for the file's rules; the list is read first, before the other tests add theirs.
  let c: Client
  beforeAll(async () => {
    c = await startClient({ fixtures: ['fixtures/scenarios/barred.json'], clock: '2026-06-01T00:00:00' })
  })
  afterAll(() => c.close())

  it('lists every rule in force in order, each with its source, its use count', async () => {
    await c.control('/rules', { id: 'slow-api', match: { ending: '001' }, step: 'api', nth: 2, effect: { delay_ms: 200 } })
    for (let i = 0; i < 2; i++) await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    const list = (await c.control('/rules')).body
    expect(list.rules.slice(0, 3)).toEqual([
      { id: 'slow-api', source: 'runtime', used: 1, match: { ending: '001' }, step: 'api', nth: 2, effect: { delay_ms: 200 } },
      expect.objectContaining({ id: 'scenario-barred', source: 'fixtures/scenarios/barred.json', used: 0 }),
      expect.objectContaining({ id: 'ok-000-099', source: 'fixtures/world.json', used: 1 }),
    ])
    expect(list.runtime).toEqual([expect.objectContaining({ id: 'slow-api', seq: 1 })])
  })

  it('refuses an effect the step does not take, naming the steps that take it', async () => {
    const bad = await c.control('/rules', { step: 'verify', effect: { cancel_after: 'P1D' } })
    expect(bad).toEqual({
      status: 400,
      body: { error: 'BAD_RULE', message: 'effect.cancel_after: step verify does not take cancel_after (the steps that take it: activate)' },
    })
  })

  it('refuses an unknown carrier, naming the carriers', async () => {
    const unknown = await c.control('/rules', { step: 'init', match: { carrier: 'sbx-my-opt' } })
    expect(unknown.body.message).toMatch(/^match\.carrier: unknown carrier "sbx-my-opt" \(carriers: /)
  })

  it('refuses an ending range no MSISDN ends in', async () => {
    // A range no MSISDN ends in would load and never decide anything.
    for (const [range, why] of [
      [['099', '000'], 'the first ending is above the second'],
      [['5', '099'], 'both endings need as many digits'],
    ]) {
      const none = await c.control('/rules', { step: 'init', match: { ending_range: range }, effect: { error: 'BARRED' } })
      expect(none).toEqual({
        status: 400,
        body: { error: 'BAD_RULE', message: `match.ending_range: ${why}, so no MSISDN matches (got ${JSON.stringify(range)})` },
      })
    }
  })

  it('refuses a match whose parts no number satisfies together', async () => {
    // Parts of a match that no number satisfies together (a support engineer's slip, found at once).
    for (const [match, message] of [
      [{ carrier: 'sbx-gb-otp', country: 'my' }, 'match.carrier: carrier "sbx-gb-otp" is in "gb", not "my": the rule would match no MSISDN'],
      [{ msisdn: '999123456001' }, 'match.msisdn: no carrier has number 999123456001: the rule would match no MSISDN'],
      [{ msisdn: '60123456001', country: 'gb' }, 'match.msisdn: no carrier in "gb" has number 60123456001: the rule would match no MSISDN'],
      [{ msisdn: '60123456001', ending: '002' }, 'match.ending: 60123456001 does not end in 002: the rule would match no MSISDN'],
      [{ prefix: '999' }, 'match.prefix: no carrier has numbers starting with 999: the rule would match no MSISDN'],
      [{ prefix: '4477', carrier: 'sbx-my-otp' }, 'match.prefix: carrier sbx-my-otp has no numbers starting with 4477: the rule would match no MSISDN'],
    ] as const) {
      const never = await c.control('/rules', { step: 'init', match, effect: { error: 'BARRED' } })
      expect(never, JSON.stringify(match)).toEqual({ status: 400, body: { error: 'BAD_RULE', message } })
    }
  })

  it('refuses a step that no carrier of the match has', async () => {
    // A step only carriers of one flow have, where the match leaves none of them: it would never happen.
    for (const [rule, message] of [
      [
        { match: { carrier: 'sbx-my-psms' }, step: 'otp', effect: { otp: '4242' } },
        'step: step "otp" happens only on otp carriers and carrier sbx-my-psms is a psms carrier: the rule would decide nothing',
      ],
      [
        { match: { country: 'my' }, step: ['init', 'consent'], effect: { error: 'BARRED' } },
        'step.1: step "consent" happens only on redirect carriers and no carrier in "my" is a redirect carrier: the rule would never decide it (leave it out of "step")',
      ],
      [
        { match: { carrier: 'sbx-bg-redirect' }, step: 'mo', effect: { error: 'BARRED' } },
        'step: step "mo" happens only on psms carriers and carrier sbx-bg-redirect is a redirect carrier: the rule would decide nothing',
      ],
      [
        { match: { carrier: 'sbx-my-psms' }, step: ['charge', 'otp'], effect: {} },
        'step.1: step "otp" happens only on otp carriers and carrier sbx-my-psms is a psms carrier: the rule would never decide it (leave it out of "step")',
      ],
      [
        { match: { country: 'gb' }, step: 'consent', effect: { error: 'BARRED' } },
        'step: step "consent" happens only on redirect carriers and no carrier in "gb" is a redirect carrier: the rule would decide nothing',
      ],
      [
        { match: { carrier: 'sbx-bg-redirect' }, step: 'otp', effect: { otp: '4242' } },
        'step: step "otp" happens only on otp carriers and carrier sbx-bg-redirect is a redirect carrier: the rule would decide nothing',
      ],
      [
        { match: { carrier: 'sbx-my-otp' }, step: 'consent', effect: { error: 'BARRED' } },
        'step: step "consent" happens only on redirect carriers and carrier sbx-my-otp is an otp carrier: the rule would decide nothing',
      ],
      [
        { match: { country: 'bg' }, step: 'mo', effect: { error: 'BARRED' } },
        'step: step "mo" happens only on psms carriers and no carrier in "bg" is a psms carrier: the rule would decide nothing',
      ],
      // The numbers say the carrier too: 6013 is sbx-my-psms's.
      [
        { match: { prefix: '6013' }, step: 'otp', effect: { otp: '4242' } },
        'step: step "otp" happens only on otp carriers and no carrier with numbers starting with 6013 is an otp carrier: the rule would decide nothing',
      ],
      // And the service: GAMECLUB is sold in my and gb, where no carrier is a redirect one.
      [
        { match: { service: 'GAMECLUB' }, step: 'consent', effect: { error: 'NOT_ELIGIBLE' } },
        'step: step "consent" happens only on redirect carriers and no carrier of service GAMECLUB is a redirect carrier: the rule would decide nothing',
      ],
      [
        { match: { msisdn: '60131234567' }, step: 'consent', effect: { error: 'BARRED' } },
        'step: step "consent" happens only on redirect carriers and no carrier with number 60131234567 is a redirect carrier: the rule would decide nothing',
      ],
    ] as const) {
      const never = await c.control('/rules', rule)
      expect(never, JSON.stringify(rule)).toEqual({ status: 400, body: { error: 'BAD_RULE', message } })
    }
  })

  it('takes a step that some carrier of the match has', async () => {
    // Where some carrier of the match has the step, the rule is taken: consent in bg, OTPs anywhere in my.
    for (const [id, rule] of [
      ['consent-bg', { match: { country: 'bg' }, step: 'consent', effect: { error: 'BARRED' } }],
      ['otp-my', { match: { country: 'my' }, step: 'otp', effect: { otp: '4242' } }],
      // 601 covers an OTP carrier's numbers (6012) beside the PSMS carrier's.
      ['otp-601', { match: { prefix: '601' }, step: 'otp', effect: { otp: '4242' } }],
      ['consent-streamplus', { match: { service: 'STREAMPLUS' }, step: 'consent', effect: { error: 'NOT_ELIGIBLE' } }],
    ] as const)
      expect((await c.control('/rules', { id, ...rule })).status, id).toBe(200)
  })

  it("takes a prefix shorter or longer than a carrier's", async () => {
    // A prefix shorter or longer than a carrier's is fine: 60 covers Malaysia, 6012345 part of one carrier.
    for (const prefix of ['60', '6012345'])
      expect((await c.control('/rules', { id: `p${prefix}`, step: 'init', match: { prefix }, effect: { error: 'BARRED' } })).status).toBe(200)
  })
})

describe('POST /_sandbox/reset with a clock', () => {
  let c: Client
  beforeAll(async () => {
    c = await startClient({ fixtures: ['fixtures/scenarios/barred.json'], clock: '2026-06-01T00:00:00' })
  })
  afterAll(() => c.close())

  it('sets the clock to that time, frozen', async () => {
    const reset = await c.control('/reset', { clock: '2025-01-01T00:00:00' })
    expect(reset.status).toBe(200)
    expect(reset.body.clock).toMatchObject({ now: '2025-01-01T00:00:00.000000', frozen: true })
  })

  it("drops the runtime rules, leaving the fixtures' rules unused", async () => {
    // A runtime rule, used once, that the reset must drop.
    await c.control('/rules', { id: 'slow-api', match: { ending: '001' }, step: 'api', effect: { delay_ms: 1 } })
    await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    expect((await c.control('/rules')).body.rules[0]).toMatchObject({ id: 'slow-api', used: 1 })
    await c.control('/reset', { clock: '2025-01-01T00:00:00' })
    expect((await c.control('/rules')).body.rules[0]).toMatchObject({ id: 'scenario-barred', used: 0 })
  })

  it('refuses a clock that is not a time', async () => {
    expect((await c.control('/reset', { clock: 'soon' })).body.error).toBe('BAD_TIME')
    expect((await c.control('/reset', { clock: 5 })).status).toBe(400)
  })
})
