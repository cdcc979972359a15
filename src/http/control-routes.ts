/**
 * The control API's calls, one table: for each declared operation and session call (`contract/calls.ts`:
 * method and path), the schemas of query, body and answer, the errors it can answer. The router (`control.ts`) and the OpenAPI
 * document (`openapi.ts`) are both made from it, so they cannot drift.
 */
import { z } from 'zod'
import type { ControlErrorCode } from '../core/errors.js'
import {
  AdvanceBody,
  ClockMoveAnswer,
  ClockView,
  CoverageAnswer,
  CoverageQuery,
  DeletedAnswer,
  HealthAnswer,
  MessagesAnswer,
  MessagesQuery,
  MoAnswer,
  MoBody,
  MsisdnQuery,
  OtpAnswer,
  OtpQuery,
  RequestsAnswer,
  RequestsQuery,
  ResetAnswer,
  ResetBody,
  RuleBody,
  RulesAnswer,
  RuntimeRule,
  ScenariosAnswer,
  SessionDeletedAnswer,
  SessionsAnswer,
  SetTimeBody,
  SmsAnswer,
  SubscriptionFilter,
  SubscriptionsAnswer,
  SubscriptionDetail,
  SubscriptionView,
  WorldDocument,
  WorldQuery,
  WorldWithSources,
} from '../contract/control.js'
import { CONTROL_CALLS, operationOf, SESSION_CALLS, type CallInput, type OperationName, type SessionCallName } from '../contract/calls.js'
import type { ControlOperations } from '../contract/operations.js'

export type RouteInput = CallInput

export interface ControlRoute {
  method: 'GET' | 'POST' | 'DELETE'
  /** Under /_sandbox, with `:name` parameters. */
  path: string
  operationId: string
  summary: string
  query?: z.ZodObject
  body?: z.ZodType
  answer: z.ZodType
  /** The control errors this call can answer besides the pipeline's own (FORBIDDEN, METHOD_NOT_ALLOWED, ERROR). */
  errors: ControlErrorCode[]
  /** The typed operation it calls (`contract/calls.ts` says how the request maps to its arguments). */
  operation: OperationName
  call(ops: ControlOperations, input: RouteInput): Promise<unknown>
}

const NoInput = z.object({})

/** A route: its method and path are its operation's declared call (`contract/calls.ts`), never restated here. */
function route<Q extends z.ZodObject = typeof NoInput, B extends z.ZodType = typeof NoInput>(r: {
  operationId: string
  summary: string
  query?: Q
  body?: B
  answer: z.ZodType
  errors?: ControlErrorCode[]
  operation: OperationName
  /** Only where one path serves two operations; otherwise the declared operation is called. */
  call?: ControlRoute['call']
}): ControlRoute {
  const declared = CONTROL_CALLS[r.operation]
  const call: ControlRoute['call'] = (ops, input) => (operationOf(ops, r.operation) as (...a: unknown[]) => Promise<unknown>)(...declared.args(input))
  return { ...r, method: declared.method, path: declared.path, errors: r.errors ?? [], call: r.call ?? call }
}

