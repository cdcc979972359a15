/** Bounds the engine keeps whatever a world says (zod-free: the engine reads them at start, the schema when checking). */

/** The longest any rule may hold one answer (delay_ms, delay_per_unit and both steps' delays together). */
export const MAX_DELAY_MS = 60_000

/** The longest a rule's `deliver_after` holds an SMS back (one day): later than any OTP is still of use. */
export const MAX_SMS_DELAY_MS = 86_400_000

/**
 * Subscriptions each session keeps unless told otherwise (`--max-subscriptions`, `maxSubscriptions`).
 * Every other record is bounded by dropping the oldest; a subscription was acknowledged to a merchant,
 * so none is dropped: past the cap a new one is refused instead.
 */
export const DEFAULT_MAX_SUBSCRIPTIONS = 100_000

/** Why a new subscription is refused: the session holds `max` (canceled ones count: they are kept). Within an X-DCB-Reason's 200 characters. */
export function subscriptionCapReason(max: number): string {
  return `the session holds its limit of ${max} subscription${max === 1 ? '' : 's'}, canceled ones too (--max-subscriptions; library: maxSubscriptions): reset it (POST /_sandbox/reset) or raise the limit`
}
