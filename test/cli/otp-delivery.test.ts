/**
 * The binary and the SMS channel: `dcb otp --id`, `dcb otp --wait` woken by `dcb clock advance` from
 * another process (ending 632: every OTP two minutes late), an OTP never delivered (ending 631), and
 * `dcb rules add` with the two new effects and their refused values.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { nextRequest } from '../wait.js'
import { dcb } from './run.js'

let c: Client
beforeAll(async () => {
  c = await startClient({ clock: '2026-01-31T00:00:00' })
})
afterAll(() => c.close())
beforeEach(async () => {
  await c.control('/reset', {})
})

const run = (args: string[]) => dcb(args, { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined, DCB_SESSION: undefined } })
const init = async (msisdn: string) =>
  (await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })).body.payload.verif_request_id as string

describe('dcb otp --id', () => {
  it("prints that verification request's OTP, whatever later Inits sent", async () => {
    const first = await init('60123456071')
    const firstOtp = (await c.control('/otp?msisdn=60123456071')).body.otp as string
    await init('60123456071')
    const r = await run(['otp', '--id', first])
    expect(r).toEqual({ code: 0, stdout: `${firstOtp}\n`, stderr: '' })
  })

  it('exits 1 naming an unknown id', async () => {
    const r = await run(['otp', '--id', 'nope-42'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^dcb: VERIFICATION_NOT_FOUND: no verification request "nope-42" in this session/)
  })

  it('takes exactly one of MSISDN or --id, else it is a usage error (exit 2)', async () => {
    for (const args of [['otp'], ['otp', '60123456071', '--id', 'x']]) {
      const bad = await run(args)
      expect(bad.code).toBe(2)
      expect(bad.stderr).toBe('dcb: usage: dcb otp MSISDN, or dcb otp --id VERIF_REQUEST_ID (one of them)\n')
    }
  })
})

describe('an OTP that never comes, or comes late', () => {
  it('ending 631: dcb otp exits 1 NO_OTP naming the rule', async () => {
    const id = await init('60123456631')
    for (const args of [
      ['otp', '60123456631'],
      ['otp', '--id', id],
    ]) {
      const r = await run(args)
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/^dcb: NO_OTP: .* was never delivered: rule otp-631 \(ending 631\): OTP SMS not delivered/)
    }
  })

  it('ending 632: dcb otp --wait waits for it, woken by dcb clock advance PT3M from another process', async () => {
    const id = await init('60123456632')
    const arrived = nextRequest(c.sandbox.server, '/_sandbox/otp')
    const waiting = run(['otp', '60123456632', '--wait', '60'])
    await arrived
    const moved = await run(['clock', 'advance', 'PT3M'])
    expect(moved.code).toBe(0)
    const got = await waiting
    expect(got.code).toBe(0)
    expect(got.stdout).toMatch(/^\d{4}\n$/)
    const json = JSON.parse((await run(['otp', '--id', id, '--json'])).stdout)
    expect(json).toMatchObject({ otp: got.stdout.trim(), sent_dt: '2026-01-31T00:00:00.000000', delivered_dt: '2026-01-31T00:02:00.000000' })
  })
})

describe('dcb rules add with deliver and deliver_after', () => {
  it('adds rules whose OTP is never delivered, or delivered late, as they say', async () => {
    const r = await run(['rules', 'add', JSON.stringify({ match: { msisdn: '60123456072' }, step: 'otp', effect: { otp: '2468', deliver: false } })])
    expect(r.code).toBe(0)
    const late = await run(['rules', 'add', JSON.stringify({ match: { msisdn: '60123456073' }, step: 'otp', effect: { deliver_after: 'PT30S' } })])
    expect(late.code).toBe(0)
    await init('60123456072')
    await init('60123456073')
    expect((await run(['otp', '60123456072'])).stderr).toMatch(/^dcb: NO_OTP: .*never delivered: rule rt-/)
    expect((await run(['otp', '60123456073'])).stderr).toMatch(/^dcb: NO_OTP: .*has not reached the inbox yet: rule rt-.*PT30S late/)
  })

  const refused: [unknown, string][] = [
    [
      { step: 'otp', effect: { deliver: true } },
      'BAD_RULE: effect.deliver: only false (the SMS is never delivered); leave deliver out for an SMS delivered at once',
    ],
    [{ step: 'otp', effect: { deliver_after: '-PT2M' } }, 'BAD_RULE: effect.deliver_after: not a duration'],
    [{ step: 'otp', effect: { deliver_after: 'PT0S' } }, 'BAD_RULE: effect.deliver_after: "PT0S" is no delay'],
    [{ step: 'otp', effect: { deliver_after: 'P2D' } }, 'BAD_RULE: effect.deliver_after: "P2D" is longer than the longest an SMS is held back: at most P1D'],
    [{ step: 'otp', effect: { deliver: false, deliver_after: 'PT2M' } }, 'BAD_RULE: effect: give either deliver: false'],
    [{ step: 'verify', effect: { deliver: false } }, 'BAD_RULE: effect.deliver: step verify does not take deliver (the steps that take it: otp)'],
  ]
  it.each(refused)('refuses %j by name, adding nothing', async (rule, message) => {
    const r = await run(['rules', 'add', JSON.stringify(rule)])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`dcb: ${message}`)
    expect((await c.control('/rules')).body.runtime).toEqual([])
  })
})

describe('a fixture file with the new effects', () => {
  it('dcb fixtures validate refuses every bad value, naming the file, the JSON path, the value', async () => {
    const t = tempDir()
    const f = join(t.dir, 'sms.json')
    const bad = [{ deliver: true }, { deliver_after: 'P1M' }, { deliver_after: 'PT25H' }, { deliver_after: '2M' }, { deliver: false, deliver_after: 'PT1M' }]
    writeFileSync(f, JSON.stringify({ rules: bad.map((effect, i) => ({ id: `r${i}`, step: 'otp', effect })) }))
    const v = await dcb(['fixtures', 'validate', f])
    expect(v.code).toBe(1)
    for (const line of [
      `${f}: $.rules[0].effect.deliver: only false (the SMS is never delivered)`,
      `${f}: $.rules[1].effect.deliver_after: "P1M" has months or years, which have no fixed length`,
      `${f}: $.rules[2].effect.deliver_after: "PT25H" is longer than the longest an SMS is held back: at most P1D`,
      `${f}: $.rules[3].effect.deliver_after: "2M" is ambiguous`,
      `${f}: $.rules[4].effect: give either deliver: false (never delivered) or deliver_after (delivered late), not both`,
    ])
      expect(v.stderr).toContain(line)
    t.cleanup()
  })

  it('dcb fixtures validate loads a good one', async () => {
    const t = tempDir()
    const f = join(t.dir, 'sms.json')
    writeFileSync(f, JSON.stringify({ rules: [{ id: 'late', match: { ending: '079' }, step: 'otp', effect: { otp: '1357', deliver_after: 'PT10M' } }] }))
    expect((await dcb(['fixtures', 'validate', f])).code).toBe(0)
    t.cleanup()
  })
})
