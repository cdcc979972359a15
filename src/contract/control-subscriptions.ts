/**
 * The control API's subscription answers: one subscription's view, the list, and the one timeline
 * of `GET /_sandbox/subscriptions/{id}`. Kept beside `control.ts`, which re-exports them.
 */
import { z } from 'zod'
import { StatusPayload } from './merchant.js'

const timestamp = z.string().describe('UTC, YYYY-MM-DDTHH:MM:SS.ffffff')

export const ChargeView = z.object({
  at: timestamp,
  kind: z.enum(['first', 'renewal', 'retry']),
  outcome: z.string(),
  amount: z.string().nullable(),
  currency: z.string().nullable(),
  reason: z.string().optional().describe('a failed charge: the rule that failed it'),
})
export const SubscriptionView = StatusPayload.extend({
  merchant: z.string(),
  country_code: z.string(),
  carrier_code: z.string(),
  flow: z.string(),
  language: z.string(),
  cancel_reason: z.string().nullable(),
  next_retry_dt: timestamp.nullable(),
  carrier_cancel_dt: timestamp.nullable(),
  cancelable: z
    .boolean()
    .describe(
      'whether a carrier cancel (POST /_sandbox/subscriptions/{id}/cancel) is taken: false once the subscription has ended (CANCELED, or EXPIRED with no carrier retry left), when it is refused 409',
    ),
  charge_count: z.number().int(),
  charges: z.array(ChargeView).describe('the latest charges, oldest first'),
})
export const SubscriptionsAnswer = z.object({ subscriptions: z.array(SubscriptionView) })
const status = z.enum(['ACTIVE', 'CANCELED', 'EXPIRED'])
export const TimelineEntry = z.discriminatedUnion('type', [
  z
    .object({
      at: timestamp,
      type: z.literal('state'),
      from: status.nullable().describe('null: the activation'),
      to: status,
      cause: z
        .enum(['verify', 'consent', 'mo', 'renewal', 'retry', 'lapsed', 'cancel', 'carrier_cancel', 'stop', 'superseded'])
        .describe(
          'verify, consent, mo: the flow that activated it; renewal: a failed renewal; retry: a carrier retry that succeeded; lapsed: an inactive merchant, not billed; cancel: the control API; carrier_cancel: a carrier rule (cancel_after); stop: a STOP message; superseded: a newer subscription of the MSISDN to the service activated, and the carrier retries were dropped',
        ),
      superseded_by: z.string().optional().describe('superseded: the subscription that superseded it'),
    })
    .describe('a state change'),
  ChargeView.extend({ type: z.literal('charge') }).describe('a charge'),
  z
    .object({ at: timestamp, type: z.literal('message'), message_id: z.string(), kind: z.string(), from: z.string(), text: z.string() })
    .describe('a message sent to the handset about it'),
  z
    .object({
      at: timestamp.describe('its sandbox time (a clock move: where it ended)'),
      type: z.literal('request'),
      request_id: z.number().int().describe('its id in the request log (GET /_sandbox/requests)'),
      method: z.string(),
      path: z.string(),
      http_status: z.number().int(),
      message: z.string(),
      reason: z.string().nullable(),
    })
    .describe('a request about it in the request log'),
])
export const SubscriptionDetail = SubscriptionView.extend({
  timeline: z
    .array(TimelineEntry)
    .describe(
      "everything about it, oldest first: state changes, charges, messages and requests; as bounded as what it is read from (the latest 100 state changes and charges of the subscription, its handset's messages, the request log)",
    ),
})
