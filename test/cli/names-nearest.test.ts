/**
 * A mistyped service, country or carrier, wherever the CLI takes one, is refused in one line with a
 * non-zero exit naming the nearest name the world has ("did you mean STREAMPLUS?"); a name near
 * nothing names none, and Init never names another merchant's service. Through the binary against
 * a real server (dcb seed: against the default world, no server).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { existsSync } from 'node:fs'
import { tempDir, useSandbox, writeJson } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())
const run = (args: string[]) => dcb(args, { env: { DCB_BASE_URL: c.url, DCB_SESSION: undefined } })
const init = (service: string, country: string) => run(['init', '--msisdn', '60123456001', '--service', service, '--country', country])
/** The whole output is one line (stdout or stderr), and the command failed. */
const oneLine = (r: { code: number | null; stdout: string; stderr: string }) => {
  expect(r.code).not.toBe(0)
  const text = r.stdout + r.stderr
  expect(text.trim().split('\n')).toHaveLength(1)
  return text.trim()
}

describe('dcb flow: a mistyped --country', () => {
  it('is refused in one line naming the nearest country', async () => {
    const line = oneLine(await run(['flow', '--country', 'mx']))
    expect(line).toMatch(/^dcb: --country "mx" is not in the sandbox world; valid: .*; did you mean my\?$/)
  })
})

describe('dcb init: the server says the nearest name', () => {
  it('a mistyped service names the nearest of the merchant’s services', async () => {
    const r = await init('STREAMPLU', 'my')
    expect(r.code).toBe(1)
    expect(oneLine(r)).toBe('✘ FAIL init: MERCHANT_SERVICE_NOT_CONFIGURED (HTTP 403): merchant demo has no service "STREAMPLU"; did you mean STREAMPLUS?')
    expect(oneLine(await init('gameclb', 'my'))).toMatch(/; did you mean GAMECLUB\?$/)
    // The reason is the server's: the header and the request log say it too.
    const logged = (await c.control('/requests?limit=1')).body.requests[0]
    expect(logged.reason).toBe('merchant demo has no service "gameclb"; did you mean GAMECLUB?')
  })

  it('a mistyped country (two letters, one off) names the nearest country', async () => {
    expect(oneLine(await init('STREAMPLUS', 'mx'))).toMatch(/: service STREAMPLUS has no integration in mx; did you mean my\?$/)
    expect(oneLine(await init('STREAMPLUS', 'gr'))).toMatch(/: service STREAMPLUS has no integration in gr; did you mean gb\?$/)
  })

  it('a country with no single nearest one, or one the world has, names none', async () => {
    // Two countries one letter away: no guess.
    expect(oneLine(await init('STREAMPLUS', 'bb'))).toMatch(/: service STREAMPLUS has no integration in bb$/)
    expect(oneLine(await init('STREAMPLUS', 'fr'))).toMatch(/: service STREAMPLUS has no integration in fr$/)
    // bg is a country of the world: GAMECLUB is not sold there, no typo.
    expect(oneLine(await init('GAMECLUB', 'bg'))).toMatch(/: service GAMECLUB has no integration in bg$/)
  })

  it('never names another merchant’s service', async () => {
    // NEWSDAILY is merchant other's: to demo it is unknown, as any other.
    expect(oneLine(await init('NEWSDAIL', 'my'))).toMatch(/: merchant demo has no service "NEWSDAIL"$/)
  })

  it('names none for a name near nothing', async () => {
    expect(oneLine(await init('NOPE', 'my'))).toMatch(/: merchant demo has no service "NOPE"$/)
  })

  it('dcb flow --service: the same reason, exit 1', async () => {
    const r = await run(['flow', '--service', 'STREAMPLU', '--country', 'my'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/✘ FAIL MERCHANT_SERVICE_NOT_CONFIGURED \(HTTP 403\): merchant demo has no service "STREAMPLU"; did you mean STREAMPLUS\?\n/)
  })
})

describe('the control commands', () => {
  it('dcb subscriptions --service: one line, exit 1', async () => {
    const r = await run(['subscriptions', '--service', 'STREAMPLU'])
    expect(r.code).toBe(1)
    expect(oneLine(r)).toMatch(/^dcb: BAD_REQUEST: service: no service "STREAMPLU" in the world \(services: .*\); did you mean STREAMPLUS\?$/)
  })

  it('dcb rules add: each mistyped name in match (carrier, service, country) names the nearest', async () => {
    const rule = (match: object) => JSON.stringify({ match, step: 'init', effect: { error: 'BARRED' } })
    const carrier = await run(['rules', 'add', rule({ carrier: 'sbx-my-opt' })])
    expect(oneLine(carrier)).toMatch(/^dcb: BAD_RULE: match\.carrier: unknown carrier "sbx-my-opt" \(carriers: .*\); did you mean sbx-my-otp\?$/)
    const service = await run(['rules', 'add', rule({ service: 'STREAMPLU' })])
    expect(oneLine(service)).toMatch(/; did you mean STREAMPLUS\?$/)
    const country = await run(['rules', 'add', rule({ country: 'mx' })])
    expect(oneLine(country)).toBe('dcb: BAD_RULE: match.country: unknown country "mx" (countries: bg, gb, my); did you mean my?')
    expect((await c.control('/rules')).body.rules.filter((r: { source: string }) => r.source === 'runtime')).toEqual([])
  })
})

describe('dcb seed', () => {
  const data = join(tmp.dir, 'seed.json')
  const seed = (...args: string[]) => dcb(['seed', '--subscriptions', '3', '--data', data, ...args])
  it.each([
    [['--service', 'STREAMPLU'], 'no integration STREAMPLU/my for merchant demo in the sandbox world; did you mean STREAMPLUS?'],
    [['--country', 'mx'], 'no integration STREAMPLUS/mx for merchant demo in the sandbox world; did you mean my?'],
    [['--merchant', 'dem'], 'no integration STREAMPLUS/my for merchant dem in the sandbox world; did you mean demo?'],
    [['--service', 'NEWSDAIL'], 'no integration NEWSDAIL/my for merchant demo in the sandbox world'],
  ])('%j: one line naming the nearest, exit 2, the data file untouched', async (args, line) => {
    const r = await seed(...args)
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `dcb: ${line}\n`])
    expect(existsSync(data)).toBe(false)
  })
})

describe('dcb fixtures validate', () => {
  it('a mistyped country, carrier or merchant of a record names the nearest', async () => {
    const file = writeJson(tmp.dir, 'typos.json', {
      carriers: [{ code: 'sbx-my-otp', country: 'mx' }],
      services: [{ code: 'STREAMPLUS', merchant: 'dem', integrations: [{ country: 'my', carriers: ['sbx-my-opt'] }] }],
    })
    const r = await dcb(['fixtures', 'validate', file])
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toEqual([
      `${file}: $.carriers[0].country: unknown country "mx"; did you mean my?`,
      `${file}: $.services[0].merchant: unknown merchant "dem"; did you mean demo?`,
      `${file}: $.services[0].integrations[0].carriers[0]: unknown carrier "sbx-my-opt"; did you mean sbx-my-otp?`,
      'dcb: 3 problems found',
    ])
  })
})
