// The Requests page (the request log, live): the console's landing page.
import { act, call, copyButton, debounce, emptyHint, h, json, msisdnSearch, page, pathOf, say, shortTime, ui } from './lib.js'

/** A FAIL envelope is a failure whatever its HTTP status (BARRED answered 200 is not a success). */
export function outcomeOf(r) {
  if (r.http_status >= 400) return 'bad'
  return r.response && r.response.status === 'FAIL' ? 'warn' : 'ok'
}

/** What a clock move ran, as the request log kept it: a few events, or their count by type. */
function ranLine(r) {
  const events = (r.path === pathOf('advance') || r.path === pathOf('setTime')) && r.response && r.response.events
  if (!events || !events.length) return null
  const one = (e) => [e.type, e.msisdn, e.code, e.status && `→ ${e.status}`, e.reason && `(${e.reason})`].filter(Boolean).join(' ')
  const counts = {}
  for (const e of events) {
    const kind = e.code ? `${e.type} ${e.code}` : e.type
    counts[kind] = (counts[kind] || 0) + 1
  }
  const text =
    events.length <= 3
      ? events.map(one).join('; ')
      : Object.entries(counts)
          .map(([t, n]) => `${n} ${t}`)
          .join(', ')
  return h('span', { class: 'ran' }, `Ran: ${text}`)
}

