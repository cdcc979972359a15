/**
 * HTML pages the sandbox serves itself: the carrier consent page of the redirect flow (a plain form,
 * no JavaScript) and the default return page. (The console at / is ./console.ts.)
 */
import { StoreError } from '../store/types.js'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { describePeriod, SandboxError, type Engine } from '../core/engine.js'
import { formatTimestamp } from '../core/time.js'
import { MERCHANT_CALLS } from '../contract/merchant-calls.js'
import { BODY_LIMIT, readBody } from './body.js'
import { headerReason } from './reason.js'
import { inProcessCall } from './inprocess.js'
import { clientIp, type ProxyTrust } from './ip.js'
import type { RequestLog } from '../runtime/request-log.js'
import { escapeHtml as h, redirect, sendHtml } from './respond.js'

const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
.card{border:1px solid #ccc;border-radius:.5rem;padding:1.25rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}
dt{color:#666}button{font-size:1rem;padding:.6rem 1.2rem;margin-right:.5rem;border-radius:.4rem;border:1px solid #888;cursor:pointer}
button.approve{background:#0a7d32;color:#fff;border-color:#0a7d32}.note{color:#666;font-size:.85rem}code{background:#f3f3f3;padding:0 .2rem}`

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${h(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`
}

/**
 * The path the sandbox is reached under, as the client sees it: '' over a socket (`dcb serve` is
 * at the root), the base URL's path in process (an msw base URL such as `https://x.test/v1`), so
 * the links a page makes stay under it.
 */
function mountPath(req: IncomingMessage): string {
  const base = inProcessCall(req)?.publicBase
  return base ? new URL(base).pathname.replace(/\/+$/, '') : ''
}

export async function consentPage(
  engine: Engine,
  req: IncomingMessage,
  res: ServerResponse,
  id: string,
  requestLog?: RequestLog,
  trustProxy?: ProxyTrust,
  reasons = true,
): Promise<void> {
  if (req.method === 'POST') {
    const body = await readBody(req)
    if (!body.ok && body.reason === 'too_large') {
      // Not read further: the connection closes after the answer.
      res.setHeader('connection', 'close')
      return sendHtml(
        res,
        413,
        page(
          'Too large',
          `<h1>Too large</h1><p>The form is larger than ${BODY_LIMIT / 1024} KiB; it sends only <code>action=approve</code> or <code>action=deny</code>.</p>`,
        ),
      )
    }
    const form = new URLSearchParams(body.ok ? body.text : '')
    // Exactly one: of `action=deny&action=approve` neither may silently win.
    const actions = form.getAll('action')
    const action = actions.length === 1 ? actions[0] : undefined
    if (action !== 'approve' && action !== 'deny') {
      return sendHtml(
        res,
        400,
        page('Bad request', `<h1>Bad request</h1><p>The form must send exactly one <code>action=approve</code> or <code>action=deny</code>.</p>`),
      )
    }
    try {
      const started = performance.now()
      const sandboxAt = engine.now()
      const verif = engine.consentView(id)?.verif ?? engine.state.verifs.get(id)
      const out = await engine.consent(id, action)
      // A return path on the sandbox itself (the default world's /_sandbox/return) stays under the mount path.
      if (out.location?.startsWith('/') && !out.location.startsWith('//')) out.location = mountPath(req) + out.location
      // Approvals and denials are logged: a redirect that failed shows there, with why.
      const entry = requestLog?.add({
        time: Date.now(),
        sandbox_time: sandboxAt,
        method: 'POST',
        path: `/consent/${id}`,
        ip: clientIp(req, trustProxy) ?? null,
        merchant: verif?.merchant ?? null,
        msisdn: verif?.msisdn ?? null,
        http_status: out.location ? 303 : 200,
        message: out.result === 'SUCCESS' ? '' : out.result,
        reason: out.reason ?? null,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        request: `{"action":"${action}"}`,
        response: { location: out.location, result: out.result, subscription_id: out.subscription_id },
      })
      engine.coverage.exampleOf(entry ?? null)
      // The browser went away before the redirect: the merchant may never learn of the subscription.
      if (res.destroyed && out.result === 'SUCCESS' && verif) engine.coverage.consentLost(verif.merchant, entry ?? null, 0, out.subscription_id)
      if (out.location) return redirect(res, out.location, 303, out.reason && reasons ? { 'x-dcb-reason': headerReason(out.reason) } : undefined)
      const text = out.result === 'SUCCESS' ? `Subscribed: <code>${h(out.subscription_id!)}</code>` : `Not subscribed: <code>${h(out.result)}</code>`
      return sendHtml(res, 200, page('Done', `<div class="card"><h1>Done</h1><p>${text}</p></div>`))
    } catch (e) {
      if (e instanceof SandboxError) return sendHtml(res, e.status, page('Not found', `<h1>Not found</h1><p>${h(e.message)}</p>`))
      // The answer could not be made durable: nothing was changed.
      if (e instanceof StoreError) return sendHtml(res, 503, page('Not saved', `<h1>Not saved</h1><p>${h(e.message)}; nothing was changed, try again.</p>`))
      throw e
    }
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, POST')
    return sendHtml(res, 405, page('Method not allowed', '<h1>Method not allowed</h1>'))
  }
  const view = engine.consentView(id)
  if (!view) return sendHtml(res, 404, page('Not found', '<h1>Not found</h1><p>There is no consent request at this address.</p>'))
  const { verif, service, integration } = view
  const carrier = engine.world.carriers.get(verif.carrier)
  const price = integration.price ? `${integration.price.amount} ${integration.price.currency}` : 'as agreed'
  const period = describePeriod(engine.world.period(service.period))
  const details = `<dl><dt>Service</dt><dd>${h(service.name)}</dd><dt>Price</dt><dd>${h(price)} per ${h(period)}</dd><dt>Phone number</dt><dd>${h(verif.msisdn)}</dd><dt>Carrier</dt><dd>${h(carrier?.name ?? verif.carrier)}</dd></dl>`
  if (view.problem) {
    return sendHtml(
      res,
      410,
      page('Link not valid', `<div class="card"><h1>${h(view.problem)}</h1>${details}<p class="note">Start again from the merchant's site.</p></div>`),
    )
  }
  const form = `<form method="post" action="${h(mountPath(req))}/consent/${h(encodeURIComponent(verif.id))}"><button class="approve" name="action" value="approve">Approve</button><button name="action" value="deny">Deny</button></form>`
  const expires = formatTimestamp(verif.expires_at).slice(0, 19).replace('T', ' ')
  sendHtml(
    res,
    200,
    page(
      `Confirm ${service.name}`,
      `<div class="card"><h1>Confirm your subscription</h1>${details}<p>The charge is added to your phone bill.</p>${form}<p class="note">dcb sandbox carrier page. This link is valid once, until ${h(expires)} UTC (sandbox clock).</p></div>`,
    ),
  )
}

/** The default `return_url` of the sandbox services: shows what the merchant would receive. */
export function returnPage(res: ServerResponse, query: URLSearchParams): void {
  const rows = [...query].map(([k, v]) => `<dt>${h(k)}</dt><dd><code>${h(v)}</code></dd>`).join('')
  sendHtml(
    res,
    200,
    page(
      'Back at the merchant',
      `<div class="card"><h1>Back at the merchant</h1><p>The carrier sent the subscriber back with:</p><dl>${rows}</dl><p class="note">Reconcile with POST ${MERCHANT_CALLS.status.path}.</p></div>`,
    ),
  )
}
