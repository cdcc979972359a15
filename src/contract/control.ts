/**
 * The control API's wire contract (`/_sandbox`, docs/reference/control-api.md): every query and body as a zod
 * schema that validates it (a bad one answers 400 naming the field and what was expected), every
 * answer as a zod schema that documents it in `/openapi.json`, and the types of both derived here
 * once. The server and the in-process operations import this module; the client and the CLI import
 * its types only (`import type`), so they never load zod for it.
 */
import { z } from 'zod'
import { FAULT_KINDS } from '../core/wire.js'
import { MAX_OTP_WAIT_S } from './defaults.js'
import { ChargeView, SubscriptionDetail, SubscriptionsAnswer, SubscriptionView, TimelineEntry } from './control-subscriptions.js'
import type { CoverageOutcome } from '../core/coverage.js'
import { EVENT_TYPES } from '../core/events.js'

/** The longest MO text: ten concatenated parts of 160 characters. */
export const MAX_MO_TEXT = 1600

const text = (what: string) => z.string({ error: `expected ${what}` }).min(1, { error: `expected ${what}` })
const timestamp = z.string().describe('UTC, YYYY-MM-DDTHH:MM:SS.ffffff')
const msisdn = text('an MSISDN (digits, calling code first)').describe('MSISDN, digits, calling code first')
/** A filter by MSISDN: digits only, so a typo is refused by name rather than answering an empty list. */
const msisdnFilter = z.string().regex(/^\d{1,20}$/, { error: 'expected an MSISDN (digits only, calling code first)' })
/** The handset a read is about (sms, otp): digits only, so `dcb sms abc` is refused rather than answering no messages. */
const handset = z
  .string({ error: 'expected an MSISDN (digits, calling code first)' })
  .regex(/^\d{1,20}$/, { error: 'expected an MSISDN (digits only, calling code first)' })
  .describe('MSISDN, digits, calling code first')
const wholeNumber = (what: string, min: number) =>
  z.coerce
    .number({ error: `expected ${what}` })
    .int({ error: `expected ${what}` })
    .min(min, { error: `expected ${what}` })

// ---------------------------------------------------------------- requests

/** The most entries one read of the request log answers: the most `--request-log-size` keeps. */
export const MAX_REQUESTS_LIMIT = 1_000_000
/** The most subscriptions one read of the list answers (a session may hold more: filter them). */
export const MAX_SUBSCRIPTIONS_LIMIT = 100_000

export const MsisdnQuery = z.object({ msisdn: handset })
export const MessagesQuery = z.object({
  msisdn: msisdnFilter.optional().describe('only this handset'),
  limit: wholeNumber('a whole number from 1 to 5000', 1)
    .max(5000, { error: 'expected a whole number from 1 to 5000' })
    .optional()
    .describe('at most this many (default 200)'),
})
export const OtpQuery = z
  .object({
    msisdn: handset.optional().describe('the latest OTP sent to this MSISDN (MSISDN digits, calling code first)'),
    verif_request_id: text('a verif_request_id').optional().describe("that verification request's OTP, whatever later Inits sent"),
    wait: z.coerce
      .number({ error: `expected a number of seconds from 0 to ${MAX_OTP_WAIT_S}` })
      .min(0, { error: `expected a number of seconds from 0 to ${MAX_OTP_WAIT_S}` })
      .max(MAX_OTP_WAIT_S, { error: `expected a number of seconds from 0 to ${MAX_OTP_WAIT_S}` })
      .optional()
      .describe('wait up to this many seconds for an OTP to arrive'),
  })
  .superRefine((q, ctx) => {
    const given = (q.msisdn !== undefined ? 1 : 0) + (q.verif_request_id !== undefined ? 1 : 0)
    if (given !== 1)
      ctx.addIssue({
        code: 'custom',
        message: given
          ? 'give msisdn or verif_request_id, not both'
          : "give msisdn (the latest OTP sent to it) or verif_request_id (that verification request's OTP)",
      })
  })
