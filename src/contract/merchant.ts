/**
 * The merchant API's wire contract (spec sections 2.2, 2.4, 2.6): request bodies and answer payloads
 * as zod schemas, for the OpenAPI document. The bodies' are made from the declaration
 * (`merchant-calls.ts`), which the server checks a body with (`checkBody`, no zod). The client and
 * the CLI use the types derived from them (`import type`: no zod at run time there).
 * Extra fields are ignored.
 */
import { z } from 'zod'
import { MERCHANT_CALLS, type BodyOf, type FieldRule, type MerchantOperation } from './merchant-calls.js'
import type { ADDRESS_OUTCOMES, CarrierCode, OPERATION_OUTCOMES, OutcomeCode, OutcomeMessage, PROTOCOL_OUTCOMES, SANDBOX_OUTCOMES } from '../core/outcomes.js'

/** A field's zod schema, from its rule in the declaration. */
function fieldSchema(rule: FieldRule) {
  let text = z.string()
  if (rule.filled) text = text.min(1)
  if (rule.pattern) text = text.regex(rule.pattern, rule.patternName)
  const field = rule.optional ? text.nullish() : text
  return rule.describe ? field.describe(rule.describe) : field
}

/**
 * A body's schema, made from its call's fields (`merchant-calls.ts`): it is OpenAPI's, and takes the
 * bodies `checkBody` takes, with the same output. The server checks bodies with `checkBody` (no zod).
 */
function bodySchema<O extends MerchantOperation>(op: O): z.ZodType<BodyOf<(typeof MERCHANT_CALLS)[O]['fields']>> {
  const fields: Record<string, FieldRule> = MERCHANT_CALLS[op].fields
  return z.object(Object.fromEntries(Object.entries(fields).map(([name, rule]) => [name, fieldSchema(rule)]))) as unknown as z.ZodType<
    BodyOf<(typeof MERCHANT_CALLS)[O]['fields']>
  >
}

export const InitBody = bodySchema('init')
export const VerifyBody = bodySchema('verify')
export const StatusBody = bodySchema('status')

const nullableString = (d: string) => z.string().nullable().describe(d)
const timestamp = (d: string) => z.string().nullable().describe(`${d} (UTC, YYYY-MM-DDTHH:MM:SS.ffffff)`)

export const InitPayload = z.object({
  verif_request_id: nullableString('Verification request ID (UUID) to pass to Verify in OTP flows'),
  short_code: nullableString('SMS short code the user texts (PSMS)'),
  keyword: nullableString('SMS keyword the user texts to short_code (PSMS)'),
  carrier_code: nullableString('Detected carrier code for the MSISDN'),
  redirect_url: nullableString('URL to which the user is redirected to verify payment (redirect markets)'),
})
export const VerifyPayload = z.object({ subscription_id: z.string().describe('Identifier of the activated subscription') })
export const StatusPayload = z.object({
  subscription_id: z.string(),
  status: z.enum(['ACTIVE', 'CANCELED', 'EXPIRED']),
  msisdn: z.string(),
  service_code: z.string(),
  service_name: z.string(),
  subscribed_dt: timestamp('When the subscription was first activated'),
  expiry_dt: timestamp('When the subscription expires; re-billing is attempted then'),
  canceled_dt: timestamp('When the subscription was canceled'),
  content_link: nullableString('URL to service content'),
})

export type InitBody = BodyOf<typeof MERCHANT_CALLS.init.fields>
export type VerifyBody = BodyOf<typeof MERCHANT_CALLS.verify.fields>
export type StatusBody = BodyOf<typeof MERCHANT_CALLS.status.fields>
export type InitPayload = z.infer<typeof InitPayload>
export type VerifyPayload = z.infer<typeof VerifyPayload>
/**
 * A subscription's status as Status answers it. The spec lists ACTIVE, CANCELED and EXPIRED and says
 * its list is not complete, so a merchant's code must expect another value (the sandbox answers the three).
 */
