// The Subscriptions pages: the list (a table, live) and one page each (its timeline, then Cancel).
import { act, call, debounce, emptyHint, h, markScrolling, page, say, setMsisdn, shortTime, ui } from './lib.js'

// ------------------------------------------------------------------ Subscriptions

/** A status badge: green ACTIVE, amber EXPIRED (ended by a failed renewal), grey CANCELED. */
const STATUS_TAG = { ACTIVE: 'ok', EXPIRED: 'warn', CANCELED: 'off' }
export const statusBadge = (status) => h('span', { class: `tag ${STATUS_TAG[status] || ''}` }, status)

/** The latest renewal or carrier retry, when it failed (a subscription that needs a look). */
const failedRenewal = (s) => {
  const last = s.charges.filter((c) => c.kind !== 'first').pop()
  return last && last.outcome !== 'SUCCESS' ? last : null
}

function subscriptionRow(s) {
  const failed = failedRenewal(s)
  // The mark, and under it the outcome and whether the carrier retries (the reason is on its page).
  const mark = failed
    ? [
        ' ',
        h('span', { class: 'tag bad', title: failed.reason || null }, `${failed.kind} failed`),
        h('span', { class: 'why' }, [failed.outcome, s.next_retry_dt && `retry ${shortTime(s.next_retry_dt)}`].filter(Boolean).join(' · ')),
      ]
    : null
  const at = (t) => h('time', {}, shortTime(t))
  return h(
    'tr',
    { 'data-id': s.subscription_id, 'data-renewal': failed ? 'failed' : null },
    // The link says the whole row (a screen reader lists links alone); it shows the MSISDN.
    h(
      'td',
      {},
      h('a', { href: `#/subscriptions/${encodeURIComponent(s.subscription_id)}`, 'aria-label': `${s.msisdn} · ${s.service_code} · ${s.status}` }, s.msisdn),
    ),
    h('td', { class: 'badges' }, statusBadge(s.status), mark),
    h('td', {}, s.service_code),
    h('td', { class: 'nowrap' }, at(s.expiry_dt)),
    h('td', {}, String(s.charge_count)),
    h('td', {}, s.flow),
    h('td', {}, s.merchant),
    h('td', { class: 'nowrap' }, at(s.subscribed_dt)),
  )
}

export async function subscriptionsView() {
  const rows = h('tbody')
  const table = h(
    'div',
    { class: 'table', tabindex: '0', role: 'region', 'aria-label': 'Subscriptions table (scrolls sideways)' },
    h('p', { class: 'scroll-hint' }, 'Scroll sideways for more →'),
    h(
      'table',
      {},
      h('caption', { class: 'empty' }, 'Subscriptions, newest first'),
      h(
        'thead',
        {},
        h('tr', {}, ...['MSISDN', 'Status', 'Service', 'Expires', 'Charges', 'Flow', 'Merchant', 'Subscribed'].map((t) => h('th', { scope: 'col' }, t))),
      ),
      rows,
    ),
  )
  const empty = h('div')
  const msisdn = h('input', { type: 'search', inputmode: 'numeric', autocomplete: 'off', value: ui.msisdn })
  const status = h('select', {}, h('option', { value: '' }, 'Any'), ...['ACTIVE', 'CANCELED', 'EXPIRED'].map((s) => h('option', { value: s }, s)))
  const service = h('input', { type: 'search', autocomplete: 'off' })
  const load = async () => {
    const q = new URLSearchParams()
    if (msisdn.value.trim()) q.set('msisdn', msisdn.value.trim())
    if (status.value) q.set('status', status.value)
    if (service.value.trim()) q.set('service', service.value.trim())
    q.set('limit', '500')
    const r = await call('subscriptions', { query: q })
    // A live reload keeps the keyboard's place: the focused link is focused again in the new rows.
    const focused = document.activeElement?.closest?.('tr[data-id]')?.dataset.id
    rows.replaceChildren(...r.subscriptions.map(subscriptionRow))
    if (focused) rows.querySelector(`tr[data-id="${CSS.escape(focused)}"] a`)?.focus()
    table.hidden = !r.subscriptions.length
    const filtered = q.has('msisdn') || q.has('status') || q.has('service')
    if (r.subscriptions.length) empty.replaceChildren()
    else if (filtered) empty.replaceChildren(h('p', { class: 'empty' }, 'No subscriptions match.'))
    else
      empty.replaceChildren(
        emptyHint('No subscriptions yet. Make the first one, end to end:', 'flow --msisdn 60123456001 --service STREAMPLUS --country my', 'p'),
      )
    markScrolling()
  }
  const reload = debounce(() => act(load), 250)
  for (const el of [msisdn, service]) el.addEventListener('input', reload)
  msisdn.addEventListener('input', () => setMsisdn(msisdn.value.trim()))
  status.addEventListener('change', reload)
  page(
    'Subscriptions',
    h(
      'form',
      { role: 'search', 'aria-label': 'Filter subscriptions', onsubmit: (e) => e.preventDefault() },
      h('label', {}, 'Filter by MSISDN', msisdn),
      h('label', {}, 'Service', service),
      h('label', {}, 'Status', status),
    ),
    table,
    empty,
  )
  await load()
  ui.onLive = (type) => {
    if (type === 'subscriptions' || type === 'reset') reload()
  }
}

/** What changed a subscription's state, in words (the timeline's `cause`). */
const CAUSES = {
  verify: 'Verify',
  consent: 'consent approved',
  mo: 'MO',
  renewal: 'renewal failed',
  retry: 'carrier retry succeeded',
  lapsed: 'not billed: merchant inactive',
  cancel: 'canceled through the control API',
  carrier_cancel: 'canceled by a carrier rule',
  stop: 'STOP',
  superseded: 'superseded, carrier retries dropped',
}

