/**
 * The merchant calls declared once: for Init, Verify and Status, the path, the summary, the body's
 * fields with their rules, the fields of the payload a success answers, and the outcomes the call
 * can answer. The router (`http/app.ts`), the handler's one check of a body (`checkBody`), the zod
 * schemas of body and answer and so OpenAPI (`contract/merchant.ts`), the clients' functions and
 * types, replay and the reasons read it, so none repeats a path or a field: a new call is a new
 * entry here (and its flow in the engine).
 * No zod and no Node here: the hot path and the client load this file as it is.
 */
import { OPERATION_OUTCOMES } from '../core/outcomes.js'
import type { StatusPayload } from '../core/views.js'

/** One field of a body: always text; the rules the value must meet. */
export interface FieldRule {
  /** `true`: absent or null is taken (null counts as absent, and is kept). */
  optional?: true
  /** The empty text is refused. */
  filled?: true
  /** The text must match it (then the empty text is refused too). */
  pattern?: RegExp
  /** The pattern said for a schema's message (`lower-case ISO-3166-1 alpha-2`). */
  patternName?: string
  /** What the value must be, in words, for a refusal (`two lower-case letters …`). */
  shape?: string
  /** The field's meaning, for OpenAPI. */
  describe?: string
}

/** One field of a success's payload: always there; text (null too where `nullable`), one of `oneOf` when given. */
export interface AnswerField {
  nullable?: true
  /** The values it takes (OpenAPI's enum). */
  oneOf?: readonly string[]
  /** The list is the spec's, which says it is not complete: a merchant's code must expect another value (the type says so). */
  open?: true
  /** The field's meaning, for OpenAPI. */
  describe?: string
}

export interface MerchantCall {
  path: string
  /** OpenAPI's summary of the call. */
  summary: string
  /** The body's fields, in the order the body is read (and a refusal names the first that fails). */
  fields: Record<string, FieldRule>
  /** The payload's fields on success, in the order the engine answers them (HTTP 200, status SUCCESS). */
  answer: Record<string, AnswerField>
  /** The outcome codes it can answer (`core/outcomes.ts`). */
  outcomes: readonly string[]
  /** The engine is also given the server's origin as the client sees it: the call answers links to it (Init's consent page). */
  origin?: true
}

const LANGUAGE = {
  optional: true,
  pattern: /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/,
  patternName: 'an ISO-639-1 code or BCP-47 tag',
  shape: 'an ISO-639-1 code or BCP-47 tag (e.g. "ms" or "ms-MY")',
  describe: 'BCP-47 / ISO-639-1 language code for SMS communications; defaults to the service default language',
} as const satisfies FieldRule

const nullableText = (describe: string) => ({ nullable: true, describe }) as const
const timestamp = (describe: string) => nullableText(`${describe} (UTC, YYYY-MM-DDTHH:MM:SS.ffffff)`)

/** The calls by operation: a key is the operation's name (the client's function, OpenAPI's operationId, the engine's call). */
export const MERCHANT_CALLS = {
  /** `POST /subscriptions/init` with the API key: `{ httpStatus, envelope, reason }` (`reason` on failures). */
  init: {
    path: '/subscriptions/init',
    summary: 'Start a subscription flow for an MSISDN',
    fields: {
      msisdn: { describe: 'Subscriber phone number, international format, digits only (e.g. 60123456789)' },
      service_code: { filled: true, describe: 'Service identifier provisioned for the merchant account' },
      country_code: {
        pattern: /^[a-z]{2}$/,
        patternName: 'lower-case ISO-3166-1 alpha-2',
        shape: 'two lower-case letters (ISO-3166-1 alpha-2, e.g. "my")',
        describe: 'ISO-3166-1 alpha-2 country code, lower case',
      },
      language: LANGUAGE,
    },
    answer: {
      verif_request_id: nullableText('Verification request ID (UUID) to pass to Verify in OTP flows'),
      short_code: nullableText('SMS short code the user texts (PSMS)'),
      keyword: nullableText('SMS keyword the user texts to short_code (PSMS)'),
      carrier_code: nullableText('Detected carrier code for the MSISDN'),
      redirect_url: nullableText('URL to which the user is redirected to verify payment (redirect markets)'),
    },
    outcomes: OPERATION_OUTCOMES.init,
    origin: true,
  },
  /** `POST /subscriptions/verify` */
  verify: {
    path: '/subscriptions/verify',
    summary: 'Submit the OTP; activates the subscription and attempts the first charge',
    fields: {
      verif_request_id: { filled: true, describe: 'UUID returned by Init' },
      otp: { filled: true, describe: 'The OTP the subscriber received by SMS' },
      language: LANGUAGE,
    },
    answer: { subscription_id: { describe: 'Identifier of the activated subscription' } },
    outcomes: OPERATION_OUTCOMES.verify,
  },
  /** `POST /subscriptions/status` */
  status: {
    path: '/subscriptions/status',
    summary: 'Read the state of one subscription of the calling merchant',
    fields: { subscription_id: { filled: true, describe: "The subscription's public UUID" } },
    // In the spec's order.
    answer: {
      subscription_id: {},
      status: { oneOf: ['ACTIVE', 'CANCELED', 'EXPIRED'], open: true },
      msisdn: {},
      service_code: {},
      service_name: {},
      subscribed_dt: timestamp('When the subscription was first activated'),
      expiry_dt: timestamp('When the subscription expires; re-billing is attempted then'),
      canceled_dt: timestamp('When the subscription was canceled'),
      content_link: nullableText('URL to service content'),
    },
    outcomes: OPERATION_OUTCOMES.status,
  },
} as const satisfies Record<string, MerchantCall>

