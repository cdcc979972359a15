/**
 * Layering fixture documents into one world (docs/reference/fixtures.md), in one place for every way in:
 * files (`--fixtures`, `dcb fixtures validate`), the library's world option, the control API.
 *
 * - A record (merchant, service, country, carrier) with the key of an earlier one is merged into it:
 *   the fields given replace those fields (`otp` and `retry` field by field, arrays whole), the others
 *   are kept; the merged record is checked whole.
 * - Rules are consulted in the order: the last layer's rules first (each layer's in its own order),
 *   the first layer's (the default world's) last. A rule with the id of an earlier one replaces it and
 *   takes the place of its new layer.
 * - Every problem names the layer (the file), the JSON path in it and the value.
 */
import type { z } from 'zod'
import { didYouMean, HINT_KEYS, nearestName } from './nearest.js'
import { checkRuleNames, worldNames } from './world-names.js'
import {
  CarrierSchema,
  CountrySchema,
  LayerSchema,
  MerchantSchema,
  NESTED_FIELDS,
  RECORD_KEYS,
  ServiceSchema,
  issueText,
  type Layer,
  type RecordCollection,
  type Rule,
  type World,
} from './world-schema.js'

export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '$'
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(String(p)) ? `.${String(p)}` : `[${JSON.stringify(String(p))}]`
  return out
}

/** One fixture document and where it came from (a file name, or a label such as "world"). */
export interface LayerInput {
  source: string
  data: unknown
  /** What the schema made of `data`, when it was checked already (the shipped world, at build time). */
  checked?: Layer
}

/** Where each record and rule came from: the sources that gave it, first to last. */
export interface WorldSources {
  merchants: Record<string, string[]>
  services: Record<string, string[]>
  countries: Record<string, string[]>
  carriers: Record<string, string[]>
  rules: Record<string, string>
}

export interface LayeredWorld {
  world: World
  sources: WorldSources
  /** What loads but is likely a mistake (a service without integrations), with file and path. */
  warnings: string[]
}

export type LayerResult = ({ ok: true } & LayeredWorld) | { ok: false; problems: string[] }

const FULL = { merchants: MerchantSchema, services: ServiceSchema, countries: CountrySchema, carriers: CarrierSchema }
const COLLECTIONS = Object.keys(RECORD_KEYS) as RecordCollection[]

interface Contribution {
  source: string
  /** Which layer (0: the bottom one). */
  layer: number
  index: number
  given: Record<string, unknown>
}

interface Merged {
  value: Record<string, unknown>
  from: Contribution[]
}

/** Whether a document asks to start from nothing (`"extends": "none"`). */
export function extendsNothing(data: unknown): boolean {
  return !!data && typeof data === 'object' && (data as Record<string, unknown>).extends === 'none'
}

/**
 * Layers documents, the first at the bottom. Answers the world or every problem found: schema,
 * merging and cross references together (a record or rule that does not fit the schema is left out
 * and the rest still checked, so one run names every problem).
 */