/** One timeline entry (the server's, oldest first): its time, its kind, what happened. */
function timelineItem(e) {
  let what
  if (e.type === 'state') {
    const change = e.from ? `${e.from} → ${e.to}` : `subscribed: ${e.to}`
    const by = e.superseded_by ? [' by ', h('a', { href: `#/subscriptions/${encodeURIComponent(e.superseded_by)}` }, e.superseded_by)] : []
    what = [`${change} (${CAUSES[e.cause] || e.cause}`, ...by, ')']
  } else if (e.type === 'charge')
    what = [`${e.kind} charge: ${e.outcome}${e.amount ? ` (${e.amount} ${e.currency || ''})` : ''}`, e.reason ? h('span', { class: 'why' }, e.reason) : null]
  else if (e.type === 'message') what = [`SMS ${e.kind}: ${e.text}`]
  else what = [`request #${e.request_id}: ${e.http_status} ${e.method} ${e.path}`, e.reason ? h('span', { class: 'why' }, e.reason) : null]
  // A failed charge and a refused request stand out in the list.
  const bad = (e.type === 'charge' && e.outcome !== 'SUCCESS') || (e.type === 'request' && e.http_status >= 400)
  return h(
    'li',
    { 'data-type': e.type },
    h('div', { class: 'line' }, h('time', {}, shortTime(e.at)), h('span', { class: bad ? 'tag bad' : 'tag' }, e.type)),
    h('p', { class: 'text' }, what),
  )
}

/** What the clock has due for a subscription (not in its timeline: it has not happened). */
function scheduled(s) {
  const rows = []
  if (s.status === 'ACTIVE') rows.push({ at: s.expiry_dt, what: 'renewal due' })
  if (s.next_retry_dt) rows.push({ at: s.next_retry_dt, what: 'carrier retry of the failed renewal' })
  if (s.carrier_cancel_dt) rows.push({ at: s.carrier_cancel_dt, what: 'the carrier cancels' })
  return rows.sort((a, b) => String(a.at).localeCompare(String(b.at)))
}

export async function subscriptionView(id) {
  const body = h('div')
  const load = async () => {
    const s = await call('subscription', { params: { id } })
    const field = (k, v) => [h('dt', {}, k), h('dd', {}, v === null || v === undefined || v === '' ? '—' : String(v))]
    // The server says whether it would take a cancel (`cancelable`): an ended subscription's is refused 409.
    const by = s.timeline.filter((e) => e.cause === 'superseded').pop()?.superseded_by
    const ended =
      s.status === 'CANCELED'
        ? 'was canceled already'
        : by
          ? `expired and its carrier retries were dropped when subscription ${by} superseded it`
          : 'expired and the carrier has no retry left'
    const due = scheduled(s)
    const note = s.cancelable ? 'Cancel acts as the carrier: the subscriber gets the cancellation SMS.' : `Nothing to cancel: this subscription ${ended}.`
    const cancel = h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-describedby': 'cancel-note',
        disabled: !s.cancelable,
        title: s.cancelable ? null : note,
        onclick: () =>
          act(async () => {
            await call('cancel', { params: { id }, body: {} })
            say(`Subscription ${id} canceled by the carrier.`)
            await load()
          }),
      },
      'Cancel',
    )
    body.replaceChildren(
      h(
        'dl',
        {},
        h('dt', {}, 'Status'),
        h('dd', {}, statusBadge(s.status)),
        field('MSISDN', s.msisdn),
        field('Service', `${s.service_name} (${s.service_code})`),
        field('Merchant', s.merchant),
        field('Carrier', `${s.carrier_code} (${s.country_code})`),
        field('Flow', s.flow),
        field('Subscribed', shortTime(s.subscribed_dt)),
        field('Expires', shortTime(s.expiry_dt)),
        field('Canceled', s.canceled_dt ? `${shortTime(s.canceled_dt)} (${s.cancel_reason || ''})` : ''),
        field('Charges', s.charge_count),
      ),
      h('h2', {}, 'Timeline'),
      h(
        'p',
        { class: 'empty' },
        'Oldest first, as dcb subscription prints it: its state changes, charges, the messages sent about it and the requests about it.',
      ),
      h('ol', { class: 'items', 'aria-label': 'Timeline, oldest first' }, s.timeline.map(timelineItem)),
      h('h2', {}, 'Scheduled'),
      due.length
        ? h(
            'ol',
            { class: 'items', 'aria-label': 'Scheduled events' },
            due.map((r) => h('li', {}, h('div', { class: 'line' }, h('time', {}, shortTime(r.at))), h('p', { class: 'text' }, r.what))),
          )
        : h('p', { class: 'empty' }, 'Nothing is due.'),
      // Below the story it acts on, with the reason beside it when the server would refuse it.
      h('div', { class: 'cancel' }, cancel, h('p', { id: 'cancel-note', class: 'empty' }, note)),
    )
  }
  page(
    `Subscription ${id}`,
    h(
      'p',
      {},
      h('a', { href: '#/subscriptions' }, 'All subscriptions'),
      ' · ',
      h('a', { href: `#/requests?subscription=${encodeURIComponent(id)}` }, 'Its requests'),
    ),
    body,
  )
  await load()
  ui.onLive = (type, data) => {
    if ((type === 'subscriptions' && (data.more || data.ids.includes(id))) || type === 'reset') act(load)
  }
}
