/**
 * Why a merchant API request failed, in one line (docs/reference/errors.md): the `X-DCB-Reason` header,
 * the request log entry's `reason`, the CLI's failure line. The checks before the engine (method, key,
 * allowlist, body, schema) are worded here; the engine words its own (`src/core/why.ts`). Built only
 * when an answer fails.
 */
import type { BodyProblem } from '../contract/merchant-calls.js'
import { MERCHANT_CALLS } from '../contract/merchant-calls.js'
import { quote } from '../core/why.js'

export { quote }

/** At most this many characters in a header (longer reasons are cut with "..."). */
export const REASON_MAX = 200

/** The reason as a header value: printable ASCII only, one line, at most 200 characters. */
export function headerReason(reason: string): string {
  const s = reason.replace(/[^\x20-\x7e]/g, '?').trim()
  return s.length > REASON_MAX ? `${s.slice(0, REASON_MAX - 3)}...` : s
}

export const methodReason = (method: string | undefined, path: string) => `method ${quote(method ?? '')} is not allowed on ${path}: use POST`

/** The merchant paths as a refusal lists them: `POST /subscriptions/init, /subscriptions/verify and /subscriptions/status`. */
const PATHS_SAID = ((paths: string[]) => `POST ${paths.slice(0, -1).join(', ')} and ${paths[paths.length - 1]}`)(
  Object.values(MERCHANT_CALLS).map((c) => c.path),
)

export const notFoundReason = (method: string | undefined, path: string) =>
  `no merchant API path ${quote(path)} for ${quote(method ?? '')}: the paths are ${PATHS_SAID}`

export const noKeyReason = () => 'no API-KEY header: send the API-KEY of a merchant'
export const unknownKeyReason = () => 'the API-KEY is not the key of any merchant'
export const repeatedKeyReason = (times: number) => `the API-KEY header was sent ${times} times: send it once, with one merchant's key`
export const inactiveReason = (merchant: string) => `merchant ${merchant} is not active`
export const ipReason = (ip: string | null, merchant: string) => `source IP ${ip ?? '(unknown)'} is not in the allowlist of merchant ${merchant}`

export function contentTypeReason(header: string | undefined): string {
  return header === undefined ? 'no Content-Type header: send Content-Type: application/json' : `Content-Type ${quote(header)} is not application/json`
}

export const encodingReason = (header: string) => `Content-Encoding ${quote(header)} is not taken: send the JSON body uncompressed`

export const tooLargeReason = (limit: number) => `the body is larger than ${limit} bytes (${limit / 1024} KiB)`
export const abortedReason = () => 'the request body broke off before its end'

/** Why a body is not JSON: where JSON.parse stopped (never the text itself, which may be anything). */
export function jsonReason(text: string): string {
  if (!text.trim()) return 'the body is empty: send a JSON object'
  try {
    JSON.parse(text)
    return 'the body is not valid JSON'
  } catch (e) {
    const at = /position (\d+)/.exec((e as Error).message)
    return `the body is not valid JSON${at ? ` (at byte ${at[1]})` : ''}`
  }
}

export function notObjectReason(v: unknown): string {
  return `the body must be a JSON object, not ${v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`}`
}

function describeType(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'object') return 'an object'
  // JSON.parse reads 1e999 as Infinity, which JSON.stringify would echo as null.
  if (typeof v === 'number' && !Number.isFinite(v)) return 'a number too large to read'
  return `${typeof v} ${quote(v, 32)}`
}

/** Keys of the body that look like a misspelling of `field` (`service` for `service_code`). */
function lookalikes(field: string, body: Record<string, unknown>, known: Set<string>): string[] {
  const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '')
  const f = norm(field)
  return Object.keys(body).filter((k) => {
    if (known.has(k) || k === field) return false
    const n = norm(k)
    return n === f || (n.length >= 3 && (f.startsWith(n) || n.startsWith(f) || f.endsWith(n))) || distance(n, f) <= 2
  })
}

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]!
}

/**
 * The first problem of a body (`checkBody`), naming the field and the rule: `country_code: must be
 * lower case (got "MY")`, `msisdn: must be a string (got number 60123456001)`, `service_code: required
 * (the body has "service": did you mean service_code?)`. `known`: the body's fields (a key that looks
 * like a misspelling of one is named).
 */
export function bodyReason(problem: BodyProblem, body: Record<string, unknown> = {}, known: Iterable<string> = []): string {
  const { field, value, kind, rule } = problem
  switch (kind) {
    case 'required': {
      const like = lookalikes(field, body, new Set(known))
      return `${field}: required${like.length ? ` (the body has ${quote(like[0])}: did you mean ${field}?)` : ''}`
    }
    case 'type':
      return `${field}: must be a string (got ${describeType(value)})`
    case 'empty':
      return `${field}: must not be empty`
    case 'case':
      return `${field}: must be lower case (got ${quote(value)})`
    case 'shape':
      return `${field}: must be ${rule.shape ?? rule.patternName ?? 'text of its form'} (got ${quote(value)})`
  }
}
