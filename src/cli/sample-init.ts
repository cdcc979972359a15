/**
 * The Init the start-up banner offers to try: one the loaded world answers with SUCCESS, so a world
 * from --fixtures (a service sold elsewhere, "extends": "none") does not get a line that fails.
 */
import { DEMO_API_KEY } from '../contract/defaults.js'
import type { World } from '../core/world-schema.js'

export interface SampleInit {
  apiKey: string
  body: { msisdn: string; service_code: string; country_code: string }
}

const FLOW_ORDER = ['otp', 'psms', 'redirect']
const LOOPBACK = ['127.0.0.0/8', '::1']

/** The demo key's merchant and STREAMPLUS in my first, then the world's order: a key in clear, a carrier that bills the service. */
export function sampleInit(world: World): SampleInit | undefined {
  const first = <T>(list: T[], preferred: (x: T) => boolean) => [...list.filter(preferred), ...list.filter((x) => !preferred(x))]
  const keyOf = (keys: World['merchants'][number]['api_keys']) =>
    first(
      keys.filter((k): k is string => typeof k === 'string'),
      (k) => k === DEMO_API_KEY,
    )[0]
  const merchants = world.merchants.filter((m) => m.active && keyOf(m.api_keys) && m.allowlist.some((a) => LOOPBACK.includes(a)))
  for (const m of first(merchants, (x) => keyOf(x.api_keys) === DEMO_API_KEY))
    for (const s of first(
      world.services.filter((x) => x.merchant === m.id),
      (x) => x.code === 'STREAMPLUS',
    ))
      for (const integration of first(s.integrations, (i) => i.country === 'my')) {
        const country = world.countries.find((c) => c.code === integration.country)
        const carrier = world.carriers
          .filter(
            (c) =>
              c.provisioned &&
              c.country === integration.country &&
              (!integration.carriers || integration.carriers.includes(c.code)) &&
              (c.flow !== 'psms' || s.keyword),
          )
          .sort((a, b) => FLOW_ORDER.indexOf(a.flow) - FLOW_ORDER.indexOf(b.flow))[0]
        if (!country || !carrier) continue
        const prefix = carrier.prefixes[0]!
        const length = Math.min(...(carrier.lengths ?? country.lengths))
        const msisdn = prefix + '3456789012345'.repeat(2).slice(0, Math.max(0, length - prefix.length - 3)) + '001'
        return { apiKey: keyOf(m.api_keys)!, body: { msisdn, service_code: s.code, country_code: integration.country } }
      }
  return undefined
}
