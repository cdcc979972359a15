// The Messages page (every handset, live, the MO form) and the Subscriptions pages (the list, one page each).
import { act, api, copyButton, debounce, emptyHint, h, msisdnSearch, page, say, setMsisdn, shortTime, ui } from './lib.js'

// ------------------------------------------------------------------ Messages

/** The code an OTP message carries (its longest run of 4 to 8 digits). */
const otpIn = (m) => (m.kind === 'otp' && (String(m.text).match(/\b\d{4,8}\b/) || [])[0]) || ''

function messageItem(m) {
  const dir = m.direction === 'mo' ? 'MO' : 'MT'
  const otp = otpIn(m)
  const at = otp ? String(m.text).indexOf(otp) : -1
  const text = otp ? [m.text.slice(0, at), h('mark', { class: 'otp' }, otp), m.text.slice(at + otp.length)] : m.text
  return h(
    'li',
    { 'data-id': m.id, 'data-kind': m.kind },
    h('div', { class: 'line' }, h('span', { class: 'tag' }, dir), h('span', {}, `${m.from} → ${m.to}`), h('span', {}, m.kind), h('time', {}, shortTime(m.at))),
    h('p', { class: 'text' }, text, otp ? [' ', copyButton(`Copy OTP ${otp}`, otp, 'Copy code')] : null),
  )
}

const RENEWALS = new Set(['renewal', 'renewal_failed'])

export async function messagesView() {
  const list = h('ol', { class: 'items', 'aria-label': 'Messages, newest first' })
  const result = h('p', { role: 'status' })
  const msisdn = h('input', { name: 'msisdn', inputmode: 'numeric', required: true, autocomplete: 'off', value: ui.msisdn })
  const shortCode = h('input', { name: 'short_code', inputmode: 'numeric', required: true, autocomplete: 'off' })
  const text = h('input', { name: 'text', required: true, maxlength: 1600, autocomplete: 'off' })
  // The latest outcome only: an earlier error does not stay beside a later success.
  const report = (line, error) => {
    result.textContent = line
    result.classList.toggle('error', error)
  }
  const moForm = h(
    'form',
    {
      'aria-label': 'Send an MO',
      onsubmit: async (e) => {
        e.preventDefault()
        try {
          const r = await api('/_sandbox/mo', { msisdn: msisdn.value.trim(), short_code: shortCode.value.trim(), text: text.value })
          const parts = [`MO sent: ${r.action}`, r.subscription_id && `subscription ${r.subscription_id}`, r.code, r.message]
          report(parts.filter(Boolean).join(' · '), false)
          text.value = ''
        } catch (err) {
          report(`MO not sent: ${err.message}`, true)
        }
      },
    },
    h('label', {}, 'MSISDN', msisdn),
    h('label', {}, 'Short code', shortCode),
    h('label', {}, 'Text', text),
    h('button', { type: 'submit' }, 'Send MO'),
  )
  const kind = h('select', {}, h('option', { value: '' }, 'Any'), h('option', { value: 'no-renewals' }, 'All but renewal notices'))
  const shown = (m) => !kind.value || (kind.value === 'no-renewals' ? !RENEWALS.has(m.kind) : m.kind === kind.value)
  let messages = []
  const render = () => {
    // The kinds seen so far are offered too (otp, welcome, mo...).
    for (const k of new Set(messages.map((m) => m.kind))) if (![...kind.options].some((o) => o.value === k)) kind.append(h('option', { value: k }, k))
    list.replaceChildren(...messages.filter(shown).map(messageItem))
    if (list.children.length) return
    if (ui.msisdn || kind.value) list.append(h('li', { class: 'empty' }, ui.msisdn ? `No messages for ${ui.msisdn}.` : 'No messages of this kind.'))
    else list.append(emptyHint('No messages yet. Start a subscription for its OTP:', 'dcb init --msisdn 60123456001 --service STREAMPLUS --country my'))
  }
  const load = async () => {
    const q = ui.msisdn ? `?msisdn=${encodeURIComponent(ui.msisdn)}` : ''
    messages = (await api(`/_sandbox/messages${q}`)).messages
    render()
  }
  kind.addEventListener('change', render)
  page(
    'Messages',
    h(
      'form',
      { role: 'search', 'aria-label': 'Filter messages', onsubmit: (e) => e.preventDefault() },
      msisdnSearch(debounce(() => act(load), 250)),
      h('label', {}, 'Kind', kind),
    ),
    list,
    h('details', { class: 'fold' }, h('summary', {}, 'Send an MO (as a handset)'), moForm, result),
  )
  await load()
  ui.onLive = (type, data) => {
    if (type === 'sms') {
      const m = data.message
      if (ui.msisdn && m.msisdn !== ui.msisdn) return
      if (messages.some((x) => x.id === m.id)) return
      messages.unshift(m)
      if (!shown(m)) return
      if (!list.querySelector('[data-id]')) return render()
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
  const msisdn = h('input', { type: 'search', inputmode: 'numeric', autocomplete: 'off', value: ui.msisdn })
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
