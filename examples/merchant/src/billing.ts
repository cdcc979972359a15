/**
 * A merchant's integration of the DCB subscription API: what a shop would write. It knows nothing
 * of the sandbox; its tests point it at one, in process through msw or at a running `dcb serve`.
 */
export interface Envelope<P> {
  status: 'SUCCESS' | 'FAIL'
  message: string
  status_code: number
  payload?: P | null
}

export type Started = { flow: 'otp'; requestId: string } | { flow: 'psms'; shortCode: string; keyword: string } | { flow: 'redirect'; url: string }

export class BillingError extends Error {
  constructor(
    readonly code: string,
    readonly httpStatus: number,
  ) {
    super(`carrier billing failed: ${code} (HTTP ${httpStatus})`)
  }
}

export class CarrierBilling {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    /**
     * Sent on every call. A real integration sends none: the tests pass `X-DCB-Session` here so that,
     * against a shared `dcb serve`, each test file works in its own sandbox session.
     */
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  private async post<P>(path: string, body: unknown): Promise<P> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers: { ...this.extraHeaders, 'API-KEY': this.apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
    const envelope = (await res.json()) as Envelope<P>
    if (envelope.status !== 'SUCCESS') throw new BillingError(envelope.message, res.status)
    return envelope.payload as P
  }

  /** Starts a subscription; for the OTP flow the subscriber then receives a code by SMS. */
  async start(msisdn: string, service: string, country: string): Promise<Started> {
    const p = await this.post<{ verif_request_id: string | null; short_code: string | null; keyword: string | null; redirect_url: string | null }>(
      '/subscriptions/init',
      { msisdn, service_code: service, country_code: country },
    )
    if (p.verif_request_id) return { flow: 'otp', requestId: p.verif_request_id }
    if (p.redirect_url) return { flow: 'redirect', url: p.redirect_url }
    return { flow: 'psms', shortCode: p.short_code!, keyword: p.keyword! }
  }

  /** Confirms the OTP the subscriber typed; answers the subscription id. */
  async confirm(requestId: string, otp: string): Promise<string> {
    const p = await this.post<{ subscription_id: string }>('/subscriptions/verify', { verif_request_id: requestId, otp })
    return p.subscription_id
  }

  /** Whether the subscriber still has access, and until when. */
  async access(subscriptionId: string): Promise<{ active: boolean; until: Date }> {
    const p = await this.post<{ status: string; expiry_dt: string }>('/subscriptions/status', { subscription_id: subscriptionId })
    return { active: p.status === 'ACTIVE', until: new Date(`${p.expiry_dt}Z`) }
  }
}