export const CONTROL_ROUTES: ControlRoute[] = [
  route({
    operationId: 'health',
    summary: 'Readiness, version, sizes and memory',
    answer: HealthAnswer,
    operation: 'health',
  }),
  route({
    operationId: 'scenarios',
    summary: 'The magic numbers and carrier rules of the loaded world, and the runtime rules',
    answer: ScenariosAnswer,
    operation: 'scenarios',
  }),
  route({
    operationId: 'sms',
    summary: "A handset's inbox and outbox, newest first",
    query: MsisdnQuery,
    answer: SmsAnswer,
    errors: ['BAD_REQUEST'],
    operation: 'sms',
  }),
  route({
    operationId: 'messages',
    summary: "Every handset's messages (renewal notices included), newest first",
    query: MessagesQuery,
    answer: MessagesAnswer,
    errors: ['BAD_REQUEST'],
    operation: 'messages',
  }),
  route({
    operationId: 'otp',
    summary: "The latest OTP sent to an MSISDN, or a verification request's OTP, waiting up to `wait` seconds for one",
    query: OtpQuery,
    answer: OtpAnswer,
    errors: ['BAD_REQUEST', 'NO_OTP', 'VERIFICATION_NOT_FOUND', 'SHUTTING_DOWN'],
    operation: 'otp',
  }),
  route({
    operationId: 'mo',
    summary: 'A mobile-originated SMS to a short code (PSMS keyword, STOP); answers what it did',
    body: MoBody,
    answer: MoAnswer,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'INVALID_MSISDN'],
    operation: 'mo',
  }),
  route({
    operationId: 'subscriptions',
    summary: 'Subscriptions of every merchant, newest first, filterable (`service_code` is read as `service`)',
    query: SubscriptionFilter.extend({ service_code: z.string().optional().describe('the same as service') }),
    answer: SubscriptionsAnswer,
    errors: ['BAD_REQUEST', 'MERCHANT_NOT_FOUND'],
    operation: 'subscriptions',
  }),
  route({
    operationId: 'subscription',
    summary: 'One subscription with its charges and its timeline',
    answer: SubscriptionDetail,
    errors: ['SUBSCRIPTION_NOT_FOUND'],
    operation: 'subscription',
  }),
  route({
    operationId: 'cancel',
    summary: 'Carrier-side cancellation',
    answer: SubscriptionView,
    errors: ['SUBSCRIPTION_NOT_FOUND', 'ALREADY_CANCELED', 'ALREADY_EXPIRED'],
    operation: 'cancel',
  }),
  route({ operationId: 'now', summary: 'The sandbox clock', answer: ClockView, operation: 'now' }),
  route({
    operationId: 'advance',
    summary: 'Moves the clock forward; runs every renewal and lifecycle event that falls due, in time order',
    body: AdvanceBody,
    answer: ClockMoveAnswer,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'BAD_DURATION', 'CLOCK_LIMIT', 'SHUTTING_DOWN'],
    operation: 'advance',
  }),
  route({
    operationId: 'setTime',
    summary: 'Moves the clock forward to a time; runs what falls due, in time order',
    body: SetTimeBody,
    answer: ClockMoveAnswer,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'BAD_TIME', 'CLOCK_BACKWARDS', 'CLOCK_LIMIT', 'SHUTTING_DOWN'],
    operation: 'setTime',
  }),
  route({
    operationId: 'requests',
    summary: 'The request log (bounded), newest first',
    query: RequestsQuery,
    answer: RequestsAnswer,
    errors: ['BAD_REQUEST'],
    operation: 'requests',
  }),
  route({
    operationId: 'coverage',
    summary: "Per merchant: the outcomes its traffic exercised and what it did wrong (findings), since the session's last reset",
    query: CoverageQuery,
    answer: CoverageAnswer,
    errors: ['BAD_REQUEST', 'MERCHANT_NOT_FOUND', 'SESSION_NOT_FOUND'],
    operation: 'coverage',
  }),
  route({
    operationId: 'reset',
    summary: 'Back to the loaded fixtures; with clock, starting over at that time; with seed, delays drawn from it',
    body: ResetBody,
    answer: ResetAnswer,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'BAD_TIME', 'CLOCK_LIMIT'],
    operation: 'reset',
  }),
  route({
    operationId: 'world',
    summary: 'The world as loaded, as one fixture document; `?sources=1` adds the file each record and rule came from',
    query: WorldQuery,
    answer: z.union([WorldDocument, WorldWithSources]),
    errors: ['BAD_REQUEST'],
    operation: 'world',
    call: (ops, { query }) => (query.sources !== undefined ? ops.worldSources() : ops.world()),
  }),
  route({
    operationId: 'listRules',
    summary: 'Every carrier rule in force, in the order consulted, with its source and use count; and the runtime rules as added',
    answer: RulesAnswer,
    operation: 'rules.list',
  }),
  route({
    operationId: 'addRule',
    summary: 'Adds a runtime carrier rule',
    body: RuleBody,
    answer: RuntimeRule,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'BAD_RULE', 'RULE_EXISTS'],
    operation: 'rules.add',
  }),
  route({
    operationId: 'clearRules',
    summary: 'Removes every runtime rule',
    answer: DeletedAnswer,
    operation: 'rules.clear',
  }),
  route({
    operationId: 'removeRule',
    summary: 'Removes one runtime rule',
    answer: DeletedAnswer,
    errors: ['RULE_NOT_FOUND'],
    operation: 'rules.remove',
  }),
]

/** A session route: like `route`, its method and path are its declared call's (`SESSION_CALLS`). */
function sessionRoute(r: { session: SessionCallName; summary: string; answer: z.ZodType; errors: ControlErrorCode[] }): SessionRoute {
  const { method, path } = SESSION_CALLS[r.session]
  return { method, path, operationId: r.session, summary: r.summary, answer: r.answer, errors: r.errors }
}

export type SessionRoute = Omit<ControlRoute, 'call' | 'operation'>

/**
 * The session calls (`sessions.ts` serves them: they act on the server's sessions, not on one
 * session's operations), described like the others for the OpenAPI document.
 */
export const SESSION_ROUTES: SessionRoute[] = [
  sessionRoute({
    session: 'listSessions',
    summary: 'Every session (X-DCB-Session) with its counts and clock, the default one first',
    answer: SessionsAnswer,
    errors: [],
  }),
  sessionRoute({
    session: 'deleteSession',
    summary: 'Deletes a session: its state, clock, inboxes, rules and stored data (not the default one: reset it)',
    answer: SessionDeletedAnswer,
    errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
  }),
]
