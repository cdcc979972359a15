/**
 * The one table of outcome codes: for each, the HTTP status, the envelope message and the payload
 * form on failure (`null`: `"payload": null`; `absent`: no payload key). docs/reference/errors.md lists it.
 */

import type { Wire } from './wire.js'

export type PayloadForm = 'null' | 'absent'

export interface OutcomeSpec {
  http: number
  message: string
  payload: PayloadForm
  /** What a person reading the console or the CLI should understand. */
  describe: string
}

/** The carrier catalog: HTTP 200, `status: FAIL`. */
export const CARRIER_CODES = [
  'INVALID_MSISDN',
  'INVALID_MSISDN_LANDLINE',
  'CARRIER_NOT_SUPPORTED',
  'FAILED_INIT_SUB',
  'NOT_ALLOWED_CHANNEL',
  'INVALID_PIN',
  'MAX_PIN_RETRIES',
  'PIN_EXPIRED',
  'ALREADY_SUBSCRIBED',
  'INSUFFICIENT_FUNDS',
  'SPENDING_LIMIT_REACHED',
  'TRX_COUNT_REACHED',
  'TRX_LIMIT_EXCEEDED',
  'INVALID_USER',
  'NOT_ELIGIBLE',
  'BLACKLISTED',
  'BARRED',
  'ERROR',
] as const
export type CarrierCode = (typeof CARRIER_CODES)[number]

const carrier = (describe: string, payload: PayloadForm = 'absent'): OutcomeSpec => ({
  http: 200,
  message: '',
  payload,
  describe,
})

const CARRIER: Record<CarrierCode, OutcomeSpec> = {
  INVALID_MSISDN: carrier('the MSISDN failed lookup validation', 'null'),
  INVALID_MSISDN_LANDLINE: carrier('the MSISDN is a landline number', 'null'),
  CARRIER_NOT_SUPPORTED: carrier('the carrier is not provisioned for this service and country', 'null'),
  FAILED_INIT_SUB: carrier('the carrier failed to start the subscription'),
  NOT_ALLOWED_CHANNEL: carrier('the carrier does not allow this channel'),
  INVALID_PIN: carrier('the OTP is wrong, or the verification request is unknown'),
  MAX_PIN_RETRIES: carrier('too many OTP attempts'),
  PIN_EXPIRED: carrier('the OTP expired or was already used'),
  ALREADY_SUBSCRIBED: carrier('the MSISDN already holds an active subscription to this service'),
  INSUFFICIENT_FUNDS: carrier('the subscriber has insufficient funds'),
  SPENDING_LIMIT_REACHED: carrier('the subscriber reached a spending limit'),
  TRX_COUNT_REACHED: carrier('the subscriber reached a transaction count limit'),
  TRX_LIMIT_EXCEEDED: carrier('the subscriber exceeded a transaction limit'),
  INVALID_USER: carrier('the carrier does not know this user'),
  NOT_ELIGIBLE: carrier('the subscriber is not eligible'),
  BLACKLISTED: carrier('the subscriber is blacklisted'),
  BARRED: carrier('the subscriber is barred from carrier billing'),
  ERROR: carrier('the carrier answered a generic error'),
}

/** Keeps `message` as its literal type, so the message unions of the merchant API derive from this table. */
const platform = <M extends string>(http: number, message: M, describe: string) => ({
  http,
  message,
  payload: 'null' as PayloadForm,
  describe,
})

/** Protocol and platform outcomes; `message` may differ from the key (403 UNAUTHORIZED, 413, 500). */
const PLATFORM = {
  SUCCESS: platform(200, '', 'success'),
  BAD_REQUEST: platform(400, 'BAD_REQUEST', 'the body failed validation'),
  PAYLOAD_TOO_LARGE: platform(413, 'BAD_REQUEST', 'the body is larger than 64 KiB'),
  UNAUTHORIZED: platform(401, 'UNAUTHORIZED', 'API key missing or invalid, or merchant inactive'),
  IP_NOT_ALLOWED: platform(403, 'UNAUTHORIZED', 'the source IP is not on the merchant allowlist'),
  MERCHANT_SERVICE_NOT_CONFIGURED: platform(403, 'MERCHANT_SERVICE_NOT_CONFIGURED', 'no integration for the service and country'),
  NOT_FOUND: platform(404, 'NOT_FOUND', 'no such path'),
  SUBSCRIPTION_NOT_FOUND: platform(
    404,
    'SUBSCRIPTION_NOT_FOUND',
    "no subscription of this merchant has that ID (the reason says when it is one of its verification or consent requests' ids)",
  ),
  METHOD_NOT_ALLOWED: platform(405, 'METHOD_NOT_ALLOWED', 'only POST is allowed'),
  SESSION_LIMIT: platform(429, 'SESSION_LIMIT', 'the sandbox holds --max-sessions sessions (of a shared store: the database): a new one is refused'),
  SERVER_ERROR: platform(
    500,
    'ERROR',
    'a server error: unexpected, or the one the X-DCB-Reason names (a store that cannot write, the session at --max-subscriptions)',
  ),
} satisfies Record<string, OutcomeSpec>
export type PlatformCode = keyof typeof PLATFORM
export type OutcomeCode = PlatformCode | CarrierCode

