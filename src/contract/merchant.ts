/**
 * The merchant API's wire contract (spec sections 2.2, 2.4, 2.6): request bodies and answer payloads
 * as zod schemas, for the OpenAPI document, and their types. Both are made from the one declaration
 * (`merchant-calls.ts`), which the server checks a body with (`checkBody`, no zod): nothing here
 * names a call or a field. The client and the CLI use the types (`import type`: no zod at run time there).
 * Extra fields are ignored.
 */
import { z } from 'zod'
import { MERCHANT_CALLS, MERCHANT_OPERATIONS, type AnswerField, type BodyOf, type FieldRule, type MerchantOperation, type PayloadOf } from './merchant-calls.js'
import type { ADDRESS_OUTCOMES, CarrierCode, OutcomeCode, OutcomeMessage, PROTOCOL_OUTCOMES, SANDBOX_OUTCOMES } from '../core/outcomes.js'

type Calls = typeof MERCHANT_CALLS

/** A field's zod schema, from its rule in the declaration. */
function fieldSchema(rule: FieldRule) {
  let text = z.string()
  if (rule.filled) text = text.min(1)
  if (rule.pattern) text = text.regex(rule.pattern, rule.patternName)
  const field = rule.optional ? text.nullish() : text
  return rule.describe ? field.describe(rule.describe) : field
}

/** A payload field's zod schema, from the declaration. */
function answerFieldSchema(f: AnswerField) {
  const value = f.oneOf ? z.enum(f.oneOf as readonly [string, ...string[]]) : z.string()
  const field = f.nullable ? value.nullable() : value
  return f.describe ? field.describe(f.describe) : field
}

/** An object schema of declared fields, each made by `make`, in the declared order. */
const objectOf = <F>(fields: Record<string, F>, make: (f: F) => z.ZodType) =>
  z.object(Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, make(f)])))

/** Each call's body as its fields make it (`merchant-calls.ts`). */
export type Bodies = { [O in MerchantOperation]: BodyOf<Calls[O]['fields']> }
/** Each call's payload on success as its answer fields make it. */
export type Payloads = { [O in MerchantOperation]: PayloadOf<Calls[O]['answer']> }

/**
 * Each call's body schema, made from its fields: it is OpenAPI's, and takes the bodies `checkBody`
 * takes, with the same output (`test/contract/merchant-calls.test.ts`). The server checks bodies with
 * `checkBody` (no zod).
 */
export const BODY_SCHEMAS = Object.fromEntries(MERCHANT_OPERATIONS.map((op) => [op, objectOf(MERCHANT_CALLS[op].fields, fieldSchema)])) as unknown as {
  [O in MerchantOperation]: z.ZodType<Bodies[O]>
}
/** Each call's payload schema on success, made from its answer fields: OpenAPI's (and the control API's subscription view extends Status's). */
export const PAYLOAD_SCHEMAS = Object.fromEntries(MERCHANT_OPERATIONS.map((op) => [op, objectOf(MERCHANT_CALLS[op].answer, answerFieldSchema)])) as unknown as {
  [O in MerchantOperation]: z.ZodObject<{ [K in keyof Payloads[O]]-?: z.ZodType<Payloads[O][K]> }>
}

export const InitBody = BODY_SCHEMAS.init
export const VerifyBody = BODY_SCHEMAS.verify
export const StatusBody = BODY_SCHEMAS.status
export const InitPayload = PAYLOAD_SCHEMAS.init
export const VerifyPayload = PAYLOAD_SCHEMAS.verify
export const StatusPayload = PAYLOAD_SCHEMAS.status

export type InitBody = Bodies['init']
export type VerifyBody = Bodies['verify']
export type StatusBody = Bodies['status']
export type InitPayload = Payloads['init']
export type VerifyPayload = Payloads['verify']
/**
 * A subscription's status as Status answers it. The spec lists ACTIVE, CANCELED and EXPIRED and says
 * its list is not complete, so a merchant's code must expect another value (the sandbox answers the three).
 */
export type SubscriptionStatus = StatusPayload['status']
export type StatusPayload = Payloads['status']

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
/** Every `message` each call can answer (`''` on success): its declared outcomes, and NOT_FOUND (a wrong base URL). */
export type Messages = { [O in MerchantOperation]: MessageOf<Calls[O]['outcomes']> | AddressMessage }
/** Every `message` Init can answer (`''` on success): the platform's and every carrier code. */
export type InitMessage = Messages['init']
/** Every `message` Verify can answer (`''` on success): the platform's and every carrier code. */
export type VerifyMessage = Messages['verify']
/** Every `message` Status can answer (`''` on success): the platform's and SUBSCRIPTION_NOT_FOUND, no carrier code. */
export type StatusMessage = Messages['status']

/** The merchant API's envelope: the payload on success; on failure the message, and `payload` null or absent. */
export type Envelope<P = Record<string, unknown>, M extends string = string> =
  { status: 'SUCCESS'; message: ''; status_code: 200; payload: P } | { status: 'FAIL'; message: Exclude<M, ''>; status_code: number; payload?: null }

/** A merchant call's answer: the HTTP status, the envelope and, on failure, why (the X-DCB-Reason header). */
export interface MerchantAnswer<P, M extends string> {
  httpStatus: number
  envelope: Envelope<P, M>
  reason?: string
}
/** What each call's function answers: its messages, and the sandbox's own (a session past `maxSessions`). */
export type Answers = { [O in MerchantOperation]: MerchantAnswer<Payloads[O], Messages[O] | SandboxMessage> }
/** What `init()` answers: Init's messages, and the sandbox's own (a session past `maxSessions`). */
export type InitAnswer = Answers['init']
/** What `verify()` answers: Verify's messages, and the sandbox's own. */
export type VerifyAnswer = Answers['verify']
/** What `status()` answers: Status's messages, and the sandbox's own. */
export type StatusAnswer = Answers['status']
/** The merchant calls' functions (`init`, `verify`, `status`) on a sandbox and a client, one per declared call (its doc comment is theirs). */
export type MerchantCallFunctions = { [O in keyof Calls]: (body: Bodies[O]) => Promise<Answers[O]> }

/** Where a consent decision sends the browser: the answer's status (303) and its `Location`. */
export interface ConsentAnswer {
  status: number
  location: string | null
}