/**
 * The engine writes the Status payload (`core/views.ts`, which may not import this file): its fields
 * are the declared ones, or this fails to compile (their order is held by a test).
 */
const STATUS_FIELDS_DECLARED: SameKeys<StatusPayload, (typeof MERCHANT_CALLS)['status']['answer']> = true
void STATUS_FIELDS_DECLARED
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : false

/** `init`, `verify`, `status`: the keys of the declaration. */
export type MerchantOperation = keyof typeof MERCHANT_CALLS

export const MERCHANT_OPERATIONS = Object.keys(MERCHANT_CALLS) as MerchantOperation[]

/** The operation of each merchant path (`/subscriptions/init` → `init`). */
export const MERCHANT_PATHS: Record<string, MerchantOperation> = Object.fromEntries(MERCHANT_OPERATIONS.map((op) => [MERCHANT_CALLS[op].path, op]))

/** Whether a path is one of the merchant API's. */
export const isMerchantPath = (path: string): boolean => Object.hasOwn(MERCHANT_PATHS, path)

/** A body as its call's fields make it: the required ones as text, the optional ones text, null or absent. */
export type BodyOf<F> = { -readonly [K in keyof F as F[K] extends { optional: true } ? never : K]: string } & {
  -readonly [K in keyof F as F[K] extends { optional: true } ? K : never]?: string | null
}

/** A success's payload as its call's answer fields make it (an open list: its values or any other text). */
export type PayloadOf<F> = {
  -readonly [K in keyof F]:
    | (F[K] extends { oneOf: readonly (infer E)[] } ? E | (F[K] extends { open: true } ? string & {} : never) : string)
    | (F[K] extends { nullable: true } ? null : never)
}

/** Why a body does not fit its call: the first field that fails, in the fields' order, and how. */
export interface BodyProblem {
  field: string
  /** The value given (undefined when absent). */
  value: unknown
  /** `required`: absent; `type`: not text; `empty`: the empty text; `case`: right but for its case; `shape`: not the pattern. */
  kind: 'required' | 'type' | 'empty' | 'case' | 'shape'
  rule: FieldRule
}

/**
 * The one check of a merchant body: the input the engine gets (the declared fields in their order,
 * extra ones left out), or the first problem. The zod schemas of `contract/merchant.ts` are made
 * from the same fields and take the same bodies (`test/contract/merchant-calls.test.ts`).
 */
export function checkBody<O extends MerchantOperation>(
  op: O,
  body: Record<string, unknown>,
): { input: BodyOf<(typeof MERCHANT_CALLS)[O]['fields']> } | { problem: BodyProblem } {
  const { names, rules } = FIELD_LISTS[op]
  const input: Record<string, string | null> = {}
  // An indexed loop over the fields listed once, strings first: this runs for every merchant call.
  for (let i = 0; i < names.length; i++) {
    const field = names[i]!
    const rule = rules[i]!
    const value = body[field]
    if (typeof value === 'string' && value !== '' && (rule.pattern === undefined || rule.pattern.test(value))) input[field] = value
    else if (value === undefined && rule.optional) continue
    else if (value === null && rule.optional) input[field] = null
    else if (value === '' && !rule.filled && !rule.pattern) input[field] = value
    else return { problem: problemOf(field, value, rule) }
  }
  // Every required field was put in as text, each optional one as text or null when given.
  return { input: input as BodyOf<(typeof MERCHANT_CALLS)[O]['fields']> }
}

/** How a field's value fails its rule (the value is known to fail it). */
function problemOf(field: string, value: unknown, rule: FieldRule): BodyProblem {
  if (value === undefined) return { field, value, kind: 'required', rule }
  if (typeof value !== 'string') return { field, value, kind: 'type', rule }
  if (value === '') return { field, value, kind: 'empty', rule }
  return { field, value, kind: new RegExp(rule.pattern!.source, 'i').test(value) ? 'case' : 'shape', rule }
}

/** Whether the engine is given the server's origin with the call (`origin` of the declaration). */
export const takesOrigin = (op: MerchantOperation): boolean => (MERCHANT_CALLS[op] as MerchantCall).origin === true

/** A call's field names, in their order (a refusal names a body's key that looks like one). */
export const fieldNames = (op: MerchantOperation): readonly string[] => FIELD_LISTS[op].names

/** Each call's field names and rules as lists, made once. */
const FIELD_LISTS = Object.fromEntries(
  MERCHANT_OPERATIONS.map((op) => {
    const entries = Object.entries(MERCHANT_CALLS[op].fields as Record<string, FieldRule>)
    return [op, { names: entries.map(([name]) => name), rules: entries.map(([, rule]) => rule) }]
  }),
) as Record<MerchantOperation, { names: string[]; rules: FieldRule[] }>