/** The envelope `message` of an outcome code (`PAYLOAD_TOO_LARGE` is BAD_REQUEST, `SERVER_ERROR` ERROR; a carrier code is itself). */
export type OutcomeMessage<C extends OutcomeCode> = C extends PlatformCode ? (typeof PLATFORM)[C]['message'] : C

/** What every merchant operation can answer before its own work: the protocol and platform failures (spec section 7). */
export const PROTOCOL_OUTCOMES = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'IP_NOT_ALLOWED',
  'MERCHANT_SERVICE_NOT_CONFIGURED',
  'PAYLOAD_TOO_LARGE',
  'METHOD_NOT_ALLOWED',
  'SERVER_ERROR',
] as const

/**
 * Every outcome each merchant operation answers on its own path. Init and Verify answer any carrier
 * code (carrier rules take `error` at `init` and `charge`); Status answers none (its steps take no `error`).
 */
export const OPERATION_OUTCOMES = {
  init: ['SUCCESS', ...PROTOCOL_OUTCOMES, ...CARRIER_CODES],
  verify: ['SUCCESS', ...PROTOCOL_OUTCOMES, ...CARRIER_CODES],
  status: ['SUCCESS', ...PROTOCOL_OUTCOMES, 'SUBSCRIPTION_NOT_FOUND'],
} as const satisfies Record<'init' | 'verify' | 'status', readonly OutcomeCode[]>

/** A path the server does not have: what a merchant call addressed under a wrong base URL answers. */
export const ADDRESS_OUTCOMES = ['NOT_FOUND'] as const satisfies readonly OutcomeCode[]

/** Outcomes of the sandbox alone, on any merchant operation: the merchant API has no sessions (`X-DCB-Session`). */
export const SANDBOX_OUTCOMES = ['SESSION_LIMIT'] as const satisfies readonly OutcomeCode[]

export const OUTCOMES: Record<OutcomeCode, OutcomeSpec> = Object.fromEntries([
  ...Object.entries(PLATFORM),
  ...Object.entries(CARRIER).map(([code, spec]) => [code, { ...spec, message: code }]),
]) as Record<OutcomeCode, OutcomeSpec>

export function isCarrierCode(code: string): code is CarrierCode {
  return (CARRIER_CODES as readonly string[]).includes(code)
}

/** What an operation answers: a code from the table, the success payload, and an optional delay. */
export interface Outcome {
  code: OutcomeCode
  payload?: Record<string, unknown>
  /** Milliseconds to hold the answer back (magic `5NN` endings, delay rules). */
  delayMs?: number
  /** The payload already serialised (cached for immutable records), so the hot path skips JSON.stringify. */
  payloadJson?: string
  /** Why it failed, in words (the X-DCB-Reason header; see why.ts). Set on failures only. */
  reason?: string
  /** The MSISDN the call concerns, when the calling merchant may see it (for the request log). */
  msisdn?: string
  /** How the answer leaves instead of the envelope (a fault, a gateway's answer): `wire.ts`. */
  wire?: Wire
  /** Coverage findings this call raised (`Coverage.take`): their example is this call's request log entry. */
  raised?: string[]
}

export const ok = (payload: Record<string, unknown>, delayMs?: number): Outcome => ({ code: 'SUCCESS', payload, delayMs })
export const fail = (code: OutcomeCode, delayMs?: number, reason?: string): Outcome => ({ code, delayMs, reason })

/** How the payload of failures is written: as the table says, or forced for parser tests. */
export type FailurePayloadMode = 'auto' | 'null' | 'absent'

/** The envelope, keys in the order the provider's docs give: status, message, status_code, payload. */
export function envelope(outcome: Outcome, mode: FailurePayloadMode = 'auto'): { http: number; body: Record<string, unknown> } {
  const spec = OUTCOMES[outcome.code]
  if (outcome.code === 'SUCCESS') {
    return { http: 200, body: { status: 'SUCCESS', message: '', status_code: 200, payload: outcome.payload ?? null } }
  }
  const body: Record<string, unknown> = { status: 'FAIL', message: spec.message, status_code: spec.http }
  const form = mode === 'auto' ? spec.payload : mode
  if (form === 'null') body.payload = null
  return { http: spec.http, body }
}
