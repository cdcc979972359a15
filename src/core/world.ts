/**
 * A loaded world, indexed for the operations: API keys, services by merchant, the numbering plan.
 */
import { createHash } from 'node:crypto'
import type { Carrier, Country, Integration, Merchant, MessageKind, Rule, Service, World } from './world-schema.js'
import type { WorldSources } from './layering.js'
import type { CarrierCode } from './outcomes.js'
import { parseDuration, type Duration } from './time.js'
import { count, quote } from './why.js'

export type { Carrier, Country, Integration, Merchant, Rule, Service, World }

export type Lookup = { ok: true; carrier: Carrier } | { ok: false; code: CarrierCode; reason: string }

const lengths = (l: number[]) => (l.length > 1 ? `${l.slice(0, -1).join(', ')} or ${l[l.length - 1]}` : String(l[0]))

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

export class WorldIndex {
  private readonly plainKeys = new Map<string, Merchant>()
  private readonly hashedKeys = new Map<string, Merchant>()
  /** Services by merchant, then by code (two lookups: no key string built per call). */
  private readonly services = new Map<string, Map<string, Service>>()
  /** Each service's integrations by country, with the service: made once, read on every call. */
  private readonly integrations = new Map<Service, Map<string, { service: Service; integration: Integration }>>()
  readonly merchants = new Map<string, Merchant>()
  readonly countries = new Map<string, Country>()
  readonly carriers = new Map<string, Carrier>()
  private readonly carriersByCountry = new Map<string, Carrier[]>()
  private readonly periods = new Map<string, Duration>()

  constructor(
    readonly world: World,
    /** Where its records and rules came from (the files), when the loader said. */
    readonly sources?: WorldSources,
  ) {
    for (const m of world.merchants) {
      this.merchants.set(m.id, m)
      for (const k of m.api_keys) {
        if (typeof k === 'string') this.plainKeys.set(k, m)
        else this.hashedKeys.set(k.sha256, m)
      }
    }
    for (const s of world.services) {
      let byCode = this.services.get(s.merchant)
      if (!byCode) this.services.set(s.merchant, (byCode = new Map()))
      byCode.set(s.code, s)
      const byCountry = new Map<string, { service: Service; integration: Integration }>()
      for (const integration of s.integrations) if (!byCountry.has(integration.country)) byCountry.set(integration.country, { service: s, integration })
      this.integrations.set(s, byCountry)
    }
    for (const c of world.countries) this.countries.set(c.code, c)
    for (const c of world.carriers) {
      this.carriers.set(c.code, c)
      const list = this.carriersByCountry.get(c.country) ?? []
      list.push(c)
      this.carriersByCountry.set(c.country, list)
    }
  }

  /** The merchant an API key belongs to (plain keys, or keys stored as their SHA-256). */
  merchantByKey(key: string): Merchant | undefined {
    return this.plainKeys.get(key) ?? (this.hashedKeys.size ? this.hashedKeys.get(sha256(key)) : undefined)
  }

  service(merchant: string, code: string): Service | undefined {
    return this.services.get(merchant)?.get(code)
  }

  /** The service + country integration of a merchant, if configured. */
  integration(merchant: string, serviceCode: string, country: string): { service: Service; integration: Integration } | undefined {
    const service = this.service(merchant, serviceCode)
    return service && this.integrations.get(service)?.get(country)
  }

  /** Whether the carrier may bill this integration. */
  carrierProvisioned(integration: Integration, carrier: Carrier): boolean {
    if (!carrier.provisioned) return false
    return integration.carriers ? integration.carriers.includes(carrier.code) : true
  }

  /** The numbering-plan lookup: validity, landlines, the carrier that owns the prefix. */
  lookup(country: string, msisdn: string): Lookup {
    const c = this.countries.get(country)
    const no = (code: CarrierCode, why: string): Lookup => ({ ok: false, code, reason: `msisdn ${quote(msisdn)} ${why}` })
    if (!c) return no('INVALID_MSISDN', `cannot be looked up: the sandbox has no numbering plan for ${quote(country)}`)
    if (!/^\d+$/.test(msisdn)) return no('INVALID_MSISDN', 'must be digits only, calling code first (no + or 00)')
    if (!msisdn.startsWith(c.calling_code)) return no('INVALID_MSISDN', `does not start with the calling code ${c.calling_code} of ${country}`)
    const landline = c.landlines.find((l) => msisdn.startsWith(l.prefix))
    if (landline) {
      const ls = landline.lengths ?? c.lengths
      return ls.includes(msisdn.length)
        ? no('INVALID_MSISDN_LANDLINE', `is a landline number (prefix ${landline.prefix})`)
        : no('INVALID_MSISDN', `has ${count(msisdn.length, 'digit')}; ${country} landlines (prefix ${landline.prefix}) have ${lengths(ls)}`)
    }
    let best: Carrier | undefined
    let bestLen = 0
    for (const carrier of this.carriersByCountry.get(country) ?? [])
      for (const p of carrier.prefixes)
        if (p.length > bestLen && msisdn.startsWith(p)) {
          best = carrier
          bestLen = p.length
        }
    if (!best) return no('INVALID_MSISDN', `has no carrier in ${country}: no sandbox carrier there has a prefix of it`)
    const ls = best.lengths ?? c.lengths
    if (!ls.includes(msisdn.length)) return no('INVALID_MSISDN', `has ${count(msisdn.length, 'digit')}; ${best.code} numbers have ${lengths(ls)}`)
    return { ok: true, carrier: best }
  }

  /** The sandbox carrier that owns an MSISDN (in any country), if any. */
  carrierOf(msisdn: string): Carrier | undefined {
    for (const c of this.countries.values()) {
      if (!msisdn.startsWith(c.calling_code)) continue
      const l = this.lookup(c.code, msisdn)
      if (l.ok) return l.carrier
    }
    return undefined
  }

  period(text: string): Duration {
    let d = this.periods.get(text)
    if (!d) this.periods.set(text, (d = parseDuration(text)!))
    return d
  }

  /** The language the SMS texts use: the requested one if the world has texts in it, else the service's. */
  language(requested: string | undefined, service: Service): string {
    if (requested) {
      const primary = requested.split(/[-_]/)[0]!.toLowerCase()
      if (this.world.messages.otp?.[primary] || this.world.messages.welcome?.[primary]) return primary
    }
    return service.default_language
  }

  /** Message templates split once into literal text and placeholder names (odd indexes). */
  private readonly templates = new Map<string, string[]>()

  /** Renders a message text of the world; falls back to English, then to a plain default. */
  text(kind: MessageKind, language: string, vars: Record<string, string | number>): string {
    const key = `${kind}\0${language}`
    let parts = this.templates.get(key)
    if (!parts) {
      const texts = this.world.messages[kind] ?? {}
      const template = texts[language] ?? texts.en ?? Object.values(texts)[0] ?? `${kind}: {service}`
      this.templates.set(key, (parts = template.split(/\{(\w+)\}/)))
    }
    let out = parts[0]!
    for (let i = 1; i < parts.length; i += 2) {
      const k = parts[i]!
      out += (k in vars ? String(vars[k]) : `{${k}}`) + parts[i + 1]!
    }
    return out
  }
}
