/**
 * A world object gets the checks a fixture file gets, in the packed package: a carrier setting its
 * flow never reads is refused (FixtureError, the message `dcb fixtures validate` prints, the source
 * named `world`), and a layer that takes countries from a service is warned about. Both loaded
 * without a word through `createSandbox({ world })` and `startSandbox({ world })`, and the library
 * dropped every fixture warning (`fixtures` too).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { packedConsumer } from './packed.js'

const SETTINGS = {
  extends: 'default',
  carriers: [
    { code: 'sbx-my-psms', otp: { ttl: 'PT1M' } },
    { code: 'sbx-my-otp', consent_ttl: 'PT1M', short_code: '1234' },
    // Each on the flow that reads it: taken.
    { code: 'sbx-bg-redirect', consent_ttl: 'PT2M' },
    { code: 'sbx-gb-otp', otp: { ttl: 'PT2M' } },
  ],
}
const REFUSED = [
  'world: $.carriers[0].otp: carrier "sbx-my-psms" is a PSMS carrier, which has no use for OTP settings (an OTP carrier has): it would take no effect',
  'world: $.carriers[1].short_code: carrier "sbx-my-otp" is an OTP carrier, which has no use for a short code (a PSMS carrier has): it would take no effect',
  'world: $.carriers[1].consent_ttl: carrier "sbx-my-otp" is an OTP carrier, which has no use for a consent link time (a redirect carrier has): it would take no effect',
]

const THAILAND = {
  extends: 'default',
  countries: [{ code: 'th', name: 'Thailand', calling_code: '66', lengths: [11] }],
  carriers: [{ code: 'sbx-th-psms', name: 'Sandbox TH PSMS', country: 'th', prefixes: ['668'], flow: 'psms', short_code: '4545' }],
  services: [{ code: 'STREAMPLUS', integrations: [{ country: 'th', price: { amount: '99', currency: 'THB' } }] }],
}
const dropped = (source: string) =>
  `${source}: $.services[0].integrations: replaces the integrations of service "STREAMPLUS" (a list replaces the earlier one whole), so it is no longer sold in my, gb, bg; to add a country, list those integrations too`

describe('a world object is checked as a fixture file is, in the packed package', () => {
  const packed = packedConsumer()

  describe('a carrier setting its flow never reads', () => {
    let r: { code: number; out: string; stdout: string }
    let out: { sandbox: unknown; server: unknown; again: number }
    const refused = { fixtureError: true, problems: REFUSED, message: REFUSED.join('\n') }
    // One script run for these tests: each reads its own part of what it printed.
    beforeAll(async () => {
      r = await packed.script(`import { createSandbox, startSandbox, FixtureError } from 'dcb-sandbox'
const world = ${JSON.stringify(SETTINGS)}
const said = (e) => ({ fixtureError: e instanceof FixtureError, problems: e.problems, message: e.message })
const sandbox = await createSandbox({ world }).then(() => 'taken', said)
const server = await startSandbox({ world, inMemory: true, port: 0 }).then(async (s) => { await s.close(); return 'taken' }, said)
// The default values change nothing either way: a world() document gives every carrier them.
const fine = await createSandbox({ world: { extends: 'default', carriers: [{ code: 'sbx-my-psms', otp: { length: 4, ttl: '5m', max_attempts: 3 }, consent_ttl: 'PT5M' }] } })
const again = await createSandbox({ world: await fine.world() })
console.log(JSON.stringify({ sandbox, server, again: (await again.world()).carriers.length }))`)
      out = JSON.parse(r.stdout) as typeof out
    })

    it('is refused by createSandbox as a FixtureError naming each', () => {
      expect(r.code).toBe(0)
      expect(out.sandbox).toEqual(refused)
    })

    it('is refused by startSandbox as a FixtureError naming each', () => {
      expect(out.server).toEqual(refused)
    })

    it('is taken when it repeats the default value, so a world() document loads again', () => {
      expect(out).toEqual({ sandbox: refused, server: refused, again: expect.any(Number) })
      expect(out.again).toBeGreaterThan(0)
    })
  })

  describe('warnings', () => {
    let r: { code: number; out: string; stdout: string }
    let out: { heard: Record<'sandbox' | 'server' | 'fixtures', string[]>; refused: string; said: string[] }
    // One script run for these tests: each reads its own part of what it printed.
    beforeAll(async () => {
      writeFileSync(join(packed.app, 'th.json'), JSON.stringify({ ...THAILAND, extends: undefined }))
      r = await packed.script(`import { createSandbox, startSandbox } from 'dcb-sandbox'
const world = ${JSON.stringify(THAILAND)}
const heard = { sandbox: [], server: [], fixtures: [] }
await createSandbox({ world, onWarning: (w) => heard.sandbox.push(w) })
await (await startSandbox({ world, inMemory: true, port: 0, onWarning: (w) => heard.server.push(w) })).close()
await createSandbox({ fixtures: 'th.json', onWarning: (w) => heard.fixtures.push(w) })
const refused = await createSandbox({ world, onWarning: 'log' }).then(() => 'taken', (e) => e.code + ': ' + e.message)
// Without onWarning: console.warn, once for the two sandboxes of the same world.
const warn = console.warn
const said = []
console.warn = (...args) => said.push(args.join(' '))
await createSandbox({ world })
await createSandbox({ world })
await createSandbox()
console.warn = warn
console.log(JSON.stringify({ heard, refused, said }))`)
      out = JSON.parse(r.stdout) as typeof out
    })

    it('go to the onWarning of createSandbox', () => {
      expect(r.code).toBe(0)
      expect(out.heard.sandbox).toEqual([dropped('world')])
    })

    it('go to the onWarning of startSandbox alike', () => {
      expect(out.heard.server).toEqual([dropped('world')])
    })

    it('come from a fixtures file too', () => {
      expect(out.heard.fixtures).toEqual([dropped('th.json')])
    })

    it('refuse an onWarning that is not a function', () => {
      expect(out.refused).toBe('BAD_REQUEST: onWarning must be a function taking the warning\'s text (got "log")')
    })

    it('go to console.warn without onWarning, once per process', () => {
      expect(out.said).toEqual([`dcb-sandbox: warning: ${dropped('world')}`])
    })
  })
})
