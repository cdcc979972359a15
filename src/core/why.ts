/**
 * Why a failure was answered, in words (docs/reference/errors.md): the text of the `X-DCB-Reason` header
 * and of the request log's `reason`. Built only when an answer fails, never on the success path.
 * Input it echoes is JSON-escaped and ASCII-only, so a reason is always one printable line.
 */
import { describeMatch } from './scenarios.js'
import type { VerificationRecord } from './state.js'
import type { Rule } from './world-schema.js'

/** A value as JSON, every character outside printable ASCII escaped, cut to `max` characters. */
export function quote(v: unknown, max = 48): string {
  let s: string
  try {
    s = JSON.stringify(v) ?? String(v)
  } catch {
    s = String(v)
  }
  s = s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  return s.length > max ? `${s.slice(0, max - 3)}...` : s
}

/** A count with its noun agreeing in number: `1 wrong OTP`, `2 wrong OTPs`, `1 attempt`. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`
}

/** The rule that decided a step: `rule charge-201 (ending 201): first charge INSUFFICIENT_FUNDS`. */
export function ruleReason(rule: Rule, what: string): string {
  return `rule ${rule.id} (${describeMatch(rule)}): ${what}`
}

/**
 * Why a merchant has no integration of a service in a country (the same text whether or not another
 * merchant has it). `meant`: a "did you mean" for a mistyped name, of the merchant's own services or
 * of the world's countries (never another merchant's service).
 */
export function integrationReason(hasService: boolean, merchant: string, service: string, country: string, meant = ''): string {
  return `${hasService ? `service ${service} has no integration in ${country}` : `merchant ${merchant} has no service ${quote(service)}`}${meant}`
}

/**
 * Why Status found no subscription for an id that is the merchant's verification or consent
 * request: what the id is, and where its subscription_id comes from (or which one it gave).
 */
export function notSubscriptionReason(id: string, verif: VerificationRecord): string {
  const made = verif.subscription_id
  if (verif.flow === 'otp')
    return `subscription_id ${quote(id)} is a verification's id (verif_request_id of an Init for ${verif.msisdn}), not a subscription's: ${made ? `its Verify gave ${made}` : 'Verify it to get a subscription_id'}`
  return `subscription_id ${quote(id)} is a consent request's id (of an Init for ${verif.msisdn}), not a subscription's: ${made ? `its approval gave ${made}` : 'the return URL brings the subscription_id once approved'}`
}