const quote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`
/** Headers a repeat of the call needs (the others are the transport's). */
const REPLAYED = /^(api-key|content-type|x-dcb-session|idempotency-key)$/

/** A merchant call as a curl command that repeats it: the key as `$DCB_API_KEY` unless it is a shipped one (kept in the log). */
export function curlOf(r) {
  const parts = [`curl -sS -X ${r.method} ${quote(location.origin + r.path)}`]
  for (const [name, value] of Object.entries(r.headers || {})) {
    if (!REPLAYED.test(name)) continue
    parts.push(name === 'api-key' && value === '(masked)' ? `-H "api-key: $DCB_API_KEY"` : `-H ${quote(`${name}: ${value}`)}`)
  }
  if (r.request !== null && r.request !== undefined) parts.push(`--data-raw ${quote(typeof r.request === 'string' ? r.request : JSON.stringify(r.request))}`)
  return parts.join(' ')
}

function requestItem(r) {
  const outcome = outcomeOf(r)
  const curl = r.headers ? curlOf(r) : ''
  return h(
    'li',
    { 'data-id': r.id, 'data-outcome': outcome },
    h(
      'details',
      {},
      h(
        'summary',
        {},
        h('span', { class: `tag ${outcome}`, title: outcome === 'ok' ? 'success' : outcome === 'warn' ? 'FAIL envelope' : 'error' }, r.http_status),
        ` ${r.method} ${r.path} `,
        r.message ? h('strong', {}, r.message) : null,
        r.client_closed ? h('span', { class: 'tag bad', title: 'the client went away before the answer' }, 'client gone') : null,
        r.fault
          ? h('span', { class: 'tag bad', title: "a rule's fault: what the connection did instead of the answer" }, `fault ${r.fault.kind} (${r.fault.when})`)
          : null,
        h(
          'span',
          { class: 'line' },
          // Sandbox time, as on the other pages (the wall time is in the details).
          h('time', {}, shortTime(r.sandbox_time)),
          r.msisdn ? h('span', {}, r.msisdn) : null,
          h('span', {}, `${r.duration_ms} ms`),
          h('span', {}, `session ${ui.session || 'default'}`),
          r.merchant ? h('span', {}, r.merchant) : null,
        ),
        r.reason ? h('span', { class: 'why' }, `Why: ${r.reason}`) : null,
        ranLine(r),
      ),
      h(
        'dl',
        {},
        h('dt', {}, 'Sandbox time'),
        h('dd', {}, r.sandbox_time),
        h('dt', {}, 'Wall time'),
        h('dd', {}, r.time),
        h('dt', {}, 'Client'),
        h('dd', {}, r.ip || '—'),
        r.msisdn !== undefined ? [h('dt', {}, 'MSISDN'), h('dd', {}, r.msisdn || '—')] : null,
      ),
      r.headers
        ? [
            h('h3', {}, 'Request headers'),
            h(
              'pre',
              {},
              Object.entries(r.headers)
                .map(([k, v]) => `${k}: ${v}`)
                .join('\n'),
            ),
          ]
        : null,
      h('h3', {}, 'Request body'),
      h('pre', {}, r.request === null || r.request === undefined ? '(none)' : json(r.request)),
      h('h3', {}, 'Response body'),
      h('pre', {}, json(r.response)),
      curl ? [h('h3', {}, 'As curl'), h('pre', { class: 'curl' }, curl), copyButton(`Copy request ${r.id} as curl`, curl, 'Copy as curl')] : null,
    ),
  )
}

/** The Requests page; `params` (the hash's query) may name an `msisdn`, a `subscription`, or `failures=1`. */
export async function requestsView(params = new URLSearchParams()) {
  const subscription = params.get('subscription') || ''
  const list = h('ol', { class: 'items', 'aria-label': 'Requests, newest first' })
  const failures = h('input', { type: 'checkbox', checked: params.get('failures') === '1' })
  const shown = (r) => !failures.checked || outcomeOf(r) !== 'ok'
  let entries = []
  const render = () => {
    list.replaceChildren(...entries.filter(shown).map(requestItem))
    if (list.children.length) return
    if (ui.msisdn || subscription || failures.checked) list.append(h('li', { class: 'empty' }, failures.checked ? 'No failures match.' : 'No requests match.'))
    else list.append(emptyHint('No requests yet. Make the first one:', 'init --msisdn 60123456001 --service STREAMPLUS --country my'))
  }
  const load = async () => {
    const q = new URLSearchParams({ limit: '200' })
    if (ui.msisdn) q.set('msisdn', ui.msisdn)
    if (subscription) q.set('subscription', subscription)
    entries = (await call('requests', { query: q })).requests
    render()
  }
  const reload = debounce(() => act(load), 250)
  failures.addEventListener('change', render)
  page(
    'Requests',
    h('p', { class: 'empty' }, 'Merchant API calls and the control calls that change state, at sandbox time. Open one for its headers and bodies.'),
    subscription
      ? h('p', {}, `About subscription ${subscription}, the requests that created it included. `, h('a', { href: '#/requests' }, 'All requests'))
      : null,
    h(
      'form',
      { role: 'search', 'aria-label': 'Filter requests', onsubmit: (e) => e.preventDefault() },
      msisdnSearch(reload),
      h('label', { class: 'check' }, failures, 'Failures only'),
    ),
    list,
  )
  await load()
  // `#/requests?entry=ID` (a coverage finding's example): that entry, opened.
  const entry = params.get('entry')
  const opened = entry && list.querySelector(`[data-id="${CSS.escape(entry)}"] details`)
  if (opened) {
    opened.open = true
    opened.scrollIntoView({ block: 'center' })
  } else if (entry) say(`Request log entry ${entry} is not among the latest 200.`)
  ui.onLive = (type, data) => {
    if (type === 'reset' || (type === 'requests' && data.skipped)) return act(load)
    if (type !== 'requests') return
    // Which new entries are about a subscription only the server can tell (the ones that created it).
    if (subscription) return reload()
    const fresh = data.requests.filter((r) => (!ui.msisdn || r.msisdn === ui.msisdn) && !entries.some((e) => e.id === r.id))
    if (!fresh.length) return
    entries = [...fresh, ...entries].slice(0, 500)
    if (!fresh.some(shown)) return
    if (!list.querySelector('[data-id]')) return render()
    for (const r of [...fresh].reverse()) if (shown(r)) list.prepend(requestItem(r))
    while (list.children.length > 500) list.lastElementChild.remove()
  }
}