export function layerWorlds(inputs: LayerInput[]): LayerResult {
  const problems: string[] = []
  const layers: { source: string; doc: Layer }[] = []
  for (const { source, data, checked } of inputs) {
    const ext = data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>).extends : undefined
    if (ext !== undefined && ext !== 'default' && ext !== 'none')
      problems.push(`${source}: $.extends: must be "default" or "none" (got ${JSON.stringify(ext)})`)
    if (checked) {
      duplicates(source, checked, problems)
      layers.push({ source, doc: checked })
      continue
    }
    const parsed = LayerSchema.safeParse(data, HINT_KEYS)
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        // A wrong `extends` is named above, in words (the schema's own line would say it again).
        if (issue.path.length === 1 && issue.path[0] === 'extends') continue
        problems.push(`${source}: ${jsonPath(issue.path)}: ${issueText(issue)}${got(data, issue.path)}`)
      }
      const salvaged = salvage(data)
      if (salvaged) {
        duplicates(source, salvaged, problems)
        layers.push({ source, doc: salvaged })
      }
      continue
    }
    duplicates(source, parsed.data, problems)
    layers.push({ source, doc: parsed.data })
  }

  const merged = {} as Record<RecordCollection, Map<string, Merged>>
  for (const coll of COLLECTIONS) {
    const map = (merged[coll] = new Map<string, Merged>())
    const key = RECORD_KEYS[coll]
    layers.forEach(({ source, doc }, layer) =>
      (doc[coll] as Record<string, unknown>[]).forEach((given, index) => {
        const k = given[key] as string
        const prev = map.get(k)
        const from = { source, layer, index, given }
        if (!prev) map.set(k, { value: { ...given }, from: [from] })
        else {
          prev.value = mergeRecord(prev.value, given, NESTED_FIELDS[coll], FULL[coll])
          prev.from.push(from)
        }
      }),
    )
  }

  const world: World = { merchants: [], services: [], countries: [], carriers: [], rules: [], messages: {} }
  const origin = new Map<object, Contribution[]>()
  for (const coll of COLLECTIONS)
    for (const m of merged[coll].values()) {
      const parsed = FULL[coll].safeParse(m.value, HINT_KEYS)
      if (!parsed.success) {
        const first = m.from[0]!
        let issues = parsed.error.issues
        // A partial record above the bottom layer whose key nothing below has: meant to change a record, most likely mistyped.
        const typo = first.layer > 0 && issues.some((i) => m.value[i.path[0] as string] === undefined) && noSuchRecord(coll, first, merged[coll])
        if (typo) {
          problems.push(typo)
          issues = issues.filter((i) => m.value[i.path[0] as string] !== undefined)
        }
        for (const issue of issues)
          problems.push(
            `${first.source}: ${jsonPath([coll, first.index, ...issue.path])}: ${issueText(issue, [coll, first.index, ...issue.path])} (after merging the layers: ${sourceList(m.from)})`,
          )
        continue
      }
      ;(world[coll] as object[]).push(parsed.data)
      origin.set(parsed.data, m.from)
    }

  // Rules in the order they are consulted: later layers first, a replaced rule at its new place.
  const seen = new Set<string>()
  const ruleOrigin = new Map<object, Contribution>()
  for (const [layer, { source, doc }] of [...layers.entries()].reverse())
    doc.rules.forEach((rule, index) => {
      if (seen.has(rule.id)) return
      seen.add(rule.id)
      world.rules.push(rule)
      ruleOrigin.set(rule, { source, layer, index, given: rule as unknown as Record<string, unknown> })
    })

  for (const { doc } of layers) {
    for (const [kind, texts] of Object.entries(doc.messages)) {
      const k = kind as keyof World['messages']
      world.messages[k] = { ...(world.messages[k] ?? {}), ...texts }
    }
    if (doc.description) world.description = doc.description
  }

  const where = (path: PropertyKey[]): string => {
    const [coll, i, field] = path as [string, number, string | undefined]
    const item = (world as unknown as Record<string, object[]>)[coll]?.[i]
    if (coll === 'rules' && item) {
      const o = ruleOrigin.get(item)!
      return `${o.source}: ${jsonPath(['rules', o.index, ...path.slice(2)])}`
    }
    const from = item && origin.get(item)
    if (!from) return jsonPath(path)
    // The layer that gave the field in question, else the one that brought the record in.
    const o = [...from].reverse().find((c) => field !== undefined && field in c.given) ?? from[0]!
    return `${o.source}: ${jsonPath([coll, o.index, ...path.slice(2)])}`
  }
  const warnings: string[] = []
  problems.push(...checkWorld(world, (path, msg) => `${where(path)}: ${msg}`, warnings))
  if (problems.length) return { ok: false, problems }

  const sources: WorldSources = { merchants: {}, services: {}, countries: {}, carriers: {}, rules: {} }
  for (const coll of COLLECTIONS) for (const [k, m] of merged[coll]) sources[coll][k] = [...new Set(m.from.map((c) => c.source))]
  for (const r of world.rules) sources.rules[r.id] = ruleOrigin.get(r)!.source
  return { ok: true, world, sources, warnings }
}

