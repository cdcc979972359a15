/**
 * Read views of subscriptions: the merchant Status payload (cached with its JSON per record: records
 * are immutable, so neither goes stale) and the control API's fuller view and lists.
 */
import { SandboxError } from './errors.js'
import type { EngineContext } from './context.js'
import type { Charge, SmsRecord, SubscriptionRecord, SubscriptionStatus } from './state.js'
import { hasEnded } from './subscriptions.js'
import { formatTimestamp } from './time.js'
import { timeline, type RequestMention, type TimelineEntry } from './timeline.js'
import type { Service } from './world.js'

/** The nine fields of the Status payload, in the spec's order. */
export type StatusPayload = {
  subscription_id: string
  status: SubscriptionStatus
  msisdn: string
  service_code: string
  service_name: string
  subscribed_dt: string
  expiry_dt: string
  canceled_dt: string | null
  content_link: string | null
}

export interface ChargeView extends Omit<Charge, 'at'> {
  at: string
}

/** A subscription as the control API shows it: the Status payload and what the carrier knows. */
export interface SubscriptionView extends StatusPayload {
  merchant: string
  country_code: string
  carrier_code: string
  flow: SubscriptionRecord['flow']
  language: string
  cancel_reason: string | null
  next_retry_dt: string | null
  carrier_cancel_dt: string | null
  /** Whether a carrier cancel is taken: false once it has ended (`hasEnded`), when the cancel is refused 409. */
  cancelable: boolean
  charge_count: number
  charges: ChargeView[]
}

/** One subscription as `GET /_sandbox/subscriptions/ID` shows it: the view and its timeline. */
export interface SubscriptionDetail extends SubscriptionView {
  timeline: TimelineEntry[]
}

export interface SubscriptionFilter {
  msisdn?: string
  merchant?: string
  service?: string
  /** ACTIVE, CANCELED or EXPIRED, in any case. */
  status?: string
  /** At most this many, newest first (default 1000). */
  limit?: number
}

export class SubscriptionViews {
  private readonly payloads = new WeakMap<SubscriptionRecord, { payload: StatusPayload; json: string }>()

  constructor(private readonly ctx: EngineContext) {}

  /** The Status payload of a record and its JSON, made once per record. */
  status(sub: SubscriptionRecord, service: Service | undefined): { payload: StatusPayload; json: string } {
    let p = this.payloads.get(sub)
    if (!p) {
      const payload = statusPayload(sub, service)
      this.payloads.set(sub, (p = { payload, json: JSON.stringify(payload) }))
    }
    return p
  }

  view(sub: SubscriptionRecord): SubscriptionView {
    const service = this.ctx.world.service(sub.merchant, sub.service)
    return {
      ...this.status(sub, service).payload,
      merchant: sub.merchant,
      country_code: sub.country,
      carrier_code: sub.carrier,
      flow: sub.flow,
      language: sub.language,
      cancel_reason: sub.cancel_reason,
      next_retry_dt: sub.next_retry_at === null ? null : formatTimestamp(sub.next_retry_at),
      carrier_cancel_dt: sub.carrier_cancel_at === null ? null : formatTimestamp(sub.carrier_cancel_at),
      cancelable: !hasEnded(sub),
      charge_count: sub.charge_count,
      charges: sub.charges.map((c) => ({ ...c, at: formatTimestamp(c.at) })),
    }
  }

  /** The subscription with this id; a SandboxError when there is none. */
  get(id: string): SubscriptionView {
    return this.view(this.record(id))
  }

  /** The subscription with its timeline: `messagesOf` a handset's messages, `requests` the request log's entries about it. */
  detail(id: string, messagesOf: (msisdn: string) => SmsRecord[], requests: readonly RequestMention[]): SubscriptionDetail {
    const sub = this.record(id)
    return { ...this.view(sub), timeline: timeline(sub, messagesOf(sub.msisdn), requests) }
  }

  record(id: string): SubscriptionRecord {
    const sub = this.ctx.state.subs.get(id)
    if (!sub) throw new SandboxError('SUBSCRIPTION_NOT_FOUND', `no subscription ${id}`)
    return sub
  }

  list(filter: SubscriptionFilter): SubscriptionView[] {
    const { state } = this.ctx
    const source = filter.msisdn ? [...(state.subsByMsisdn.get(filter.msisdn) ?? [])].map((id) => state.subs.get(id)!) : [...state.subs.values()]
    const out: SubscriptionRecord[] = []
    for (const s of source) {
      if (filter.merchant && s.merchant !== filter.merchant) continue
      if (filter.service && s.service !== filter.service) continue
      if (filter.status && s.status !== filter.status.toUpperCase()) continue
      out.push(s)
    }
    out.sort((a, b) => b.subscribed_at - a.subscribed_at)
    return out.slice(0, filter.limit ?? 1000).map((s) => this.view(s))
  }
}

function statusPayload(sub: SubscriptionRecord, service: Service | undefined): StatusPayload {
  return {
    subscription_id: sub.id,
    status: sub.status,
    msisdn: sub.msisdn,
    service_code: sub.service,
    service_name: service?.name ?? sub.service,
    subscribed_dt: formatTimestamp(sub.subscribed_at),
    expiry_dt: formatTimestamp(sub.expiry_at),
    canceled_dt: sub.canceled_at === null ? null : formatTimestamp(sub.canceled_at),
    content_link: service?.content_link ?? null,
  }
}
