/**
 * The control operations declared once: for each typed function of `ControlOperations`, the control
 * API call it is (method, path) and how its arguments travel (`request`) and come back off a request
 * (`args`). The router (`http/control-routes.ts`) calls the operations through `args`; the library and
 * the HTTP client get their functions from `deriveOperations`, so the three cannot drift. The two
 * session calls (`SESSION_CALLS`) are declared here too, apart.
 * No zod and no Node here: the client loads this file as it is.
 */
import { SandboxError } from '../core/errors.js'
import type { ControlOperations, OtpOptions, RuleOperations } from './operations.js'
import { unknownOption } from './option-names.js'

/** `health`, `otp`, …, and `rules.add`, `rules.list`, …: every typed control function by name. */
export type OperationName = Exclude<keyof ControlOperations, 'rules'> | `rules.${keyof RuleOperations}`

/** The typed function an operation name stands for. */
export type OperationFn<N extends OperationName> = N extends `rules.${infer K extends keyof RuleOperations}`
  ? RuleOperations[K]
  : N extends keyof ControlOperations
    ? ControlOperations[N]
    : never

/** A control call as it goes out: path parameters, query values (undefined ones left out), JSON body. */
export interface CallParts {
  params?: Record<string, string>
  query?: object
  body?: unknown
  /** How long the call may take beyond a normal one (seconds): an OTP wait. */
  waitSeconds?: number
  /** A clock move: it takes as long as its events take to run (a year over 100,000 subscriptions, a minute), so no default time-out applies. */
  untimed?: boolean
  /** The caller's signal: the call is abandoned (rejecting with its reason) when it aborts. */
  signal?: AbortSignal
}

/** A request as the router read it: the query and body as their schemas read them, the path parameters. */
export interface CallInput {
  query: any
  body: any
  params: Record<string, string>
  /** Aborts when the client hangs up (for calls that wait). */
  signal: AbortSignal
}

export interface ControlCall<A extends unknown[] = unknown[]> {
  method: 'GET' | 'POST' | 'DELETE'
  /** Under /_sandbox, with `:name` parameters. */
  path: string
  request(...args: A): CallParts
  args(input: CallInput): A
}

const OTP_OPTIONS: Record<keyof OtpOptions, true> = { wait: true, signal: true }
const OTP_TARGET: Record<'verif_request_id', true> = { verif_request_id: true }

type Calls = { [N in OperationName]: ControlCall<Parameters<OperationFn<N>>> }

export const CONTROL_CALLS: Calls = {
  health: { method: 'GET', path: '/health', request: () => ({}), args: () => [] },
  scenarios: { method: 'GET', path: '/scenarios', request: () => ({}), args: () => [] },
  sms: { method: 'GET', path: '/sms', request: (msisdn) => ({ query: { msisdn } }), args: ({ query }) => [query.msisdn] },
  messages: { method: 'GET', path: '/messages', request: (query = {}) => ({ query }), args: ({ query }) => [query] },
  otp: {
    method: 'GET',
    path: '/otp',
    request: (which, opts = {}) => {
      const problem = unknownOption(opts, OTP_OPTIONS) ?? (which && typeof which === 'object' ? unknownOption(which, OTP_TARGET) : undefined)
      if (problem) throw new SandboxError('BAD_REQUEST', `otp: ${problem}`)
      const target = which && typeof which === 'object' ? { verif_request_id: which.verif_request_id } : { msisdn: which }
      return { query: { ...target, wait: opts.wait || undefined }, waitSeconds: opts.wait, signal: opts.signal }
    },
    // The signal is asked for only when the call may wait (making one costs more than the lookup).
    args: ({ query: q, signal }) => [
      q.verif_request_id !== undefined ? { verif_request_id: q.verif_request_id } : q.msisdn,
      q.wait ? { wait: q.wait, signal } : {},
    ],
  },
  mo: { method: 'POST', path: '/mo', request: (message) => ({ body: message }), args: ({ body }) => [body] },
  subscriptions: {
    method: 'GET',
    path: '/subscriptions',
    request: (filter = {}) => ({ query: filter }),
    // `service_code` is read as `service` (the merchant API's name for it).
    args: ({ query: { service_code, ...filter } }) => [{ ...filter, service: filter.service ?? service_code }],
  },
  subscription: { method: 'GET', path: '/subscriptions/:id', request: (id) => ({ params: { id } }), args: ({ params }) => [params.id!] },
  cancel: { method: 'POST', path: '/subscriptions/:id/cancel', request: (id) => ({ params: { id } }), args: ({ params }) => [params.id!] },
  now: { method: 'GET', path: '/clock', request: () => ({}), args: () => [] },
  advance: { method: 'POST', path: '/clock/advance', request: (by) => ({ body: { by }, untimed: true }), args: ({ body }) => [body.by] },
  setTime: { method: 'POST', path: '/clock/set', request: (to) => ({ body: { to }, untimed: true }), args: ({ body }) => [body.to] },
  requests: { method: 'GET', path: '/requests', request: (query = {}) => ({ query }), args: ({ query }) => [query] },
  coverage: { method: 'GET', path: '/coverage', request: (query = {}) => ({ query }), args: ({ query }) => [query] },
  reset: { method: 'POST', path: '/reset', request: (body = {}) => ({ body }), args: ({ body }) => [body] },
  world: { method: 'GET', path: '/world', request: () => ({}), args: () => [] },
  worldSources: { method: 'GET', path: '/world', request: () => ({ query: { sources: 1 } }), args: () => [] },
  'rules.list': { method: 'GET', path: '/rules', request: () => ({}), args: () => [] },
  'rules.add': { method: 'POST', path: '/rules', request: (rule) => ({ body: rule }), args: ({ body }) => [body] },
  'rules.clear': { method: 'DELETE', path: '/rules', request: () => ({}), args: () => [] },
  'rules.remove': { method: 'DELETE', path: '/rules/:id', request: (id) => ({ params: { id } }), args: ({ params }) => [params.id!] },
}

