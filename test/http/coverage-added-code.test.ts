/**
 * A carrier code added to the engine's table of outcome codes (src/core/outcomes.ts) is a coverage
 * outcome at once, with nothing else changed: rules take it, Init and Verify answer it, and coverage
 * lists it with its `how`, counts it, and counts it per code in `renewal.failed`. The table is
 * extended in place before any module reads it, as one more entry written in the source would be;
 * everything else is the real server over loopback.
 */
import { describe, expect, it, vi } from 'vitest'
import { useSandbox } from '../helpers.js'

const ADDED = 'SIM_SWAPPED'

// The table gets one more entry before any module reads it, as a line added to the source would.
vi.mock('../../src/core/outcomes.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/core/outcomes.js')>()
  const added = 'SIM_SWAPPED' as (typeof real.CARRIER_CODES)[number]
  ;(real.CARRIER_CODES as unknown as string[]).push(added)
  ;(real.OUTCOMES as Record<string, unknown>)[added] = { http: 200, message: added, payload: 'absent', describe: 'the SIM was swapped recently' }
  for (const op of ['init', 'verify'] as const) (real.OPERATION_OUTCOMES[op] as unknown as string[]).push(added)
  return real
})

const c = useSandbox({ clock: '2026-01-31T09:00:00' })
const outcome = async (id: string) => (await c.control('/coverage?merchant=demo')).body.coverage[0].outcomes.find((o: any) => o.id === id)

describe('a carrier code added to the engine', () => {
  const init = (msisdn: string) => c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
  /** Rules that give it at Init (771), at the first charge (772) and at a renewal (773). */
  async function rulesGiveIt() {
    for (const [id, step, ending] of [
      ['swap-init', 'init', '771'],
      ['swap-charge', 'charge', '772'],
      ['swap-renewal', 'renewal', '773'],
    ])
      expect((await c.control('/rules', { id, match: { ending }, step, effect: { error: ADDED } })).status).toBe(200)
  }

  // Before any rule gives it: not listed (the world cannot produce it), so not in the total.
  it('is not listed before a rule gives it', async () => {
    expect(await outcome(`init.${ADDED}`)).toBeUndefined()
  })

  it('is listed at Init, with how to produce it, once a rule gives it', async () => {
    await rulesGiveIt()
    expect(await outcome(`init.${ADDED}`)).toEqual({ id: `init.${ADDED}`, count: 0, how: 'Init a number ending 771 (rule swap-init)' })
  })

  it('is listed at Verify, with how to produce it, once a rule gives it', async () => {
    await rulesGiveIt()
    expect(await outcome(`verify.${ADDED}`)).toEqual({ id: `verify.${ADDED}`, count: 0, how: 'Verify (after Init) for a number ending 772 (rule swap-charge)' })
  })

  it('is counted at an Init that answers it', async () => {
    await rulesGiveIt()
    expect((await init('60123456771')).body).toMatchObject({ status: 'FAIL', message: ADDED })
    expect(await outcome(`init.${ADDED}`)).toEqual({ id: `init.${ADDED}`, count: 1 })
  })

  it('is counted at a Verify that answers it', async () => {
    await rulesGiveIt()
    const started = (await init('60123456772')).body.payload.verif_request_id
    const otp = (await c.control('/otp?msisdn=60123456772')).body.otp
    expect((await c.api('/subscriptions/verify', { verif_request_id: started, otp })).body).toMatchObject({ status: 'FAIL', message: ADDED })
    expect(await outcome(`verify.${ADDED}`)).toEqual({ id: `verify.${ADDED}`, count: 1 })
  })

  it('is counted per code in renewal.failed', async () => {
    await rulesGiveIt()
    await c.subscribe('60123456773')
    await c.control('/clock/advance', { by: 'P1M' })
    expect(await outcome('renewal.failed')).toEqual({ id: 'renewal.failed', count: 1, codes: { [ADDED]: 1 } })
  })
})
