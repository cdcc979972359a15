/**
 * The control API's calls, one table: method, path, the schemas of query, body and answer, the
 * errors it can answer, and the operation it calls. The router (`control.ts`) and the OpenAPI
 * document (`openapi.ts`) are both made from it, so they cannot drift.
 */
import { z } from 'zod'
import type { ControlErrorCode } from '../core/errors.js'
import {
  AdvanceBody,
  ClockMoveAnswer,
  ClockView,
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
  SubscriptionView,
  WorldDocument,
  WorldQuery,
  WorldWithSources,
} from '../contract/control.js'
import type { ControlOperations } from '../contract/operations.js'

/** What a handler gets: the query and body as their schemas read them, the path parameters, a signal that aborts when the client hangs up. */
export interface RouteInput<Q, B> {
  query: Q
  body: B
  params: Record<string, string>
  signal: AbortSignal
}

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
  call(ops: ControlOperations, input: RouteInput<unknown, unknown>): Promise<unknown>
}

const NoInput = z.object({})

function route<Q extends z.ZodObject = typeof NoInput, B extends z.ZodType = typeof NoInput>(r: {
  method: ControlRoute['method']
  path: string
  operationId: string
  summary: string
  query?: Q
  body?: B
  answer: z.ZodType
  errors?: ControlErrorCode[]
  call(ops: ControlOperations, input: RouteInput<z.output<Q>, z.output<B>>): Promise<unknown>
}): ControlRoute {
  return { ...r, errors: r.errors ?? [], call: r.call as ControlRoute['call'] }
}

