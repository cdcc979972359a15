/**
 * A world object gets the checks a fixture file gets, in the packed package: a carrier setting its
 * flow never reads is refused (FixtureError, the message `dcb fixtures validate` prints, the source
 * named `world`), and a layer that takes countries from a service is warned about. Both loaded
 * without a word through `createSandbox({ world })` and `startSandbox({ world })`, and the library
 * dropped every fixture warning (`fixtures` too).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
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

  it('a carrier setting its flow never reads is refused by createSandbox and startSandbox as FixtureError naming each', async () => {
    const r = await packed.script(`import { createSandbox, startSandbox, FixtureError } from 'dcb-sandbox'
const world = ${JSON.stringify(SETTINGS)}
const said = (e) => ({ fixtureError: e instanceof FixtureError, problems: e.problems, message: e.message })
const sandbox = await createSandbox({ world }).then(() => 'taken', said)
const server = await startSandbox({ world, inMemory: true, port: 0 }).then(async (s) => { await s.close(); return 'taken' }, said)
// The default values change nothing either way: a world() document gives every carrier them.
const fine = await createSandbox({ world: { extends: 'default', carriers: [{ code: 'sbx-my-psms', otp: { length: 4, ttl: '5m', max_attempts: 3 }, consent_ttl: 'PT5M' }] } })
const again = await createSandbox({ world: await fine.world() })
console.log(JSON.stringify({ sandbox, server, again: (await again.world()).carriers.length }))`)
    const refused = { fixtureError: true, problems: REFUSED, message: REFUSED.join('\n') }
    const out = JSON.parse(r.stdout)
    expect(out).toEqual({ sandbox: refused, server: refused, again: expect.any(Number) })
    expect(out.again).toBeGreaterThan(0)
    expect(r.code).toBe(0)
  })

  it('warnings go to onWarning (createSandbox and startSandbox alike), else to console.warn once per process; fixtures files warn too', async () => {
    writeFileSync(join(packed.app, 'th.json'), JSON.stringify({ ...THAILAND, extends: undefined }))
    const r = await packed.script(`import { createSandbox, startSandbox } from 'dcb-sandbox'
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
    expect(JSON.parse(r.stdout)).toEqual({
      heard: { sandbox: [dropped('world')], server: [dropped('world')], fixtures: [dropped('th.json')] },
      refused: 'BAD_REQUEST: onWarning must be a function taking the warning\'s text (got "log")',
      said: [`dcb-sandbox: warning: ${dropped('world')}`],
    })
    expect(r.code).toBe(0)
  })
})
