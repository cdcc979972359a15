import { describe, expect, it } from 'vitest'
import { describePeriod, parseDuration } from '../../src/core/time.js'
import { engineAt } from './harness.js'

const welcome = (engine: ReturnType<typeof engineAt>['engine'], msisdn: string) => engine.smsFor(msisdn).find((m) => m.kind === 'welcome')!.text

describe('SMS texts are wholly in the message language', () => {
  it('the period word follows the language (no "setiap week", no "на month")', async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    const demo = engine.authenticate('sandbox-demo-key')!
    for (const [msisdn, service, country, language] of [
      ['60123456001', 'GAMECLUB', 'my', 'ms'],
      ['359871234001', 'STREAMPLUS', 'bg', 'bg'],
      ['60123456002', 'GAMECLUB', 'my', 'en'],
    ] as const) {
      const init = await engine.init(demo, { msisdn, service_code: service, country_code: country, language }, { baseUrl: 'http://sandbox.test' })
      const otp = engine.latestOtp(msisdn)!.otp!
      expect((await engine.verify(demo, { verif_request_id: init.payload!.verif_request_id as string, otp })).code).toBe('SUCCESS')
    }
    expect(welcome(engine, '60123456001')).toMatch(/setiap minggu\.$/)
    expect(welcome(engine, '359871234001')).toMatch(/ на месец\.$/)
    expect(welcome(engine, '60123456002')).toMatch(/ per week\.$/)
  })

  const d = (s: string) => parseDuration(s)!

  it('describePeriod words a period per language, plurals included', () => {
    expect([describePeriod(d('P1M')), describePeriod(d('P1M'), 'ms'), describePeriod(d('P1M'), 'bg')]).toEqual(['month', 'bulan', 'месец'])
    expect([describePeriod(d('P2W')), describePeriod(d('P2W'), 'ms'), describePeriod(d('P2W'), 'bg')]).toEqual(['2 weeks', '2 minggu', '2 седмици'])
    expect([describePeriod(d('P1Y'), 'bg'), describePeriod(d('PT1H'), 'ms')]).toEqual(['година', 'jam'])
  })

  it('describePeriod words a period in English for a language without words', () => {
    expect(describePeriod(d('P3D'), 'xx')).toBe('3 days')
  })

  it("a PSMS subscription's welcome SMS uses the language of the latest Init for that MSISDN and service", async () => {
    const { engine } = engineAt('2026-01-31T09:00:00')
    const demo = engine.authenticate('sandbox-demo-key')!
    const init = (msisdn: string, language?: string) =>
      engine.init(demo, { msisdn, service_code: 'STREAMPLUS', country_code: 'my', ...(language ? { language } : {}) }, { baseUrl: 'http://sandbox.test' })
    await init('60133456001', 'ms-MY')
    expect(await engine.mo({ msisdn: '60133456001', short_code: '32123', text: 'STREAM' })).toMatchObject({ action: 'subscribed' })
    expect(welcome(engine, '60133456001')).toBe('Selamat datang ke Stream Plus! Langganan anda 9.90 MYR setiap bulan. Hantar STOP ke 32123 untuk batal.')
    // The latest Init counts: one in Malay, then one without a language (the service's default).
    await init('60133456002', 'ms')
    await init('60133456002')
    await engine.mo({ msisdn: '60133456002', short_code: '32123', text: 'STREAM' })
    expect(welcome(engine, '60133456002')).toMatch(/^Welcome to Stream Plus! .* per month\./)
    // No Init at all: the service's default language.
    await engine.mo({ msisdn: '60133456003', short_code: '32123', text: 'STREAM' })
    expect(welcome(engine, '60133456003')).toMatch(/^Welcome to Stream Plus!/)
  })
})