export const MoBody = z.object({
  msisdn,
  short_code: text('a short code, e.g. 32123').describe('the short code the handset texts'),
  // Kept with its handset (and quoted by the reply to an unknown keyword) up to --max-sms times: bounded
  // by length as the inboxes are by count, or 50,000 MOs of 64 KiB would hold gigabytes.
  text: text('the text of the message, e.g. a keyword or STOP')
    .max(MAX_MO_TEXT, { error: `expected at most ${MAX_MO_TEXT} characters (a long SMS of ten parts)` })
    .describe(`the message: a PSMS keyword, STOP, or anything else (at most ${MAX_MO_TEXT} characters)`),
})
export const SubscriptionFilter = z.object({
  msisdn: msisdnFilter.optional().describe('only this handset'),
  merchant: z.string().optional().describe('merchant id'),
  service: z.string().optional().describe('service code'),
  // A typo (`cancelled`, `bogus`) is refused by name rather than answering an empty list.
  status: z
    .string()
    .refine((s) => ['ACTIVE', 'CANCELED', 'EXPIRED'].includes(s.toUpperCase()), { error: 'expected ACTIVE, CANCELED or EXPIRED (any case)' })
    .optional()
    .describe('ACTIVE, CANCELED or EXPIRED (any case)'),
  limit: wholeNumber('a positive whole number', 1)
    .max(MAX_SUBSCRIPTIONS_LIMIT, { error: `expected a whole number from 1 to ${MAX_SUBSCRIPTIONS_LIMIT}` })
    .optional()
    .describe(`at most this many (default 1000, at most ${MAX_SUBSCRIPTIONS_LIMIT}), newest first`),
})
export const AdvanceBody = z.object({
  by: text('a duration such as P1M or 36h').describe('ISO-8601 duration (P1M, PT6M) or short form (36h, 90m, 2d, 1w, 1mo)'),
})
export const SetTimeBody = z.object({ to: text('a time such as 2026-01-31T00:00:00').describe('ISO-8601 time, later than now') })
export const RequestsQuery = z.object({
  limit: wholeNumber('a positive whole number', 1)
    .max(MAX_REQUESTS_LIMIT, { error: `expected a whole number from 1 to ${MAX_REQUESTS_LIMIT} (the most --request-log-size keeps)` })
    .optional()
    .describe(`at most this many (default 100, at most ${MAX_REQUESTS_LIMIT}), newest first`),
  since: wholeNumber('a whole number from 0', 0).optional().describe('only entries with an id above this one (default 0)'),
  msisdn: msisdnFilter.optional().describe('only entries about this MSISDN'),
  subscription: text('a subscription_id')
    .optional()
    .describe('only entries about this subscription: the ones that name it and the ones that created it (its Init, Verify attempts, consent decision or MO)'),
})
/** Why a reset's seed is refused: a whole number from 0 (JSON's safe integers). */
const SEED_WORDS = `expected a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`
export const ResetBody = z.object({
  clock: text('a time such as 2026-01-31T00:00:00').optional().describe('start over at this sandbox time (earlier than now too)'),
  frozen: z.boolean({ error: 'expected true or false' }).optional().describe('with clock: freeze it there (default: frozen or running as it is)'),
  seed: z
    .number({ error: SEED_WORDS })
    .int({ error: SEED_WORDS })
    .min(0, { error: SEED_WORDS })
    .max(Number.MAX_SAFE_INTEGER, { error: SEED_WORDS })
    .optional()
    .describe('draw delay distributions from this seed (default 0, the same at every reset): the same calls then get the same delays'),
})
export const CoverageQuery = z.object({
  merchant: text('a merchant id').optional().describe('only this merchant (default: every merchant with traffic in the session)'),
  sessions: text('session names separated by commas, or a glob')
    .optional()
    .describe('merge these sessions (A,B or a glob such as ci-*): counts and findings summed per merchant'),
})
export const WorldQuery = z.object({
  sources: z.string().optional().describe('present: answer { world, sources } with the file each record and rule came from'),
})
/** A runtime rule as written in a fixture file's `rules`; `id` is made up when absent. The engine checks it (BAD_RULE). */
export const RuleBody = z.looseObject({}).describe('a carrier rule as in a fixture file (see `dcb fixtures schema`); id optional')

// ---------------------------------------------------------------- answers

export const ControlErrorAnswer = z.object({ error: z.string().describe('the code (see the table of control errors)'), message: z.string() })

