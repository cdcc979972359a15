/**
 * A small typed client of the merchant API and of the sandbox control API, shared by the CLI and the
 * library. Uses node:http(s) directly (lighter to load than fetch for short-lived CLI calls).
 */
import type { IncomingHttpHeaders } from 'node:http'

export interface Envelope<P = Record<string, unknown>> {
  status: 'SUCCESS' | 'FAIL'
  message: string
  status_code: number
  payload?: P | null
}

export interface InitPayload {
  verif_request_id: string | null
  short_code: string | null
  keyword: string | null
  carrier_code: string | null
  redirect_url: string | null
}
export interface VerifyPayload {
  subscription_id: string
}
export interface StatusPayload {
  subscription_id: string
  status: string
  msisdn: string
  service_code: string
  service_name: string
  subscribed_dt: string | null
  expiry_dt: string | null
  canceled_dt: string | null
  content_link: string | null
}

export interface ApiResult<P> {
  http: number
  envelope: Envelope<P>
}

/** The server could not be reached, or what answered does not speak the API. */
export class TransportError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TransportError'
  }
}

/** The control API answered an error (`{ error, message }`). */
export class ControlApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'ControlApiError'
  }
}

export interface ClientOptions {
  baseUrl: string
  apiKey: string
  adminToken?: string
  timeoutMs?: number
}

export interface RawResponse {
  status: number
  headers: IncomingHttpHeaders
  text: string
}

