// The Messages page (every handset, live, the MO form) and the Subscriptions pages (the list, one page each).
import { act, api, debounce, h, page, say, shortTime, ui } from './lib.js'

// ------------------------------------------------------------------ Messages

function messageItem(m) {
  const dir = m.direction === 'mo' ? 'MO' : 'MT'
  return h(
    'li',
    { 'data-id': m.id },
    h('div', { class: 'line' }, h('span', { class: 'tag' }, dir), h('span', {}, `${m.from} → ${m.to}`), h('span', {}, m.kind), h('time', {}, shortTime(m.at))),
    h('p', { class: 'text' }, m.text),
  )
}

export async function messagesView() {
  let filter = sessionStorage.getItem('dcb-msisdn') || ''
  const list = h('ol', { class: 'items', 'aria-label': 'Messages, newest first' })
  const result = h('p', { role: 'status' })
  const msisdn = h('input', { name: 'msisdn', inputmode: 'numeric', required: true, autocomplete: 'off', value: filter })
  const shortCode = h('input', { name: 'short_code', inputmode: 'numeric', required: true, autocomplete: 'off' })
  const text = h('input', { name: 'text', required: true, maxlength: 1600, autocomplete: 'off' })
  const moForm = h(
    'form',
    {
      'aria-label': 'Send an MO',
      onsubmit: (e) => {
        e.preventDefault()
        act(async () => {
          const r = await api('/_sandbox/mo', { msisdn: msisdn.value.trim(), short_code: shortCode.value.trim(), text: text.value })
          const parts = [`MO sent: ${r.action}`, r.subscription_id && `subscription ${r.subscription_id}`, r.code, r.message]
          result.textContent = parts.filter(Boolean).join(' · ')
          text.value = ''
        })
      },
    },
    h('label', {}, 'MSISDN', msisdn),
    h('label', {}, 'Short code', shortCode),
    h('label', {}, 'Text', text),
    h('button', { type: 'submit' }, 'Send MO'),
  )
  const filterInput = h('input', { type: 'search', inputmode: 'numeric', autocomplete: 'off', value: filter })
  const load = async () => {
    const q = filter ? `?msisdn=${encodeURIComponent(filter)}` : ''
    const r = await api(`/_sandbox/messages${q}`)
    list.replaceChildren(...r.messages.map(messageItem))
    if (!r.messages.length) list.append(h('li', { class: 'empty' }, filter ? `No messages for ${filter}.` : 'No messages yet.'))
  }
  filterInput.addEventListener(
    'input',
    debounce(() => {
      filter = filterInput.value.trim()
      sessionStorage.setItem('dcb-msisdn', filter)
      act(load)
    }, 250),
  )
  page(
    'Messages',
    h('h2', {}, 'Send an MO'),
    moForm,
    result,
    h('h2', {}, 'Every handset'),
    h('form', { role: 'search', onsubmit: (e) => e.preventDefault() }, h('label', {}, 'Filter by MSISDN', filterInput)),
    list,
  )
  await load()
  ui.onLive = (type, data) => {
    if (type === 'sms') {
      const m = data.message
      if (filter && m.msisdn !== filter) return
      if (list.querySelector(`[data-id="${CSS.escape(m.id)}"]`)) return
      list.querySelector('.empty')?.remove()
      list.prepend(messageItem(m))
    } else if (type === 'sms-many' || type === 'reset') act(load)
  }
}

// ------------------------------------------------------------------ Subscriptions

function subscriptionItem(s) {
  return h(
    'li',
    {},
    h('a', { href: `#/subscriptions/${encodeURIComponent(s.subscription_id)}` }, `${s.msisdn} · ${s.service_code} · ${s.status}`),
    h(
      'div',
      { class: 'line' },
      h('span', {}, s.merchant),
      h('span', {}, s.flow),
      h('span', {}, `since ${shortTime(s.subscribed_dt)}`),
      h('span', {}, `expires ${shortTime(s.expiry_dt)}`),
      h('span', {}, `${s.charge_count} charge${s.charge_count === 1 ? '' : 's'}`),
    ),
  )
}

export async function subscriptionsView() {
  const list = h('ol', { class: 'items', 'aria-label': 'Subscriptions, newest first' })
  const msisdn = h('input', { type: 'search', inputmode: 'numeric', autocomplete: 'off' })
  const status = h('select', {}, h('option', { value: '' }, 'Any'), ...['ACTIVE', 'CANCELED', 'EXPIRED'].map((s) => h('option', { value: s }, s)))
  const service = h('input', { type: 'search', autocomplete: 'off' })
  const load = async () => {
    const q = new URLSearchParams()
    if (msisdn.value.trim()) q.set('msisdn', msisdn.value.trim())
    if (status.value) q.set('status', status.value)
    if (service.value.trim()) q.set('service', service.value.trim())
    q.set('limit', '500')
    const r = await api(`/_sandbox/subscriptions?${q}`)
    list.replaceChildren(...r.subscriptions.map(subscriptionItem))
    if (!r.subscriptions.length) list.append(h('li', { class: 'empty' }, 'No subscriptions match.'))
  }
  const reload = debounce(() => act(load), 250)
  for (const el of [msisdn, service]) el.addEventListener('input', reload)
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
    list,
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
  return h('li', {}, h('div', { class: 'line' }, h('time', {}, shortTime(e.at)), h('span', { class: 'tag' }, e.type)), h('p', { class: 'text' }, what))
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
    const s = await api(`/_sandbox/subscriptions/${encodeURIComponent(id)}`)
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
            await api(`/_sandbox/subscriptions/${encodeURIComponent(id)}/cancel`, {})
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
        field('Status', s.status),
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
      h('p', { id: 'cancel-note', class: 'empty' }, note),
      cancel,
      h('h2', {}, 'Timeline'),
      h('p', { class: 'empty' }, 'Oldest first: its state changes, charges, the messages sent about it and the requests about it.'),
      h('ol', { class: 'items', 'aria-label': 'Timeline, oldest first' }, s.timeline.map(timelineItem)),
      h('h2', {}, 'Scheduled'),
      due.length
        ? h(
            'ol',
            { class: 'items', 'aria-label': 'Scheduled events' },
            due.map((r) => h('li', {}, h('div', { class: 'line' }, h('time', {}, shortTime(r.at))), h('p', { class: 'text' }, r.what))),
          )
        : h('p', { class: 'empty' }, 'Nothing is due.'),
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
