/**
 * The errors of the sandbox's own surface (control API, library, CLI client): one table of codes
 * with their HTTP status, and the error class that carries one. The merchant API's outcomes are
 * elsewhere (`outcomes.ts`): they answer in the envelope, these answer `{ "error", "message" }`.
 */

/** Every control error code, its HTTP status and what it means (the OpenAPI document lists them). */
export const CONTROL_ERRORS = {
  BAD_REQUEST: { status: 400, describe: 'a query parameter or body field is missing or malformed (the message names it)' },
  BAD_DURATION: { status: 400, describe: 'not a duration: ISO-8601 (P1M, PT6M, P1DT12H) or a short form (36h, 90m, 2d, 1w, 1mo)' },
  BAD_TIME: {
    status: 400,
    describe: 'not a time: ISO-8601, e.g. 2026-01-31T00:00:00; or finer than a millisecond (`.123456`: the sandbox keeps milliseconds, give `.123`)',
  },
  CLOCK_LIMIT: { status: 400, describe: 'the clock cannot go past 9999-12-31T23:59:59.999000 (it keeps milliseconds)' },
  BAD_RULE: { status: 400, describe: 'the rule does not fit the rule schema (the message names the field)' },
  INVALID_MSISDN: {
    status: 400,
    describe: 'no sandbox carrier owns the MSISDN (dcb seed: none of the country, or the numbers counting up from it run into another carrier)',
  },
  MERCHANT_SERVICE_NOT_CONFIGURED: { status: 400, describe: 'dcb seed: the world has no such merchant integration' },
  BAD_SPREAD: { status: 400, describe: 'dcb seed: the spread is longer than the service period' },
  FORBIDDEN: { status: 403, describe: 'the control API is open from loopback, or with the admin token' },
  FORBIDDEN_HOST: { status: 403, describe: 'a server on loopback answers only loopback host names and --allow-host names (DNS rebinding)' },
  FORBIDDEN_ORIGIN: { status: 403, describe: "a request from another site's page (Origin, Sec-Fetch-Site) is refused" },
  NOT_FOUND: { status: 404, describe: 'no such control call' },
  NO_OTP: {
    status: 404,
    describe: 'no OTP was delivered to the MSISDN or for the verification request (within the wait); a rule that withholds it is named',
  },
  VERIFICATION_NOT_FOUND: { status: 404, describe: 'no verification request with this id (GET /_sandbox/otp?verif_request_id=)' },
  SUBSCRIPTION_NOT_FOUND: { status: 404, describe: 'no subscription with this id' },
  RULE_NOT_FOUND: { status: 404, describe: 'no runtime rule with this id' },
  CONSENT_NOT_FOUND: { status: 404, describe: 'no consent request with this id' },
  SESSION_NOT_FOUND: { status: 404, describe: 'no session with this name (DELETE /_sandbox/sessions/NAME, coverage?sessions=)' },
  MERCHANT_NOT_FOUND: { status: 404, describe: 'no merchant with this id in the world (a ?merchant= filter: coverage, subscriptions)' },
  METHOD_NOT_ALLOWED: { status: 405, describe: 'the call exists with another method (the message names it)' },
  CLOCK_BACKWARDS: { status: 409, describe: 'the sandbox clock cannot move backwards (reset starts over)' },
  RULE_EXISTS: { status: 409, describe: 'a runtime rule with this id exists already' },
  ALREADY_CANCELED: { status: 409, describe: 'the subscription is canceled already' },
  ALREADY_EXPIRED: {
    status: 409,
    describe:
      'the subscription expired and the carrier has no retry left (or a newer subscription superseded it, dropping its retries): there is nothing to cancel',
  },
  SANDBOX_CLOSED: { status: 410, describe: 'the library: the sandbox was closed (close())' },
  PAYLOAD_TOO_LARGE: { status: 413, describe: 'the body is larger than 64 KiB' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, describe: 'a POST needs Content-Type: application/json, an empty body too' },
  SESSION_LIMIT: { status: 429, describe: 'the sandbox holds --max-sessions sessions already (of a shared store: the database, whichever replicas made them)' },
  ERROR: { status: 500, describe: 'unexpected server error (see the server log)' },
  STORE_UNAVAILABLE: {
    status: 503,
    describe: 'the change could not be made durable (disk full, a write or fsync failed): nothing was changed; writing resumes by itself',
  },
  ANSWERS_BUSY: {
    status: 503,
    describe: 'answers not yet read by their clients hold the bound of 64 MiB of control answers in flight: a read is refused until they are read; retry',
  },
  SHUTTING_DOWN: {
    status: 503,
    describe:
      'the server is shutting down: a clock move stopped at a batch boundary (the clock is there, every event up to it run), or an OTP wait ended without one',
  },
} as const satisfies Record<string, { status: number; describe: string }>

export type ControlErrorCode = keyof typeof CONTROL_ERRORS

/** The HTTP status of a control error code (500 for a code the table does not know). */
export function statusOf(code: string): number {
  return (CONTROL_ERRORS as Record<string, { status: number } | undefined>)[code]?.status ?? 500
}

/**
 * A refused control operation: `code` and `status` as the control API answers them. Thrown by the
 * in-process operations and by the HTTP client alike.
 */
export class SandboxError extends Error {
  readonly status: number
  constructor(
    readonly code: ControlErrorCode | (string & {}),
    message: string,
    /** Defaults to the table's status for `code`; given only for an answer read off the wire. */
    status?: number,
  ) {
    super(message)
    this.name = 'SandboxError'
    this.status = status ?? statusOf(code)
  }
}