export async function httpRequest(
  url: string,
  opts: { method: string; headers?: Record<string, string>; body?: string; timeoutMs?: number },
): Promise<RawResponse> {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw new TransportError(`"${url}" is not a URL`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TransportError(`"${url}" is not an http(s) URL`)
  const mod = u.protocol === 'https:' ? await import('node:https') : await import('node:http')
  return new Promise((resolve, reject) => {
    const req = mod.request(
      u,
      { method: opts.method, headers: { ...(opts.body !== undefined ? { 'content-length': String(Buffer.byteLength(opts.body)) } : {}), ...opts.headers } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (d: Buffer) => chunks.push(d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', (e) => reject(new TransportError(`the answer from ${u.origin} broke off: ${e.message}`)))
      },
    )
    req.setTimeout(opts.timeoutMs ?? 30_000, () => req.destroy(new Error(`no answer within ${Math.round((opts.timeoutMs ?? 30_000) / 1000)} s`)))
    req.on('error', (e: NodeJS.ErrnoException) => {
      const why = e.code === 'ECONNREFUSED' ? 'connection refused (is `dcb serve` running?)' : e.code === 'ENOTFOUND' ? 'no such host' : e.message
      reject(new TransportError(`cannot reach ${u.origin}: ${why}`))
    })
    if (opts.body !== undefined) req.write(opts.body)
    req.end()
  })
}

function isEnvelope(v: unknown): v is Envelope {
  if (!v || typeof v !== 'object') return false
  const e = v as Record<string, unknown>
  return (e.status === 'SUCCESS' || e.status === 'FAIL') && typeof e.message === 'string' && typeof e.status_code === 'number'
}

/** A clock move's answer: the clock after it and the events that ran (`events_omitted`: not listed, past 64 MiB). */
export interface ClockMoveAnswer {
  clock: { now: string }
  events: Record<string, any>[]
  events_omitted?: number
}

export class DcbClient {
  readonly baseUrl: string
  constructor(readonly opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '')
  }

  private async call<P>(path: string, body: Record<string, unknown>): Promise<ApiResult<P>> {
    const res = await httpRequest(this.baseUrl + path, {
      method: 'POST',
      headers: { 'api-key': this.opts.apiKey, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      timeoutMs: this.opts.timeoutMs,
    })
    let parsed: unknown
    try {
      parsed = JSON.parse(res.text)
    } catch {
      parsed = undefined
    }
    if (!isEnvelope(parsed))
      throw new TransportError(`${this.baseUrl}${path} answered HTTP ${res.status} without the API's envelope: ${res.text.slice(0, 120).replace(/\s+/g, ' ')}`)
    return { http: res.status, envelope: parsed as Envelope<P> }
  }

  init(body: { msisdn: string; service_code: string; country_code: string; language?: string }): Promise<ApiResult<InitPayload>> {
    return this.call('/subscriptions/init', body)
  }
  verify(body: { verif_request_id: string; otp: string; language?: string }): Promise<ApiResult<VerifyPayload>> {
    return this.call('/subscriptions/verify', body)
  }
  status(body: { subscription_id: string }): Promise<ApiResult<StatusPayload>> {
    return this.call('/subscriptions/status', body)
  }

  /** A control API call under /_sandbox. */
  async control<T = any>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, timeoutMs?: number): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (this.opts.adminToken) headers.authorization = `Bearer ${this.opts.adminToken}`
    const res = await httpRequest(`${this.baseUrl}/_sandbox${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: timeoutMs ?? this.opts.timeoutMs,
    })
    let parsed: any
    try {
      parsed = JSON.parse(res.text)
    } catch {
      throw new TransportError(`${this.baseUrl}/_sandbox${path} answered HTTP ${res.status}, not JSON: is this a dcb sandbox?`)
    }
    if (res.status >= 400) {
      if (parsed && typeof parsed.error === 'string') throw new ControlApiError(res.status, parsed.error, parsed.message ?? parsed.error)
      throw new TransportError(`${this.baseUrl}/_sandbox${path} answered HTTP ${res.status}: is this a dcb sandbox?`)
    }
    return parsed as T
  }

  otp(msisdn: string, waitS = 0) {
    const q = new URLSearchParams({ msisdn, ...(waitS ? { wait: String(waitS) } : {}) })
    return this.control<{ otp: string; verif_request_id: string; text: string }>('GET', `/otp?${q}`, undefined, (waitS + 30) * 1000)
  }
  sms(msisdn: string) {
    return this.control<{ msisdn: string; messages: Record<string, any>[] }>('GET', `/sms?${new URLSearchParams({ msisdn })}`)
  }
  mo(msisdn: string, short_code: string, text: string) {
    return this.control<Record<string, any>>('POST', '/mo', { msisdn, short_code, text })
  }
  cancel(id: string) {
    return this.control<Record<string, any>>('POST', `/subscriptions/${encodeURIComponent(id)}/cancel`, {})
  }
  subscription(id: string) {
    return this.control<Record<string, any>>('GET', `/subscriptions/${encodeURIComponent(id)}`)
  }
  subscriptions(filter: Record<string, string | undefined> = {}) {
    const q = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== undefined) as [string, string][])
    return this.control<{ subscriptions: Record<string, any>[] }>('GET', `/subscriptions${q.size ? `?${q}` : ''}`)
  }
  clock() {
    return this.control<{ now: string; frozen: boolean; offset_ms: number; next_event_dt: string | null }>('GET', '/clock')
  }
  advance(by: string) {
    return this.control<ClockMoveAnswer>('POST', '/clock/advance', { by })
  }
  setClock(to: string) {
    return this.control<ClockMoveAnswer>('POST', '/clock/set', { to })
  }
  requests(since = 0, limit = 100) {
    return this.control<{ requests: Record<string, any>[] }>('GET', `/requests?since=${since}&limit=${limit}`)
  }
  reset() {
    return this.control<{ ok: true }>('POST', '/reset', {})
  }
  scenarios() {
    return this.control<{ scenarios: { id: string; source: string; match: string; step: string; outcome: string; description: string }[] }>('GET', '/scenarios')
  }
  health() {
    return this.control<{ ok: boolean; version: string }>('GET', '/health')
  }

  /** Approve or deny a consent page (a redirect_url or its id): answers where the browser would go. */
  async consent(urlOrId: string, action: 'approve' | 'deny'): Promise<{ status: number; location: string | null; query: Record<string, string> }> {
    const url = /^https?:\/\//.test(urlOrId) ? urlOrId : `${this.baseUrl}/consent/${encodeURIComponent(urlOrId)}`
    const res = await httpRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `action=${action}`,
      timeoutMs: this.opts.timeoutMs,
    })
    if (res.status === 404) throw new ControlApiError(404, 'CONSENT_NOT_FOUND', `no consent page at ${url}`)
    if (res.status !== 303 && res.status !== 200) throw new TransportError(`${url} answered HTTP ${res.status}: not a consent page`)
    const location = (res.headers.location as string | undefined) ?? null
    const query = location ? Object.fromEntries(new URL(location, url).searchParams) : {}
    return { status: res.status, location, query }
  }
}