/** A record with the fields of a later layer: those given replace, nested objects field by field. */
function mergeRecord(base: Record<string, unknown>, top: Record<string, unknown>, nested: string[], full: z.ZodObject): Record<string, unknown> {
  const out = { ...base }
  for (const [k, v] of Object.entries(top)) {
    // A nested object the base left to its default is merged into that default.
    const old = out[k] ?? (nested.includes(k) ? (full.shape[k] as z.ZodType).safeParse(undefined).data : undefined)
    out[k] = nested.includes(k) && old && typeof old === 'object' && v && typeof v === 'object' ? { ...old, ...v } : v
  }
  return out
}

const NOUN: Record<RecordCollection, string> = { merchants: 'merchant', services: 'service', countries: 'country', carriers: 'carrier' }

/**
 * `no carrier sbx-my-otpp; did you mean sbx-my-otp?` for a record whose key is near an existing
 * one of a lower layer; undefined when no key is near (then it reads as a new record, its missing
 * fields named).
 */
function noSuchRecord(coll: RecordCollection, first: Contribution, records: Map<string, Merged>): string | undefined {
  const key = String(first.given[RECORD_KEYS[coll]])
  const below = [...records].filter(([k, m]) => k !== key && m.from[0]!.layer < first.layer).map(([k]) => k)
  const near = nearestName(key, below)
  if (near === undefined) return undefined
  return `${first.source}: ${jsonPath([coll, first.index, RECORD_KEYS[coll]])}: no ${NOUN[coll]} ${key}; did you mean ${near}? (a record changes the one with its ${RECORD_KEYS[coll]}; a new ${NOUN[coll]} needs every field)`
}

/**
 * The records and rules of a document that fit the schema one by one, kept at their own index (the
 * arrays have holes where an item did not fit), so the rest can still be layered and checked.
 */
function salvage(data: unknown): Layer | undefined {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined
  const doc = LayerSchema.parse({}) as Layer
  const d = data as Record<string, unknown>
  for (const coll of [...COLLECTIONS, 'rules'] as const) {
    const items = d[coll]
    if (!Array.isArray(items)) continue
    const kept: unknown[] = new Array(items.length)
    items.forEach((item, i) => {
      const one = LayerSchema.safeParse({ [coll]: [item] })
      if (one.success) kept[i] = (one.data[coll] as unknown[])[0]
    })
    ;(doc as Record<string, unknown>)[coll] = kept
  }
  const messages = LayerSchema.safeParse({ messages: d.messages })
  if (messages.success) doc.messages = messages.data.messages
  return doc
}

function sourceList(from: Contribution[]): string {
  return [...new Set(from.map((c) => c.source))].join(', ')
}

/** ` (got VALUE)` for a value the document holds at a path, short. */
function got(data: unknown, path: readonly PropertyKey[]): string {
  let cur: unknown = data
  for (const p of path) {
    if (!cur || typeof cur !== 'object') return ''
    cur = (cur as Record<PropertyKey, unknown>)[p as string]
  }
  if (cur === undefined || (typeof cur === 'object' && cur !== null)) return ''
  const text = JSON.stringify(cur)
  return ` (got ${text.length > 60 ? text.slice(0, 57) + '...' : text})`
}

/** Two records with one key in one document: ambiguous, refused. */
function duplicates(source: string, doc: Layer, problems: string[]): void {
  const check = (coll: string, keys: string[], field: string) => {
    const first = new Map<string, number>()
    keys.forEach((k, i) => {
      const j = first.get(k)
      if (j !== undefined) problems.push(`${source}: ${jsonPath([coll, i, field])}: duplicate "${k}" (also at ${jsonPath([coll, j])})`)
      else first.set(k, i)
    })
  }
  for (const coll of COLLECTIONS)
    check(
      coll,
      (doc[coll] as Record<string, unknown>[]).map((r) => r[RECORD_KEYS[coll]] as string),
      RECORD_KEYS[coll],
    )
  check(
    'rules',
    doc.rules.map((r) => r.id),
    'id',
  )
}

export { worldNames }

/**
 * Cross references and uniqueness inside one layered world; `at` names where a path is (file and
 * JSON path). Warnings (loads, but likely a mistake) go to `warnings`.
 */
