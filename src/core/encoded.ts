/**
 * Two small protocols between results and the HTTP layer, so that the HTTP layer needs to know no
 * result class: a result that carries its own JSON bytes (a clock move: megabytes of events,
 * encoded as they happened), and a result that keeps a shorter form in the request log.
 */

/** `value[ENCODED_JSON]()`: the value's JSON, UTF-8, in parts, exactly as `JSON.stringify` would write it. */
export const ENCODED_JSON: unique symbol = Symbol.for('dcb.encodedJson')
/** `value[REQUEST_LOG_VIEW]()`: what the request log keeps of the value instead of all of it. */
export const REQUEST_LOG_VIEW: unique symbol = Symbol.for('dcb.requestLogView')

export interface EncodedJson {
  [ENCODED_JSON](): Uint8Array[]
}
export interface RequestLogViewable {
  [REQUEST_LOG_VIEW](): unknown
}

export function hasEncodedJson(v: unknown): v is EncodedJson {
  return typeof v === 'object' && v !== null && typeof (v as Partial<EncodedJson>)[ENCODED_JSON] === 'function'
}

/** What the request log keeps of a result: its request log view when it has one, else the result. */
export function requestLogView(v: unknown): unknown {
  return typeof v === 'object' && v !== null && typeof (v as Partial<RequestLogViewable>)[REQUEST_LOG_VIEW] === 'function'
    ? (v as RequestLogViewable)[REQUEST_LOG_VIEW]()
    : v
}
