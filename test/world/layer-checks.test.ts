/**
 * The checks a world gets on top of the engine's layering (`src/world/layer-checks.ts`), called
 * directly with layers: a carrier setting its flow never reads, a service whose integrations a later
 * layer replaced, and the problems found before layering.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { LayerInput } from '../../src/core/layering.js'
import { FixtureError } from '../../src/world/default-world.js'
import { layerChecked } from '../../src/world/layer-checks.js'

const base: LayerInput = { source: 'world.json', data: JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'world.json'), 'utf8')) }

function problems(layers: LayerInput[], before: string[] = []): string[] {
  try {
    layerChecked(layers, before)
  } catch (e) {
    if (e instanceof FixtureError) return e.problems
    throw e
  }
  throw new Error('layerChecked took the layers')
}

describe('layerChecked', () => {
  it('refuses a carrier setting its flow never reads, naming the layer, the path, the flow that has it', () => {
    const layer = { source: 'psms.json', data: { carriers: [{ code: 'sbx-my-psms', otp: { ttl: 'PT1M' } }] } }
    expect(problems([base, layer])).toEqual([
      'psms.json: $.carriers[0].otp: carrier "sbx-my-psms" is a PSMS carrier, which has no use for OTP settings (an OTP carrier has): it would take no effect',
    ])
  })

  it('takes a carrier setting equal to the default on a flow that does not read it', () => {
    const layer = {
      source: 'defaults.json',
      data: { carriers: [{ code: 'sbx-my-psms', otp: { length: 4, ttl: '5m', max_attempts: 3 }, consent_ttl: 'PT5M' }] },
    }
    expect(layerChecked([base, layer]).warnings).toEqual([])
  })

  it('warns of a service whose integrations a later layer replaced, naming the countries it drops', () => {
    const layer = {
      source: 'gb.json',
      data: { services: [{ code: 'STREAMPLUS', integrations: [{ country: 'gb', price: { amount: '4.99', currency: 'GBP' } }] }] },
    }
    expect(layerChecked([base, layer]).warnings).toEqual([
      'gb.json: $.services[0].integrations: replaces the integrations of service "STREAMPLUS" (a list replaces the earlier one whole), so it is no longer sold in my, bg; to add a country, list those integrations too',
    ])
  })

  it('puts the problems found before layering first, then those of the layering', () => {
    const layer = { source: 'bad.json', data: { services: [{ code: 'X', merchant: 'nobody', name: 'X', period: 'P1M', integrations: [] }] } }
    const found = problems([base, layer], ['other.json: cannot read: EACCES'])
    expect(found[0]).toBe('other.json: cannot read: EACCES')
    expect(found.slice(1).join('\n')).toContain('bad.json: $.services[0].merchant: unknown merchant "nobody"')
  })
})