export const ClockView = z.object({
  now: timestamp,
  frozen: z.boolean(),
  offset_ms: z.number(),
  next_event_dt: timestamp.nullable().describe('when the next renewal, retry or expiry falls due'),
  move: z
    .object({ to: timestamp.describe('where the move goes'), events_run: z.number().int().describe('events it ran so far') })
    .optional()
    .describe('while a clock move runs: now is the time it reached (every event up to it ran), next_event_dt the next one after it'),
})
export const SandboxEvent = z.object({
  at: timestamp,
  type: z
    .enum(EVENT_TYPES)
    .describe(
      'renewed, renewal_failed, retry_succeeded, retry_failed, renewal_skipped and retry_skipped (an inactive merchant: nothing charged), carrier_canceled, otp_expired, consent_expired',
    ),
  subscription_id: z.string().optional(),
  verif_request_id: z.string().optional(),
  msisdn: z.string().optional(),
  service_code: z.string().optional(),
  status: z.string().optional(),
  code: z.string().optional(),
  reason: z.string().optional().describe('a failed renewal or retry: the rule that failed it'),
  expiry_dt: timestamp.nullable().optional(),
})
export const ClockMoveAnswer = z.object({
  clock: ClockView,
  events: z.array(SandboxEvent).describe('what happened, in time order'),
  events_omitted: z.number().int().optional().describe('events that ran but are not listed (the answer lists the first 64 MiB)'),
  event_counts: z
    .array(z.object({ type: z.string(), code: z.string().optional().describe('a failure: its code'), count: z.number().int() }))
    .optional()
    .describe('with events_omitted: every event the move ran (listed or not), by type and code, most first; they add up to the whole'),
  events_last: z.array(SandboxEvent).optional().describe('with events_omitted: the last 20 events the move ran, in time order'),
})
export const SmsMessage = z.object({
  id: z.string(),
  msisdn: z.string(),
  direction: z.enum(['mt', 'mo']).describe('mt: to the handset (inbox); mo: from it (outbox)'),
  from: z.string(),
  to: z.string(),
  text: z.string(),
  at: timestamp,
  kind: z.string().describe('otp, welcome, renewal, mo, stop, help, failure, canceled, ...'),
  verif_request_id: z.string().optional(),
  otp: z.string().optional(),
  subscription_id: z.string().optional(),
  sent_dt: timestamp.optional().describe('a late SMS (a rule of the otp step, deliver_after): when it was sent'),
  delivered_dt: timestamp.optional().describe('a late SMS: when it reached the inbox (as at)'),
})
export const SmsAnswer = z.object({ msisdn: z.string(), messages: z.array(SmsMessage).describe('newest first') })
export const MessagesAnswer = z.object({ messages: z.array(SmsMessage).describe('every handset, newest first') })
export const OtpAnswer = z.object({
  otp: z.string(),
  verif_request_id: z.string(),
  msisdn: z.string(),
  sent_dt: timestamp,
  delivered_dt: timestamp.optional().describe('a late SMS (deliver_after): when it reached the inbox'),
  text: z.string(),
})
export const MoAnswer = z.object({
  action: z.enum(['subscribed', 'stop', 'ignored', 'unknown_keyword', 'rejected', 'charge_failed']),
  subscription_id: z.string().optional(),
  service_code: z.string().optional(),
  merchant: z.string().optional(),
  code: z.string().optional().describe('the failure, for rejected and charge_failed'),
  canceled: z.array(z.string()).optional().describe('STOP: the subscriptions canceled'),
  keywords: z.array(z.string().nullable()).optional(),
  reason: z.string().optional(),
  carrier_code: z.string().optional(),
  message: z.string().optional(),
})
export { ChargeView, SubscriptionDetail, SubscriptionsAnswer, SubscriptionView, TimelineEntry }
export const RuntimeRule = z.object({
  id: z.string(),
  created_at: z.number().describe('epoch ms'),
  seq: z.number().int().optional().describe('the order added (the last added is consulted first)'),
  rule: z.unknown(),
  used: z.number().int(),
})
export const RuleInForce = z
  .looseObject({
    id: z.string(),
    source: z.string().describe('"runtime", or the fixture file the rule came from'),
    used: z.number().int().describe('how many times it decided a step'),
    step: z.union([z.string(), z.array(z.string())]),
    match: z.record(z.string(), z.unknown()),
    effect: z.record(z.string(), z.unknown()),
  })
  .describe('a rule with its source and use count (and its other fields: description, nth, times)')
export const RulesAnswer = z.object({
  rules: z
    .array(RuleInForce)
    .describe('every rule in force, in the order consulted: runtime rules (last added first), then the fixture files (last first), the default world last'),
  runtime: z.array(RuntimeRule).describe('the runtime rules as added, oldest first'),
  left_out: z
    .array(z.object({ id: z.string(), problem: z.string() }))
    .optional()
    .describe('stored runtime rules not in force, each with why (a regex past the bound of one rule, or of all sessions together); absent when none'),
})
export const WorldDocument = z
  .looseObject({
    extends: z.literal('none'),
    merchants: z.array(z.unknown()),
    services: z.array(z.unknown()),
    countries: z.array(z.unknown()),
    carriers: z.array(z.unknown()),
    rules: z.array(z.unknown()).describe('in the order consulted'),
    messages: z.record(z.string(), z.unknown()),
  })
  .describe(
    'the world as loaded, as one fixture document (API keys as sha256; runtime rules not included): loaded alone with --fixtures it gives the same world',
  )
