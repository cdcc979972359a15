/**
 * The control operations as typed functions (docs/reference/library.md): what the control API does, each
 * answering the control API's JSON. One interface, three implementations' worth of callers: the
 * in-process operations (`src/control/operations.ts`: the HTTP handlers and the library call them),
 * the HTTP client (`src/client/`: the CLI calls it). A refused call throws `SandboxError` (code, status).
 * Types only: importing this file loads nothing.
 */
import type {
  ClockMoveAnswer,
  CoverageAnswer,
  CoverageQuery,
  ClockView,
  DeletedAnswer,
  HealthAnswer,
  MessagesAnswer,
  MessagesQuery,
  MoAnswer,
  MoBody,
  OtpAnswer,
  RequestsAnswer,
  RequestsQuery,
  ResetBody,
  ResetAnswer,
  WorldDocument,
  WorldWithSources,
  RulesAnswer,
  RuntimeRule,
  ScenariosAnswer,
  SmsAnswer,
  SubscriptionFilter,
  SubscriptionsAnswer,
  SubscriptionDetail,
  SubscriptionView,
} from './control.js'
import type { ConsentAnswer, MerchantCallFunctions } from './merchant.js'
import type { z } from 'zod'
import type { RuleSchema } from '../core/world-schema.js'

/**
 * A carrier rule as a fixture file's `rules` hold it (the schema's input side: fields with a default
 * may be left out), for `rules.add`: `id` made up when absent. Typed, so a misplaced field (an effect
 * beside `effect`, not in it) fails to compile for a sandbox's and a client's callers alike.
 */
export type Rule = Omit<z.input<typeof RuleSchema>, 'id'> & { id?: string }

/** Which OTP `otp` reads: the latest sent to an MSISDN, or one verification request's (whatever later Inits sent). */
export type OtpTarget = string | { verif_request_id: string }

export interface OtpOptions {
  /** Wait up to this many seconds (0 to 120) for an OTP to arrive. */
  wait?: number
  /** Stop waiting when this aborts: the call rejects with its reason, as `fetch` does (in the server: the HTTP client hung up). */
  signal?: AbortSignal
}

/** The runtime carrier rules: `GET|POST|DELETE /_sandbox/rules`, `DELETE /_sandbox/rules/{id}`. */
export interface RuleOperations {
  /** Adds a rule (a fixture file's rule; `id` made up when absent); answers it as stored. */
  add(rule: Rule): Promise<RuntimeRule>
  /** Removes one runtime rule (RULE_NOT_FOUND when there is none). */
  remove(id: string): Promise<DeletedAnswer>
  /** Every rule in force in the order consulted (with `source` and `used`), and the runtime rules as added. */
  list(): Promise<RulesAnswer>
  /** Removes every runtime rule; answers how many. */
  clear(): Promise<DeletedAnswer>
}

export interface ControlOperations {
  /** `GET /_sandbox/health` */
  health(): Promise<HealthAnswer>
  /** `GET /_sandbox/scenarios`: the magic numbers and rules of the loaded world and the runtime rules. */
  scenarios(): Promise<ScenariosAnswer>
  /**
   * `GET /_sandbox/otp?msisdn=&wait=` (or `?verif_request_id=`): the latest OTP sent to the MSISDN, or that
   * verification request's (NO_OTP when none was delivered; VERIFICATION_NOT_FOUND for an unknown id).
   */
  otp(which: OtpTarget, opts?: OtpOptions): Promise<OtpAnswer>
  /** `GET /_sandbox/sms?msisdn=`: the handset's inbox and outbox, newest first. */
  sms(msisdn: string): Promise<SmsAnswer>
  /** `GET /_sandbox/messages?msisdn=&limit=`: every handset's messages (renewal notices included), newest first (the console's Messages page). */
  messages(query?: MessagesQuery): Promise<MessagesAnswer>
  /** `POST /_sandbox/mo`: a mobile-originated SMS (PSMS keyword, STOP). */
  mo(message: MoBody): Promise<MoAnswer>
  /** `GET /_sandbox/subscriptions?msisdn=&merchant=&service=&status=&limit=`: any merchant's, newest first. */
  subscriptions(filter?: SubscriptionFilter): Promise<SubscriptionsAnswer>
  /** `GET /_sandbox/subscriptions/{id}`: one subscription with its charges. */
  subscription(id: string): Promise<SubscriptionDetail>
  /** `POST /_sandbox/subscriptions/{id}/cancel`: carrier-side cancellation. */
  cancel(id: string): Promise<SubscriptionView>
  /** `GET /_sandbox/clock` */
  now(): Promise<ClockView>
  /** `POST /_sandbox/clock/advance {by}`: runs every event that falls due, in time order. */
  advance(by: string): Promise<ClockMoveAnswer>
  /** `POST /_sandbox/clock/set {to}`: forward only (CLOCK_BACKWARDS). */
  setTime(to: string): Promise<ClockMoveAnswer>
  rules: RuleOperations
  /** `GET /_sandbox/requests?limit=&since=&msisdn=`: the request log, newest first. */
  requests(opts?: RequestsQuery): Promise<RequestsAnswer>
  /** `GET /_sandbox/coverage?merchant=`: per merchant, the outcomes its traffic exercised and its findings, since the last reset. */
  coverage(opts?: CoverageQuery): Promise<CoverageAnswer>
  /** `POST /_sandbox/reset {clock?, frozen?, seed?}`: back to the loaded world (and an empty request log), at `clock` when given; delays drawn from `seed` (default 0). */
  reset(opts?: ResetBody): Promise<ResetAnswer>
  /** `GET /_sandbox/world`: the world as loaded, as one fixture document (runtime rules not included). */
  world(): Promise<WorldDocument>
  /** `GET /_sandbox/world?sources=1`: the same, with the file each record and rule came from. */
  worldSources(): Promise<WorldWithSources>
}

/**
 * The merchant API's calls (one function per call of `merchant-calls.ts`) and the subscriber's
 * consent decision, on a sandbox and on a client alike. They answer what the API answers (a FAIL envelope is an answer, not an exception).
 */
export interface MerchantOperations extends MerchantCallFunctions {
  /** Approves or denies a consent page (its `redirect_url`, or its id): `{ status: 303, location }`; CONSENT_NOT_FOUND when there is none. */
  consent(url: string, action: 'approve' | 'deny'): Promise<ConsentAnswer>
}
