// The Clock page (the time, advance, set, what a move ran) and the Requests page (the journal, live).
import { act, api, debounce, h, json, page, say, shortTime, ui } from './lib.js'

// ------------------------------------------------------------------ Clock

function clockText() {
  if (!ui.clockShown) return ''
  if (ui.clockShown.frozen) return shortTime(ui.clockShown.now)
  const t = Date.parse(`${ui.clockShown.now.slice(0, 23)}Z`) + (Date.now() - ui.clockShown.seen)
  return Number.isNaN(t) ? shortTime(ui.clockShown.now) : shortTime(new Date(t).toISOString())
}

/** A clock move's events: each listed when few; counted by type, and the first ones listed, when many. */
function moveSummary(r) {
  const events = r.events || []
  const total = events.length + (r.events_omitted || 0)
  const counts = {}
  for (const e of events) counts[e.type] = (counts[e.type] || 0) + 1
  const SHOWN = 50
  return [
    h(
      'p',
      {},
      total
        ? `${total} event${total === 1 ? '' : 's'} ran: ${Object.entries(counts)
            .map(([t, n]) => `${n} ${t}`)
            .join(', ')}`
        : 'No event fell due.',
    ),
    events.length
      ? h(
          'ol',
          { class: 'items', 'aria-label': 'Events of the move' },
          events
            .slice(0, SHOWN)
            .map((e) =>
              h(
                'li',
                {},
                h('div', { class: 'line' }, h('time', {}, shortTime(e.at)), h('span', {}, e.type), h('span', {}, e.status || '')),
                h('p', { class: 'text' }, [e.msisdn, e.service_code, e.code].filter(Boolean).join(' · ')),
              ),
            ),
        )
      : null,
    total > SHOWN ? h('p', { class: 'empty' }, `and ${total - SHOWN} more (the whole list: the clock call's answer or dcb clock advance --json).`) : null,
  ]
}

export async function clockView() {
  const now = h('p', { class: 'clock-now', 'aria-live': 'off' })
  const info = h('p', { class: 'empty' })
  const result = h('div', { role: 'region', 'aria-label': 'What the move ran' })
  const show = () => {
    now.textContent = clockText()
    info.textContent = ui.clockShown ? `${ui.clockShown.frozen ? 'Frozen' : 'Running'}; next event: ${shortTime(ui.clockShown.next_event_dt) || 'none'}` : ''
  }
  const move = (path, body) =>
    act(async () => {
      const r = await api(path, body)
      ui.clockShown = { ...r.clock, seen: Date.now() }
      show()
      result.replaceChildren(h('h2', {}, `Moved to ${shortTime(r.clock.now)}`), ...moveSummary(r).filter(Boolean))
      say(`Clock moved to ${shortTime(r.clock.now)}.`)
    })
  const by = h('input', { placeholder: 'P1M or 36h', autocomplete: 'off', required: true })
  const to = h('input', { placeholder: '2026-01-31T00:00:00', autocomplete: 'off', required: true })
  page(
    'Clock',
    h('p', {}, 'Sandbox time (UTC)'),
    now,
    info,
    h(
      'form',
      {
        onsubmit: (e) => {
          e.preventDefault()
          move('/_sandbox/clock/advance', { by: by.value.trim() })
        },
      },
      h('label', {}, 'Advance by', by),
      h('button', { type: 'submit' }, 'Advance'),
    ),
    h(
      'form',
      {
        onsubmit: (e) => {
          e.preventDefault()
          move('/_sandbox/clock/set', { to: to.value.trim() })
        },
      },
      h('label', {}, 'Set to', to),
      h('button', { type: 'submit' }, 'Set'),
    ),
    result,
  )
  ui.clockShown = { ...(await api('/_sandbox/clock')), seen: Date.now() }
  show()
  ui.clockTimer = setInterval(show, 1000)
  ui.onLive = (type) => {
    if (type === 'clock' || type === 'hello') show()
  }
}

// ------------------------------------------------------------------ Requests

/** What a clock move ran, as the journal kept it: a few events, or their count by type. */
function ranLine(r) {
  const events = /^\/_sandbox\/clock\/(advance|set)$/.test(r.path) && r.response && r.response.events
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

function requestItem(r) {
  const ok = r.http_status < 400
  return h(
    'li',
    { 'data-id': r.id },
    h(
      'details',
      {},
      h(
        'summary',
        {},
        h('span', { class: `tag ${ok ? 'ok' : 'bad'}` }, r.http_status),
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
      h('h3', {}, 'Request body'),
      h('pre', {}, r.request === null || r.request === undefined ? '(none)' : json(r.request)),
      h('h3', {}, 'Response body'),
      h('pre', {}, json(r.response)),
    ),
  )
}

/** The Requests page; `params` (the hash's query) may name an `msisdn` or a `subscription` to show only its requests. */
export async function requestsView(params = new URLSearchParams()) {
  const subscription = params.get('subscription') || ''
  let filter = params.get('msisdn') || ''
  const list = h('ol', { class: 'items', 'aria-label': 'Requests, newest first' })
  const filterInput = h('input', { type: 'search', inputmode: 'numeric', autocomplete: 'off', value: filter })
  const load = async () => {
    const q = new URLSearchParams({ limit: '200' })
    if (filter) q.set('msisdn', filter)
    if (subscription) q.set('subscription', subscription)
    const r = await api(`/_sandbox/requests?${q}`)
    list.replaceChildren(...r.requests.map(requestItem))
    if (!r.requests.length) list.append(h('li', { class: 'empty' }, filter || subscription ? 'No requests match.' : 'No requests yet.'))
  }
  const reload = debounce(() => act(load), 250)
  filterInput.addEventListener('input', () => {
    filter = filterInput.value.trim()
    reload()
  })
  page(
    'Requests',
    h('p', { class: 'empty' }, 'Merchant API calls and the control calls that change state, at sandbox time. Open one for its bodies.'),
    subscription
      ? h('p', {}, `About subscription ${subscription}, the requests that created it included. `, h('a', { href: '#/requests' }, 'All requests'))
      : null,
    h('form', { role: 'search', 'aria-label': 'Filter requests', onsubmit: (e) => e.preventDefault() }, h('label', {}, 'Filter by MSISDN', filterInput)),
    list,
  )
  await load()
  ui.onLive = (type, data) => {
    if (type === 'reset' || (type === 'requests' && data.skipped)) return act(load)
    if (type !== 'requests') return
    // Which new entries are about a subscription only the server can tell (the ones that created it).
    if (subscription) return reload()
    list.querySelector('.empty')?.remove()
    for (const r of [...data.requests].reverse())
      if ((!filter || r.msisdn === filter) && !list.querySelector(`[data-id="${r.id}"]`)) list.prepend(requestItem(r))
    while (list.children.length > 500) list.lastElementChild.remove()
  }
}