export const OPERATION_NAMES = Object.keys(CONTROL_CALLS) as OperationName[]

/**
 * The session calls, declared apart: they act on the host (the server's sessions), not on one
 * session, so they are no `ControlOperations` (a session's functions, which X-DCB-Session binds) and
 * take no `args` (`http/sessions.ts` serves them off the host). The router, OpenAPI and the CLI read
 * their method and path here, as they do a control call's.
 */
export type SessionCallName = 'listSessions' | 'deleteSession'

export interface SessionCall<A extends unknown[] = unknown[]> {
  method: 'GET' | 'DELETE'
  /** Under /_sandbox; a parameter only at the end (the router serves the path as a prefix). */
  path: string
  request(...args: A): CallParts
}

export const SESSION_CALLS: { listSessions: SessionCall<[]>; deleteSession: SessionCall<[name: string]> } = {
  listSessions: { method: 'GET', path: '/sessions', request: () => ({}) },
  deleteSession: { method: 'DELETE', path: '/sessions/:name', request: (name) => ({ params: { name } }) },
}

/** The request a session call makes. */
export function sessionRequest<N extends SessionCallName>(name: N, args: Parameters<(typeof SESSION_CALLS)[N]['request']>): ControlRequest {
  return requestOf(SESSION_CALLS[name] as SessionCall, args)
}

/** One control call ready to send: the path under /_sandbox with its query, and the JSON body (POST only). */
export interface ControlRequest {
  method: 'GET' | 'POST' | 'DELETE'
  /** Under /_sandbox, parameters filled and encoded, with the query string. */
  path: string
  /** The body of a POST (`{}` when the call takes none); undefined otherwise. */
  body?: unknown
  waitSeconds?: number
  /** A clock move (see `CallParts`). */
  untimed?: boolean
  /** Abandons the call when it aborts (an OTP wait the caller gave up). */
  signal?: AbortSignal
}

/** The request an operation's call makes. */
export function controlRequest<N extends OperationName>(name: N, args: Parameters<OperationFn<N>>): ControlRequest {
  return requestOf(CONTROL_CALLS[name] as unknown as ControlCall, args)
}

/** A call's request of arguments as a caller gave them: the call's own `request` reads them. */
function requestOf(call: Pick<ControlCall, 'method' | 'path' | 'request'>, args: readonly unknown[]): ControlRequest {
  const parts = call.request(...args)
  let path = call.path.replace(/:(\w+)/g, (_, key: string) => {
    const value = parts.params?.[key] ?? ''
    // An empty one would make another call's path (`/subscriptions/` is the list), not a refusal.
    if (!value) throw new SandboxError('BAD_REQUEST', `${key}: must not be empty`)
    return encodeURIComponent(value)
  })
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(parts.query ?? {})) if (v !== undefined && v !== null) q.set(k, typeof v === 'number' ? decimal(v) : String(v))
  if (q.size) path += `?${q}`
  return {
    method: call.method,
    path,
    ...(call.method === 'POST' ? { body: parts.body ?? {} } : {}),
    waitSeconds: parts.waitSeconds,
    ...(parts.untimed ? { untimed: true } : {}),
    ...(parts.signal ? { signal: parts.signal } : {}),
  }
}

/**
 * A number as the control API reads one in a query, decimal digits: String() writes 1e-7 and 1e21
 * with an exponent, which the server refuses as no number.
 */
function decimal(n: number): string {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(String(n))
  if (!m) return String(n)
  const [, sign, lead, rest = '', e] = m
  const exp = Number(e)
  return exp < 0 ? `${sign}0.${'0'.repeat(-exp - 1)}${lead}${rest}` : `${sign}${lead}${rest}${'0'.repeat(exp - rest.length)}`
}

/** The typed control functions over a transport that sends one control call and answers its JSON (or throws SandboxError). */
export function deriveOperations(send: (request: ControlRequest) => Promise<unknown>): ControlOperations {
  const ops: Record<string, unknown> = {}
  const rules: Record<string, unknown> = {}
  for (const name of OPERATION_NAMES) {
    // async: a request refused as it is made rejects, as a refusal of the server does
    const fn = async (...args: unknown[]) => send(requestOf(CONTROL_CALLS[name] as unknown as ControlCall, args))
    if (name.startsWith('rules.')) rules[name.slice('rules.'.length)] = fn
    else ops[name] = fn
  }
  ops.rules = rules
  return ops as unknown as ControlOperations
}

/** The function an operation name stands for on a set of operations. */
export function operationOf<N extends OperationName>(ops: ControlOperations, name: N): OperationFn<N> {
  return (name.startsWith('rules.') ? ops.rules[name.slice('rules.'.length) as keyof RuleOperations] : ops[name as keyof ControlOperations]) as OperationFn<N>
}
