/**
 * The merchant bodies that need no schema: a body these functions take is one the zod schemas of
 * `contract/merchant.ts` take too, and they answer what the schema's output would be (the same
 * fields, in the same order; extra fields left out). Anything else (a missing or wrong field) goes to
 * the schema, whose first issue words the failure: so the schemas (and zod) are loaded by the first
 * body that fails, not at start, and a valid call never waits for them.
 * `test/http/merchant-body.test.ts` checks the two agree.
 */
import type { InitBody, StatusBody, VerifyBody } from '../contract/merchant.js'

const COUNTRY = /^[a-z]{2}$/
const LANGUAGE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/

const filled = (v: unknown): v is string => typeof v === 'string' && v.length > 0

/** `language` as the schema reads it: absent, null, or a tag; false when the schema would refuse it. */
function languageOf(body: Record<string, unknown>): { ok: boolean; given: boolean; value?: string | null } {
  const v = body.language
  if (v === undefined) return { ok: true, given: false }
  if (v === null) return { ok: true, given: true, value: null }
  return typeof v === 'string' && LANGUAGE.test(v) ? { ok: true, given: true, value: v } : { ok: false, given: true }
}

export function quickInit(body: Record<string, unknown>): InitBody | undefined {
  const { msisdn, service_code, country_code } = body
  if (typeof msisdn !== 'string' || !filled(service_code) || typeof country_code !== 'string' || !COUNTRY.test(country_code)) return undefined
  const language = languageOf(body)
  if (!language.ok) return undefined
  return language.given ? { msisdn, service_code, country_code, language: language.value } : { msisdn, service_code, country_code }
}

export function quickVerify(body: Record<string, unknown>): VerifyBody | undefined {
  const { verif_request_id, otp } = body
  if (!filled(verif_request_id) || !filled(otp)) return undefined
  const language = languageOf(body)
  if (!language.ok) return undefined
  return language.given ? { verif_request_id, otp, language: language.value } : { verif_request_id, otp }
}

export function quickStatus(body: Record<string, unknown>): StatusBody | undefined {
  const id = body.subscription_id
  return filled(id) ? { subscription_id: id } : undefined
}

let schemas: typeof import('../contract/merchant.js') | undefined
let loading: Promise<typeof import('../contract/merchant.js')> | undefined

/** The merchant schemas once loaded (undefined before: `loadMerchantSchemas` loads them). */
export function merchantSchemas(): typeof import('../contract/merchant.js') | undefined {
  return schemas
}

export function loadMerchantSchemas(): Promise<typeof import('../contract/merchant.js')> {
  return (loading ??= import('../contract/merchant.js').then((m) => (schemas = m)))
}