export const CONTROL_ROUTES: ControlRoute[] = [
  route({
    method: 'GET',
    path: '/health',
    operationId: 'health',
    summary: 'Readiness, version, sizes and memory',
    answer: HealthAnswer,
    call: (ops) => ops.health(),
  }),
  route({
    method: 'GET',
    path: '/scenarios',
    operationId: 'scenarios',
    summary: 'The magic numbers and carrier rules of the loaded world, and the runtime rules',
    answer: ScenariosAnswer,
    call: (ops) => ops.scenarios(),
  }),
  route({
    method: 'GET',
    path: '/sms',
    operationId: 'sms',
    summary: "A handset's inbox and outbox, newest first",
    query: MsisdnQuery,
    answer: SmsAnswer,
    errors: ['BAD_REQUEST'],
    call: (ops, { query }) => ops.sms(query.msisdn),
  }),
  route({
    method: 'GET',
    path: '/messages',
    operationId: 'messages',
    summary: "Every handset's messages (renewal notices included), newest first",
    query: MessagesQuery,
    answer: MessagesAnswer,
    errors: ['BAD_REQUEST'],
    call: (ops, { query }) => ops.messages(query),
  }),
  route({
    method: 'GET',
    path: '/otp',
    operationId: 'otp',
    summary: 'The latest OTP sent to an MSISDN, waiting up to `wait` seconds for one',
    query: OtpQuery,
    answer: OtpAnswer,
    errors: ['BAD_REQUEST', 'NO_OTP'],
    // The signal is asked for only when the call may wait (making one costs more than the lookup).
    call: (ops, args) => ops.otp(args.query.msisdn, args.query.wait ? { wait: args.query.wait, signal: args.signal } : {}),
  }),
  route({
    method: 'POST',
    path: '/mo',
    operationId: 'mo',
    summary: 'A mobile-originated SMS to a short code (PSMS keyword, STOP); answers what it did',
    body: MoBody,
    answer: MoAnswer,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'INVALID_MSISDN'],
    call: (ops, { body }) => ops.mo(body),
  }),
  route({
    method: 'GET',
    path: '/subscriptions',
    operationId: 'subscriptions',
    summary: 'Subscriptions of every merchant, newest first, filterable (`service_code` is read as `service`)',
    query: SubscriptionFilter.extend({ service_code: z.string().optional().describe('the same as service') }),
    answer: SubscriptionsAnswer,
    errors: ['BAD_REQUEST'],
    call: (ops, { query: { service_code, ...filter } }) => ops.subscriptions({ ...filter, service: filter.service ?? service_code }),
  }),
  route({
    method: 'GET',
    path: '/subscriptions/:id',
    operationId: 'subscription',
    summary: 'One subscription with its charges',
    answer: SubscriptionView,
    errors: ['SUBSCRIPTION_NOT_FOUND'],
    call: (ops, { params }) => ops.subscription(params.id!),
  }),
  route({
    method: 'POST',
    path: '/subscriptions/:id/cancel',
    operationId: 'cancel',
    summary: 'Carrier-side cancellation',
    answer: SubscriptionView,
    errors: ['SUBSCRIPTION_NOT_FOUND', 'ALREADY_CANCELED'],
    call: (ops, { params }) => ops.cancel(params.id!),
  }),
  route({ method: 'GET', path: '/clock', operationId: 'now', summary: 'The sandbox clock', answer: ClockView, call: (ops) => ops.now() }),
  route({
    method: 'POST',
    path: '/clock/advance',
    operationId: 'advance',
    summary: 'Moves the clock forward; runs every renewal and lifecycle event that falls due, in time order',
    body: AdvanceBody,
    answer: ClockMoveAnswer,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'BAD_DURATION', 'CLOCK_LIMIT', 'SHUTTING_DOWN'],
    call: (ops, { body }) => ops.advance(body.by),
  }),
  route({
    method: 'POST',
    path: '/clock/set',
    operationId: 'setTime',
    summary: 'Moves the clock forward to a time; runs what falls due, in time order',
    body: SetTimeBody,
    answer: ClockMoveAnswer,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'BAD_TIME', 'CLOCK_BACKWARDS', 'CLOCK_LIMIT', 'SHUTTING_DOWN'],
    call: (ops, { body }) => ops.setTime(body.to),
  }),
  route({
    method: 'GET',
    path: '/requests',
    operationId: 'requests',
    summary: 'The request journal (bounded), newest first',
    query: RequestsQuery,
    answer: RequestsAnswer,
    errors: ['BAD_REQUEST'],
    call: (ops, { query }) => ops.requests(query),
  }),
  route({
    method: 'POST',
    path: '/reset',
    operationId: 'reset',
    summary: 'Back to the loaded fixtures; with clock, starting over at that time',
    body: ResetBody,
    answer: ResetAnswer,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'BAD_TIME', 'CLOCK_LIMIT'],
    call: (ops, { body }) => ops.reset(body),
  }),
  route({
    method: 'GET',
    path: '/world',
    operationId: 'world',
    summary: 'The world as loaded, as one fixture document; `?sources=1` adds the file each record and rule came from',
    query: WorldQuery,
    answer: z.union([WorldDocument, WorldWithSources]),
    errors: ['BAD_REQUEST'],
    call: (ops, { query }) => (query.sources !== undefined ? ops.worldSources() : ops.world()),
  }),
  route({
    method: 'GET',
    path: '/rules',
    operationId: 'listRules',
    summary: 'Every carrier rule in force, in the order consulted, with its source and use count; and the runtime rules as added',
    answer: RulesAnswer,
    call: (ops) => ops.rules.list(),
  }),
  route({
    method: 'POST',
    path: '/rules',
    operationId: 'addRule',
    summary: 'Adds a runtime carrier rule',
    body: RuleBody,
    answer: RuntimeRule,
    errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'BAD_RULE', 'RULE_EXISTS'],
    call: (ops, { body }) => ops.rules.add(body),
  }),
  route({
    method: 'DELETE',
    path: '/rules',
    operationId: 'clearRules',
    summary: 'Removes every runtime rule',
    answer: DeletedAnswer,
    call: (ops) => ops.rules.clear(),
  }),
  route({
    method: 'DELETE',
    path: '/rules/:id',
    operationId: 'removeRule',
    summary: 'Removes one runtime rule',
    answer: DeletedAnswer,
    errors: ['RULE_NOT_FOUND'],
    call: (ops, { params }) => ops.rules.remove(params.id!),
  }),
]

/**
 * The session calls (`sessions.ts` serves them: they act on the server's sessions, not on one
 * session's operations), described like the others for the OpenAPI document.
 */
export const SESSION_ROUTES: Omit<ControlRoute, 'call'>[] = [
  {
    method: 'GET',
    path: '/sessions',
    operationId: 'listSessions',
    summary: 'Every session (X-DCB-Session) with its counts and clock, the default one first',
    answer: SessionsAnswer,
    errors: [],
  },
  {
    method: 'DELETE',
    path: '/sessions/:name',
    operationId: 'deleteSession',
    summary: 'Deletes a session: its state, clock, inboxes, rules and stored data (not the default one: reset it)',
    answer: SessionDeletedAnswer,
    errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
  },
]
