/**
 * What the connection carries instead of the envelope a call decided: a fault (no answer, or a broken
 * one) or another HTTP answer (a gateway's page, 429, 5xx). Decided once in the engine's call, from
 * the rule of the `api` step or the call's own; each transport's one writer sends it (docs/architecture.md).
 */

export const FAULT_KINDS = ['reset', 'close', 'truncate', 'garbage', 'hang'] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

/** The HTTP statuses an `http` effect answers; 429, 502, 503 and 504 count as gateway answers in coverage. */
export const HTTP_STATUSES = [429, 500, 502, 503, 504] as const
export type HttpStatus = (typeof HTTP_STATUSES)[number]

/** A body as an effect gives it: the spec's envelope, a gateway's HTML page, none, or a text of its own. */
export type WireBody = 'envelope' | 'gateway' | 'empty' | { text: string; content_type: string }

/** The largest `body.text` an effect may give (bytes of UTF-8). */
export const MAX_BODY_TEXT = 16 * 1024

/** The longest (and default) `hang_ms`: the bound of held answers. */
export const MAX_HANG_MS = 60_000

export type When = 'before' | 'after'

/** How the answer leaves, when it is not the envelope as decided. */
export interface Wire {
  /** `before`: the call did nothing; `after`: it was done, only its answer is lost or replaced. */
  when: When
  fault?: FaultKind
  /** For `hang`: how long nothing is sent. */
  hangMs?: number
  /** Another HTTP status, with `body`. */
  http?: HttpStatus
  body?: WireBody
  retryAfter?: number
  /** The rule that asked for it, in words (the request log's reason). */
  reason?: string
}

/** The effect keys a wire is read from (a rule's effect). */
export interface WireEffect {
  fault?: FaultKind
  hang_ms?: number
  when?: When
  http?: number
  body?: WireBody
  retry_after?: number
}

/** The wire an effect asks for, or undefined (an `http: 500` with no other key is the plain ERROR envelope, as always). */
export function wireOf(effect: WireEffect | undefined): Wire | undefined {
  if (!effect) return undefined
  const { fault, http } = effect
  if (!fault && !http) return undefined
  if (!fault && http === 500 && effect.body === undefined && effect.retry_after === undefined && effect.when !== 'after') return undefined
  const wire: Wire = { when: effect.when ?? 'before' }
  if (fault) {
    wire.fault = fault
    if (fault === 'hang') wire.hangMs = effect.hang_ms ?? MAX_HANG_MS
  } else {
    wire.http = http as HttpStatus
    wire.body = effect.body ?? (http === 500 ? 'envelope' : 'gateway')
  }
  if (effect.retry_after !== undefined) wire.retryAfter = effect.retry_after
  return wire
}

/** Whether an answer of this status is a gateway's (coverage's `*.gateway`). */
export function isGatewayStatus(status: number | undefined): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504
}

/** The short words of a wire, for reasons and scenario lists: `fault reset, after`, `HTTP 503 gateway, retry after 5 s`. */
export function describeWire(w: Wire): string {
  const what = w.fault
    ? `fault ${w.fault}${w.fault === 'hang' ? ` ${w.hangMs} ms` : ''}`
    : `HTTP ${w.http} ${typeof w.body === 'object' ? 'text body' : w.body}`
  return `${what}${w.retryAfter !== undefined ? `, retry after ${w.retryAfter} s` : ''}${w.when === 'after' ? ', after the call' : ''}`
}

/** The effects above together, as [effect key, problem]: each needs its partner, and a fault is no answer at all. */
export function connectionProblems(
  e: { fault?: string; http?: number; error?: string; hang_ms?: number; when?: string; body?: unknown; retry_after?: number },
  steps: readonly string[],
): [string, string][] {
  const out: [string, string][] = []
  if (e.fault && (e.http || e.error)) out.push(['fault', `give either fault or ${e.http ? 'http' : 'error'}, not both`])
  if (e.hang_ms !== undefined && e.fault !== 'hang') out.push(['hang_ms', 'needs fault: hang'])
  if (e.when !== undefined && !e.fault && !e.http) out.push(['when', 'needs fault or http'])
  if (e.body !== undefined && !e.http) out.push(['body', 'needs http'])
  if (e.retry_after !== undefined && !e.http) out.push(['retry_after', 'needs http'])
  if (e.http && e.http !== 500 && steps.includes('charge')) out.push(['http', `step charge takes http 500 only (got ${e.http})`])
  return out
}