export function checkWorld(world: World, at: (path: PropertyKey[], msg: string) => string, warnings: string[] = []): string[] {
  const problems: string[] = []
  const p = (path: PropertyKey[], msg: string) => problems.push(at(path, msg))
  const keys = new Map<string, string>()
  world.merchants.forEach((m, i) =>
    m.api_keys.forEach((k, j) => {
      const s = typeof k === 'string' ? k : k.sha256
      const owner = keys.get(s)
      if (owner !== undefined) p(['merchants', i, 'api_keys', j], `this API key is already used${owner === m.id ? '' : ` by merchant "${owner}"`}`)
      keys.set(s, m.id)
    }),
  )
  const merchants = new Set(world.merchants.map((m) => m.id))
  const countries = new Map(world.countries.map((c) => [c.code, c]))
  const carriers = new Map(world.carriers.map((c) => [c.code, c]))
  const prefixOwner = new Map<string, string>()
  world.carriers.forEach((c, i) => {
    const country = countries.get(c.country)
    if (!country) p(['carriers', i, 'country'], `unknown country "${c.country}"${didYouMean(c.country, countries.keys(), true)}`)
    c.prefixes.forEach((prefix, j) => {
      if (country && !prefix.startsWith(country.calling_code))
        p(['carriers', i, 'prefixes', j], `does not start with the calling code ${country.calling_code} of "${c.country}"`)
      const owner = prefixOwner.get(`${c.country}\0${prefix}`)
      if (owner !== undefined && owner !== c.code)
        p(
          ['carriers', i, 'prefixes', j],
          `"${prefix}" is already the prefix of carrier "${owner}" in "${c.country}" (to change that carrier, give its code "${owner}")`,
        )
      prefixOwner.set(`${c.country}\0${prefix}`, c.code)
    })
    if (c.flow === 'psms' && !c.short_code) p(['carriers', i, 'short_code'], 'a PSMS carrier needs a short_code')
  })
  world.services.forEach((s, i) => {
    if (!merchants.has(s.merchant)) p(['services', i, 'merchant'], `unknown merchant "${s.merchant}"${didYouMean(s.merchant, merchants)}`)
    if (!s.integrations.length)
      warnings.push(
        at(['services', i, 'integrations'], `service "${s.code}" has no integration: every Init for it answers 403 MERCHANT_SERVICE_NOT_CONFIGURED`),
      )
    const seen = new Set<string>()
    s.integrations.forEach((integ, j) => {
      if (seen.has(integ.country)) p(['services', i, 'integrations', j, 'country'], `duplicate country "${integ.country}"`)
      seen.add(integ.country)
      if (!countries.has(integ.country))
        p(['services', i, 'integrations', j, 'country'], `unknown country "${integ.country}"${didYouMean(integ.country, countries.keys(), true)}`)
      integ.carriers?.forEach((code, k) => {
        const c = carriers.get(code)
        if (!c) p(['services', i, 'integrations', j, 'carriers', k], `unknown carrier "${code}"${didYouMean(code, carriers.keys())}`)
        else if (c.country !== integ.country)
          p(['services', i, 'integrations', j, 'carriers', k], `carrier "${code}" is in "${c.country}", not "${integ.country}"`)
        else if (c.flow === 'psms' && !s.keyword) p(['services', i, 'keyword'], `service "${s.code}" uses PSMS carrier "${code}" and needs a keyword`)
      })
      // No carriers list: every provisioned carrier of the country bills it, a PSMS one too (whose MO needs the keyword).
      const psms = !integ.carriers && !s.keyword && world.carriers.find((c) => c.country === integ.country && c.flow === 'psms' && c.provisioned)
      if (psms)
        p(
          ['services', i, 'keyword'],
          `service "${s.code}" uses PSMS carrier "${psms.code}" (its integration in "${integ.country}" lists no carriers, so it takes every provisioned carrier there) and needs a keyword, or a carriers list without "${psms.code}"`,
        )
    })
  })
  const names = worldNames(world)
  world.rules.forEach((r: Rule, i) => {
    for (const problem of checkRuleNames(r, names)) p(['rules', i, ...problem.path], problem.message)
  })
  return problems
}
