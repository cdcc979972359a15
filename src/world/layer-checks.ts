/**
 * The one layering of fixture documents with the checks a file gets, for every way a world comes in:
 * fixture files (`dcb serve --fixtures`, `dcb fixtures validate`, the library's `fixtures`) and the
 * library's world object (`createSandbox({ world })`, `startSandbox({ world })`). On top of the engine's
 * layering (`src/core/layering.ts`) it refuses a carrier setting the carrier's flow never reads and warns
 * about a service whose integrations a later layer replaced, naming the countries it drops.
 */
import { layerWorlds, type LayerInput, type LayeredWorld } from '../core/layering.js'
import { parseDuration } from '../core/time.js'
import { FixtureError } from './default-world.js'

/**
 * Layers `layers` (bottom first) and checks the result; throws FixtureError with every problem (those
 * found before, `problems`, first), each naming the layer's source and the JSON path.
 */
export function layerChecked(layers: LayerInput[], problems: string[] = []): LayeredWorld {
  const result = layerWorlds(layers)
  if (result.ok) problems.push(...unusedCarrierSettings(layers, result.world.carriers))
  if (!result.ok || problems.length) throw new FixtureError([...problems, ...(result.ok ? [] : result.problems)])
  return { world: result.world, sources: result.sources, warnings: [...droppedIntegrations(layers), ...result.warnings] }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * A service record that gives `integrations` replaces its whole list (arrays are not merged), so a file
 * that means to add a country to a service takes the others away: a warning per service names them.
 */
function droppedIntegrations(layers: LayerInput[]): string[] {
  const soldIn = new Map<string, string[]>()
  const warnings: string[] = []
  for (const layer of layers) {
    const services = isRecord(layer.data) && Array.isArray(layer.data.services) ? layer.data.services : []
    services.forEach((s: unknown, i) => {
      if (!isRecord(s) || typeof s.code !== 'string' || !Array.isArray(s.integrations)) return
      const now = s.integrations.flatMap((x: unknown) => (isRecord(x) && typeof x.country === 'string' ? [x.country] : []))
      const gone = (soldIn.get(s.code) ?? []).filter((c) => !now.includes(c))
      // An empty list has its own warning (no integration at all).
      if (gone.length && now.length)
        warnings.push(
          `${layer.source}: $.services[${i}].integrations: replaces the integrations of service "${s.code}" (a list replaces the earlier one whole), so it is no longer sold in ${gone.join(', ')}; to add a country, list those integrations too`,
        )
      soldIn.set(s.code, now)
    })
  }
  return warnings
}

/** A duration as written, read (`PT5M`, `5m` alike); null when it is none. */
const durationOf = (v: unknown) => {
  const d = typeof v === 'string' ? parseDuration(v) : null
  return d && `${d.months}/${d.ms}`
}
const FIVE_MINUTES = durationOf('PT5M')

/**
 * The carrier settings each flow uses; the others would be kept and never read. A value that is the
 * default changes nothing either way (a `GET /_sandbox/world` document gives every carrier the defaults).
 */
const SETTING_FLOW: Record<string, { flow: string; what: string; changes: (v: unknown) => boolean }> = {
  otp: {
    flow: 'otp',
    what: 'OTP settings',
    changes: (v) =>
      isRecord(v) && (('length' in v && v.length !== 4) || ('max_attempts' in v && v.max_attempts !== 3) || ('ttl' in v && durationOf(v.ttl) !== FIVE_MINUTES)),
  },
  short_code: { flow: 'psms', what: 'a short code', changes: () => true },
  consent_ttl: { flow: 'redirect', what: 'a consent link time', changes: (v) => durationOf(v) !== FIVE_MINUTES },
}
const FLOW_NAME: Record<string, string> = { otp: 'an OTP carrier', psms: 'a PSMS carrier', redirect: 'a redirect carrier' }

/**
 * A carrier setting its flow never reads (`otp` on a PSMS carrier, `consent_ttl` on an OTP one, a
 * `short_code` off PSMS) loaded and did nothing: a problem naming the setting and the flow that has it.
 */
function unusedCarrierSettings(layers: LayerInput[], carriers: { code: string; flow: string }[]): string[] {
  const flowOf = new Map(carriers.map((c) => [c.code, c.flow]))
  const problems: string[] = []
  for (const layer of layers) {
    const given = isRecord(layer.data) && Array.isArray(layer.data.carriers) ? layer.data.carriers : []
    given.forEach((c: unknown, i) => {
      if (!isRecord(c) || typeof c.code !== 'string') return
      const flow = flowOf.get(c.code)
      for (const [setting, uses] of Object.entries(SETTING_FLOW))
        if (setting in c && flow !== undefined && flow !== uses.flow && uses.changes(c[setting]))
          problems.push(
            `${layer.source}: $.carriers[${i}].${setting}: carrier "${c.code}" is ${FLOW_NAME[flow] ?? flow}, which has no use for ${uses.what} (${FLOW_NAME[uses.flow]} has): it would take no effect`,
          )
    })
  }
  return problems
}
