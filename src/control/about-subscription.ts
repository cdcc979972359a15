/**
 * The request log's entries about one subscription (`GET /_sandbox/requests?subscription=ID`,
 * `dcb logs --subscription ID`, the console's link from a subscription): the ones that name it, and
 * the ones that created it: the verification it came from (its Init and every Verify attempt, the
 * consent page's decision), the MO that subscribed it and the Init that gave that MO's short code.
 */
import type { RequestLogEntry } from '../contract/control.js'
import { CONTROL_CALLS } from '../contract/calls.js'
import { MERCHANT_CALLS } from '../contract/merchant-calls.js'

/** An MO as the request log names it. */
const MO_PATH = `/_sandbox${CONTROL_CALLS.mo.path}`

type Json = Record<string, unknown>
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {})
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** The id in a consent path or link (`…/consent/ID`). */
const consentId = (pathOrUrl: unknown): string | undefined => {
  const s = str(pathOrUrl)
  const at = s?.lastIndexOf('/consent/') ?? -1
  return s && at >= 0 ? decodeURIComponent(s.slice(at + '/consent/'.length)) : undefined
}

/** Entries (newest first, as the request log lists them) about subscription `id`, newest first. */
export function aboutSubscription(entries: RequestLogEntry[], id: string): RequestLogEntry[] {
  const names = (e: RequestLogEntry): boolean => {
    const request = obj(e.request)
    const response = obj(e.response)
    const payload = obj(response.payload)
    if (request.subscription_id === id || payload.subscription_id === id || response.subscription_id === id) return true
    // A clock move that renewed, retried, canceled or expired it.
    return Array.isArray(response.events) && response.events.some((ev) => obj(ev).subscription_id === id)
  }
  const named = entries.filter(names)
  // The verification it came from: a Verify that answered it, or the consent page that approved it.
  const verifs = new Set<string>()
  for (const e of named) {
    const v = e.path === MERCHANT_CALLS.verify.path ? str(obj(e.request).verif_request_id) : e.path.startsWith('/consent/') ? consentId(e.path) : undefined
    if (v) verifs.add(v)
  }
  // The MO that subscribed it: the Init that gave its short code is the latest before it for that MSISDN and service.
  const mo = named.find((e) => e.path === MO_PATH && obj(e.response).action === 'subscribed')
  const moInit = mo && entries.find((e) => e.id < mo.id && e.path === MERCHANT_CALLS.init.path && psmsInitFor(e, mo))
  const created = (e: RequestLogEntry): boolean => {
    if (e === moInit) return true
    if (!verifs.size) return false
    const request = obj(e.request)
    const payload = obj(obj(e.response).payload)
    return [str(request.verif_request_id), str(payload.verif_request_id), consentId(payload.redirect_url), consentId(e.path)].some(
      (v) => v !== undefined && verifs.has(v),
    )
  }
  return entries.filter((e) => names(e) || created(e))
}

/** An Init that answered the short code and keyword the MO then used, for its MSISDN. */
function psmsInitFor(init: RequestLogEntry, mo: RequestLogEntry): boolean {
  const request = obj(init.request)
  const payload = obj(obj(init.response).payload)
  const m = obj(mo.request)
  return request.msisdn === m.msisdn && payload.short_code === m.short_code && str(payload.keyword)?.toUpperCase() === str(m.text)?.trim().toUpperCase()
}