export const WorldWithSources = z.object({
  world: WorldDocument,
  sources: z
    .object({
      merchants: z.record(z.string(), z.array(z.string())),
      services: z.record(z.string(), z.array(z.string())),
      countries: z.record(z.string(), z.array(z.string())),
      carriers: z.record(z.string(), z.array(z.string())),
      rules: z.record(z.string(), z.string()),
    })
    .nullable()
    .describe('the files each record (all that gave fields of it) and rule came from; null for a world given as an object'),
})
export const DeletedAnswer = z.object({ deleted: z.number().int() })
export const RequestLogEntry = z.object({
  id: z.number().int(),
  time: z.string().describe('real time, ISO-8601'),
  sandbox_time: timestamp,
  method: z.string(),
  path: z.string(),
  ip: z.string().nullable(),
  merchant: z.string().nullable(),
  msisdn: z.string().nullable().describe('the MSISDN the request concerns, when its merchant may see it'),
  http_status: z.number().int(),
  message: z.string(),
  reason: z.string().nullable().describe('why it failed (the X-DCB-Reason text); null on success'),
  client_closed: z.literal(true).optional().describe('the client went away before the answer (it was done all the same)'),
  fault: z
    .object({ kind: z.enum(FAULT_KINDS), when: z.enum(['before', 'after']) })
    .optional()
    .describe('what the connection did instead of the answer (a rule’s fault); `response` is the answer it cut'),
  response_headers: z.record(z.string(), z.string()).optional().describe('the headers sent with a body that is not the envelope (a gateway’s page)'),
  delay_ms: z.number().int().optional().describe('how long a rule held the answer back (a delay distribution: the value drawn); absent when none did'),
  duration_ms: z.number(),
  request: z.unknown(),
  response: z.unknown().describe('the envelope, or the text really sent (a gateway’s page)'),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe('a merchant call’s request headers, the API key masked unless shipped; absent on other entries'),
})
export const RequestsAnswer = z.object({ capacity: z.number().int(), requests: z.array(RequestLogEntry).describe('newest first') })
export const ResetAnswer = z.object({ ok: z.literal(true), clock: ClockView, seed: z.number().describe('the seed delay distributions are drawn from') })
export const SessionView = z.object({
  name: z.string().describe('`default` for the default session'),
  subscriptions: z.number().int(),
  messages: z.number().int(),
  requests: z.number().int().describe('merchant calls in its request log'),
  now: z.string().describe("the session's clock"),
})
export const SessionsAnswer = z.object({ sessions: z.array(SessionView).describe('every session, the default one first') })
export const SessionDeletedAnswer = z.object({ deleted: z.string().describe('the name of the session deleted') })
// The ids as a union: a test comparing against a misspelt one ('verify.INSUFFICENT_FUNDS') fails to compile.
export const CoverageOutcomeCount = z.object({
  // Derived from the world in force, so checked as a string; typed as the union of every id the engine may count.
  id: z.string().describe('e.g. init.otp, verify.INSUFFICIENT_FUNDS, renewal.failed') as unknown as z.ZodType<CoverageOutcome, string>,
  count: z.number().int(),
  how: z.string().optional().describe('on an outcome never seen: how to produce it in the world in force'),
  codes: z
    .record(z.string(), z.number().int())
    .optional()
    .describe('counts per carrier code (renewal.failed, retry.failed, mo.charge_failed, consent.charge_failed)'),
})
export const CoverageFinding = z.object({
  code: z.enum(['LOST_ACTIVATION', 'VERIFY_AFTER_LOCKOUT', 'INVALID_REQUEST', 'AUTH_FAILURE', 'FAST_RETRY', 'INIT_WHILE_ACTIVE', 'UNRECONCILED']),
  count: z.number().int(),
  example: z.number().int().nullable().describe('the request log id of the latest occurrence (null when the request log no longer holds it)'),
  advice: z.string().describe('what to do instead, in one sentence'),
})
export const MerchantCoverage = z.object({
  merchant: z.string(),
  since: timestamp.describe('the sandbox time the counts started (the last reset)'),
  covered: z.number().int().describe('outcomes with a count above zero'),
  total: z.number().int().describe('outcomes in all'),
  percent: z.number().int().describe('covered / total, rounded down'),
  outcomes: z.array(CoverageOutcomeCount).describe('every outcome the world in force can produce (and any counted), in a fixed order'),
  findings: z.array(CoverageFinding).describe('what the traffic did wrong (only those seen), in a fixed order'),
})
export const CoverageAnswer = z.object({ coverage: z.array(MerchantCoverage).describe('per merchant, in the order of the world') })
export const HealthAnswer = z.object({
  ok: z.literal(true),
  version: z.string(),
  now: timestamp,
  store: z.record(z.string(), z.unknown()),
  sizes: z.object({
    subscriptions: z.number().int(),
    verifications: z.number().int(),
    sms: z.number().int(),
    rules: z.number().int(),
    queue: z.number().int().describe('clock events waiting'),
  }),
  memory_mib: z.object({ rss: z.number(), heap_used: z.number() }),
})
export const Scenario = z.object({
  id: z.string(),
  source: z.enum(['fixture', 'runtime']),
  match: z.string(),
  step: z.string(),
  outcome: z.string(),
  description: z.string(),
})
/** The public shape of the loaded world (no keys, no allowlists): enough to build valid MSISDNs (`dcb flow --country`). */
export const WorldSummary = z.object({
  countries: z.array(
    z.object({ code: z.string(), name: z.string().nullable(), calling_code: z.string(), lengths: z.array(z.number().int()), landlines: z.array(z.string()) }),
  ),
  carriers: z.array(
    z.object({
      code: z.string(),
      country: z.string(),
      prefixes: z.array(z.string()),
      lengths: z.array(z.number().int()),
      flow: z.string(),
      provisioned: z.boolean(),
      short_code: z.string().nullable(),
    }),
  ),
  services: z.array(
    z.object({ code: z.string(), merchant: z.string(), name: z.string(), period: z.string(), keyword: z.string().nullable(), countries: z.array(z.string()) }),
  ),
})
export const ScenariosAnswer = z.object({ scenarios: z.array(Scenario), world: WorldSummary })