export type SubscriptionStatus = 'ACTIVE' | 'CANCELED' | 'EXPIRED' | (string & {})
type StatusFields = z.infer<typeof StatusPayload>

/** Each call's payload schema on success, for OpenAPI. */
export const PAYLOADS = { init: InitPayload, verify: VerifyPayload, status: StatusPayload } satisfies Record<MerchantOperation, z.ZodType>
/** Each call's body schema, for OpenAPI. */
export const BODIES = { init: InitBody, verify: VerifyBody, status: StatusBody } satisfies Record<MerchantOperation, z.ZodType>
export type StatusPayload = { [K in keyof StatusFields]: K extends 'status' ? SubscriptionStatus : StatusFields[K] }

/** The messages of a list of outcome codes, as the engine's outcome table answers them. */
type MessageOf<Codes extends readonly OutcomeCode[]> = OutcomeMessage<Codes[number]>
/** A call to a path the server does not have (a client's base URL with a wrong path): 404 NOT_FOUND. */
type AddressMessage = MessageOf<typeof ADDRESS_OUTCOMES>

/**
 * The protocol and platform failures any merchant operation can answer: BAD_REQUEST (400; 413 past
 * 64 KiB), UNAUTHORIZED (401 key; 403 source IP), MERCHANT_SERVICE_NOT_CONFIGURED (403), NOT_FOUND
 * (404, a wrong base URL), METHOD_NOT_ALLOWED (405), ERROR (500).
 */
export type PlatformMessage = MessageOf<typeof PROTOCOL_OUTCOMES> | AddressMessage
/**
 * The sandbox's own messages, on any operation, apart from the merchant API's: SESSION_LIMIT (429, a
 * new session past `maxSessions`). A merchant answer's type includes them; the `…Message` unions do not.
 */
export type SandboxMessage = MessageOf<typeof SANDBOX_OUTCOMES>
/** The carrier catalog (HTTP 200, `status: FAIL`); carrier rules can make any of them at Init and at Verify's charge. */
export type CarrierMessage = CarrierCode
/** Every `message` Init can answer (`''` on success): the platform's and every carrier code. */
export type InitMessage = MessageOf<typeof OPERATION_OUTCOMES.init> | AddressMessage
/** Every `message` Verify can answer (`''` on success): the platform's and every carrier code. */
export type VerifyMessage = MessageOf<typeof OPERATION_OUTCOMES.verify> | AddressMessage
/** Every `message` Status can answer (`''` on success): the platform's and SUBSCRIPTION_NOT_FOUND, no carrier code. */
export type StatusMessage = MessageOf<typeof OPERATION_OUTCOMES.status> | AddressMessage

/** The merchant API's envelope: the payload on success; on failure the message, and `payload` null or absent. */
export type Envelope<P = Record<string, unknown>, M extends string = string> =
  { status: 'SUCCESS'; message: ''; status_code: 200; payload: P } | { status: 'FAIL'; message: Exclude<M, ''>; status_code: number; payload?: null }

/** A merchant call's answer: the HTTP status, the envelope and, on failure, why (the X-DCB-Reason header). */
export interface MerchantAnswer<P, M extends string> {
  httpStatus: number
  envelope: Envelope<P, M>
  reason?: string
}
/** What `init()` answers: Init's messages, and the sandbox's own (a session past `maxSessions`). */
export type InitAnswer = MerchantAnswer<InitPayload, InitMessage | SandboxMessage>
/** What `verify()` answers: Verify's messages, and the sandbox's own. */
export type VerifyAnswer = MerchantAnswer<VerifyPayload, VerifyMessage | SandboxMessage>
/** What `status()` answers: Status's messages, and the sandbox's own. */
export type StatusAnswer = MerchantAnswer<StatusPayload, StatusMessage | SandboxMessage>

/** Where a consent decision sends the browser: the answer's status (303) and its `Location`. */
export interface ConsentAnswer {
  status: number
  location: string | null
}