// ---------------------------------------------------------------- types

export type MoBody = z.infer<typeof MoBody>
export type SubscriptionFilter = z.infer<typeof SubscriptionFilter>
export type RequestsQuery = z.infer<typeof RequestsQuery>
export type ResetBody = z.infer<typeof ResetBody>
export type MessagesQuery = z.infer<typeof MessagesQuery>
export type MessagesAnswer = z.infer<typeof MessagesAnswer>
export type ControlErrorAnswer = z.infer<typeof ControlErrorAnswer>
export type ClockView = z.infer<typeof ClockView>
export type SandboxEvent = z.infer<typeof SandboxEvent>
export type ClockMoveAnswer = z.infer<typeof ClockMoveAnswer>
export type SmsMessage = z.infer<typeof SmsMessage>
export type SmsAnswer = z.infer<typeof SmsAnswer>
export type OtpAnswer = z.infer<typeof OtpAnswer>
export type MoAnswer = z.infer<typeof MoAnswer>
export type SubscriptionView = z.infer<typeof SubscriptionView>
export type SubscriptionsAnswer = z.infer<typeof SubscriptionsAnswer>
export type TimelineEntry = z.infer<typeof TimelineEntry>
export type SubscriptionDetail = z.infer<typeof SubscriptionDetail>
export type RuntimeRule = z.infer<typeof RuntimeRule>
export type RuleInForce = z.infer<typeof RuleInForce>
export type WorldDocument = z.infer<typeof WorldDocument>
export type WorldWithSources = z.infer<typeof WorldWithSources>
export type RulesAnswer = z.infer<typeof RulesAnswer>
export type DeletedAnswer = z.infer<typeof DeletedAnswer>
export type RequestLogEntry = z.infer<typeof RequestLogEntry>
export type RequestsAnswer = z.infer<typeof RequestsAnswer>
export type ResetAnswer = z.infer<typeof ResetAnswer>
export type SessionView = z.infer<typeof SessionView>
export type SessionsAnswer = z.infer<typeof SessionsAnswer>
export type SessionDeletedAnswer = z.infer<typeof SessionDeletedAnswer>
export type HealthAnswer = z.infer<typeof HealthAnswer>
export type CoverageQuery = z.infer<typeof CoverageQuery>
export type CoverageAnswer = z.infer<typeof CoverageAnswer>
export type MerchantCoverage = z.infer<typeof MerchantCoverage>
export type CoverageFinding = z.infer<typeof CoverageFinding>
/** An outcome's id in a coverage answer (`init.otp`, `verify.INSUFFICIENT_FUNDS`, …, derived from the engine's tables). */
export type CoverageOutcomeId = z.infer<typeof CoverageOutcomeCount>['id']
export type Scenario = z.infer<typeof Scenario>
export type ScenariosAnswer = z.infer<typeof ScenariosAnswer>
export type WorldSummary = z.infer<typeof WorldSummary>
