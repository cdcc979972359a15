// The dcb console: plain JavaScript over the control API (same origin, JSON) and one live stream
// (GET /_sandbox/events). No framework, no build step; every text goes into the page as text.

const main = document.getElementById('main')
const statusLine = document.getElementById('status')
const liveLabel = document.getElementById('live')
let session = sessionStorage.getItem('dcb-session') || ''
/** The current page's answer to live events (set by each view). */
let onLive = null
let signedOut = false

// ------------------------------------------------------------------ helpers

/** An element: h('p', {class: 'x'}, 'text', child...). Attributes starting with "on" are listeners. */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else if (k === 'class') el.className = v
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c))
  return el
}

function say(text, error = false) {
  statusLine.textContent = text
  statusLine.classList.toggle('error', error)
}

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`)
    this.status = status
    this.body = body
  }
}

/** A control call: JSON in, JSON out; a failure throws its message. */
async function api(path, body, method) {
  const headers = { accept: 'application/json' }
  if (body !== undefined || (method && method !== 'GET')) headers['content-type'] = 'application/json'
  if (session) headers['x-dcb-session'] = session
  const res = await fetch(path, {
    method: method || (body === undefined ? 'GET' : 'POST'),
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  })
  const text = await res.text()
  let data = null
  try {
    data = text ? JSON.parse(text) : null
  } catch {
    data = { message: text }
  }
  if (!res.ok) {
    if (res.status === 403 && data && /admin token/.test(data.message || '')) showSignIn(data.message)
    throw new ApiError(res.status, data)
  }
  return data
}

const json = (v) => JSON.stringify(v, null, 2)
const shortTime = (t) => (t ? String(t).slice(0, 19).replace('T', ' ') : '')
const debounce = (fn, ms) => {
  let t = 0
  return (...a) => {
    clearTimeout(t)
    t = setTimeout(() => fn(...a), ms)
  }
}

/** Runs an action from a form; reports its error in the status line. */
async function act(fn) {
  try {
    await fn()
  } catch (e) {
    say(e.message, true)
  }
}

function page(title, ...children) {
  main.replaceChildren(h('h1', { tabindex: '-1' }, title), ...children)
}

// ------------------------------------------------------------------ live stream

let stream = null
function connect() {
  if (stream || signedOut) return
  stream = new EventSource('/_sandbox/events')
  stream.onopen = () => (liveLabel.textContent = 'Live')
  stream.onerror = () => {
    liveLabel.textContent = 'Reconnecting'
    if (stream.readyState === EventSource.CLOSED) {
      stream = null
      setTimeout(connect, 2000)
    }
  }
  for (const type of ['hello', 'sms', 'sms-many', 'subscriptions', 'requests', 'clock', 'reset']) {
    stream.addEventListener(type, (ev) => {
      const data = JSON.parse(ev.data)
      if (type === 'clock' || type === 'hello') clockShown = { ...data.clock, seen: Date.now() }
      // The stream is the default session's: another session's pages reload instead.
      if (onLive) onLive(type, data)
    })
  }
}

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

async function messagesView() {
  let filter = sessionStorage.getItem('dcb-msisdn') || ''
  const list = h('ol', { class: 'items', 'aria-label': 'Messages, newest first' })
  const result = h('p', { role: 'status' })
  const msisdn = h('input', { name: 'msisdn', inputmode: 'numeric', required: true, autocomplete: 'off', value: filter })
  const shortCode = h('input', { name: 'short_code', inputmode: 'numeric', required: true, autocomplete: 'off' })
  const text = h('input', { name: 'text', required: true, autocomplete: 'off' })
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
  onLive = (type, data) => {
    if (type === 'sms' && !session) {
      const m = data.message
      if (filter && m.msisdn !== filter) return
      if (list.querySelector(`[data-id="${CSS.escape(m.id)}"]`)) return
      list.querySelector('.empty')?.remove()
      list.prepend(messageItem(m))
    } else if (type === 'sms-many' || type === 'reset' || (type === 'sms' && session)) act(load)
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

async function subscriptionsView() {
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
  onLive = (type) => {
    if (type === 'subscriptions' || type === 'reset') reload()
  }
}

/** A subscription's life in time order: what the record and its messages say happened, and what is due. */
function lifecycle(s, messages) {
  const rows = [{ at: s.subscribed_dt, what: `subscribed (${s.flow})` }]
  for (const m of messages)
    if (m.subscription_id === s.subscription_id && m.kind !== 'renewal' && m.kind !== 'renewal_failed')
      rows.push({ at: m.at, what: `SMS ${m.kind}: ${m.text}` })
  for (const c of s.charges) rows.push({ at: c.at, what: `${c.kind} charge: ${c.outcome}${c.amount ? ` (${c.amount} ${c.currency || ''})` : ''}` })
  if (s.canceled_dt) rows.push({ at: s.canceled_dt, what: `canceled${s.cancel_reason ? ` by ${s.cancel_reason}` : ''}` })
  if (s.status === 'EXPIRED') rows.push({ at: s.expiry_dt, what: 'expired' })
  if (s.status === 'ACTIVE') rows.push({ at: s.expiry_dt, what: 'renewal due (scheduled)' })
  if (s.next_retry_dt) rows.push({ at: s.next_retry_dt, what: 'charge retry (scheduled)' })
  if (s.carrier_cancel_dt) rows.push({ at: s.carrier_cancel_dt, what: 'carrier cancels (scheduled)' })
  return rows.sort((a, b) => String(a.at).localeCompare(String(b.at)))
}

async function subscriptionView(id) {
  const body = h('div')
  const load = async () => {
    const s = await api(`/_sandbox/subscriptions/${encodeURIComponent(id)}`)
    const messages = (await api(`/_sandbox/messages?msisdn=${encodeURIComponent(s.msisdn)}`)).messages
    const field = (k, v) => [h('dt', {}, k), h('dd', {}, v === null || v === undefined || v === '' ? '—' : String(v))]
    const cancel = h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-describedby': 'cancel-note',
        disabled: s.status === 'CANCELED',
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
      h('p', { id: 'cancel-note', class: 'empty' }, 'Cancel acts as the carrier: the subscriber gets the cancellation SMS.'),
      cancel,
      h('h2', {}, 'Charge history'),
      s.charges.length
        ? h(
            'div',
            { class: 'table' },
            h(
              'table',
              {},
              h('caption', { class: 'empty' }, `The latest ${s.charges.length} of ${s.charge_count}`),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  h('th', { scope: 'col' }, 'Time'),
                  h('th', { scope: 'col' }, 'Kind'),
                  h('th', { scope: 'col' }, 'Outcome'),
                  h('th', { scope: 'col' }, 'Amount'),
                ),
              ),
              h(
                'tbody',
                {},
                [...s.charges]
                  .reverse()
                  .map((c) =>
                    h(
                      'tr',
                      {},
                      h('td', {}, shortTime(c.at)),
                      h('td', {}, c.kind),
                      h('td', {}, c.outcome),
                      h('td', {}, c.amount ? `${c.amount} ${c.currency || ''}` : '—'),
                    ),
                  ),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'No charges.'),
      h('h2', {}, 'Lifecycle'),
      h(
        'ol',
        { class: 'items', 'aria-label': 'Lifecycle events' },
        lifecycle(s, messages).map((r) => h('li', {}, h('div', { class: 'line' }, h('time', {}, shortTime(r.at))), h('p', { class: 'text' }, r.what))),
      ),
    )
  }
  page(`Subscription ${id}`, h('p', {}, h('a', { href: '#/subscriptions' }, 'All subscriptions')), body)
  await load()
  onLive = (type, data) => {
    if ((type === 'subscriptions' && (data.more || data.ids.includes(id))) || type === 'reset') act(load)
  }
}

// ------------------------------------------------------------------ Clock

let clockShown = null
let clockTimer = 0

function clockText() {
  if (!clockShown) return ''
  if (clockShown.frozen) return shortTime(clockShown.now)
  const t = Date.parse(`${clockShown.now.slice(0, 23)}Z`) + (Date.now() - clockShown.seen)
  return Number.isNaN(t) ? shortTime(clockShown.now) : shortTime(new Date(t).toISOString())
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

async function clockView() {
  const now = h('p', { class: 'clock-now', 'aria-live': 'off' })
  const info = h('p', { class: 'empty' })
  const result = h('div', { role: 'region', 'aria-label': 'What the move ran' })
  const show = () => {
    now.textContent = clockText()
    info.textContent = clockShown ? `${clockShown.frozen ? 'Frozen' : 'Running'}; next event: ${shortTime(clockShown.next_event_dt) || 'none'}` : ''
  }
  const move = (path, body) =>
    act(async () => {
      const r = await api(path, body)
      clockShown = { ...r.clock, seen: Date.now() }
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
  clockShown = { ...(await api('/_sandbox/clock')), seen: Date.now() }
  show()
  clockTimer = setInterval(show, 1000)
  onLive = (type) => {
    if (type === 'clock' || type === 'hello') show()
  }
}

// ------------------------------------------------------------------ Requests

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
        h(
          'span',
          { class: 'line' },
          h('time', {}, shortTime(r.time)),
          h('span', {}, `${r.duration_ms} ms`),
          h('span', {}, `session ${r.session || 'default'}`),
          r.merchant ? h('span', {}, r.merchant) : null,
        ),
        r.reason ? h('span', { class: 'why' }, `Why: ${r.reason}`) : null,
      ),
      h(
        'dl',
        {},
        h('dt', {}, 'Sandbox time'),
        h('dd', {}, r.sandbox_time),
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

async function requestsView() {
  const list = h('ol', { class: 'items', 'aria-label': 'Requests, newest first' })
  const load = async () => {
    const r = await api('/_sandbox/requests?limit=200')
    list.replaceChildren(...r.requests.map(requestItem))
    if (!r.requests.length) list.append(h('li', { class: 'empty' }, 'No requests yet.'))
  }
  page('Requests', h('p', { class: 'empty' }, 'Merchant API calls and the control calls that change state. Open one for its bodies.'), list)
  await load()
  onLive = (type, data) => {
    if (type === 'reset' || (type === 'requests' && (data.skipped || session))) return act(load)
    if (type !== 'requests') return
    list.querySelector('.empty')?.remove()
    for (const r of [...data.requests].reverse()) if (!list.querySelector(`[data-id="${r.id}"]`)) list.prepend(requestItem(r))
    while (list.children.length > 500) list.lastElementChild.remove()
  }
}

// ------------------------------------------------------------------ Scenarios

async function scenariosView() {
  const body = h('div')
  const rule = h('textarea', {
    spellcheck: 'false',
    placeholder: '{"id": "slow-init", "match": {"ending": "777"}, "step": "init", "effect": {"delay_ms": 2000}}',
  })
  const load = async () => {
    const r = await api('/_sandbox/scenarios')
    const rows = r.scenarios.map((s) =>
      h(
        'tr',
        {},
        h('td', {}, s.match),
        h('td', {}, s.step),
        h('td', {}, s.outcome),
        h('td', {}, s.description || s.id),
        h(
          'td',
          {},
          s.source === 'runtime'
            ? h(
                'button',
                {
                  type: 'button',
                  class: 'quiet',
                  'aria-label': `Remove rule ${s.id}`,
                  onclick: () =>
                    act(async () => {
                      await api(`/_sandbox/rules/${encodeURIComponent(s.id)}`, undefined, 'DELETE')
                      say(`Rule ${s.id} removed.`)
                      await load()
                    }),
                },
                'Remove',
              )
            : 'fixture',
        ),
      ),
    )
    body.replaceChildren(
      h(
        'div',
        { class: 'table' },
        h(
          'table',
          {},
          h('caption', { class: 'empty' }, 'Magic endings and rules of the loaded world; runtime rules first'),
          h('thead', {}, h('tr', {}, ...['Match', 'Step', 'Outcome', 'What it shows', 'Source'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, rows),
        ),
      ),
    )
  }
  page(
    'Scenarios',
    body,
    h('h2', {}, 'Add a runtime rule'),
    h(
      'form',
      {
        onsubmit: (e) => {
          e.preventDefault()
          act(async () => {
            let parsed
            try {
              parsed = JSON.parse(rule.value)
            } catch {
              throw new Error('the rule is not JSON')
            }
            const r = await api('/_sandbox/rules', parsed)
            say(`Rule ${r.id} added.`)
            rule.value = ''
            await load()
          })
        },
      },
      h('label', { class: 'wide' }, 'Rule (JSON)', rule),
      h('button', { type: 'submit' }, 'Add rule'),
    ),
  )
  await load()
  onLive = (type) => {
    if (type === 'reset') act(load)
  }
}

// ------------------------------------------------------------------ Sessions

/** Sessions exist once the server has the sessions feature and more than the default session. */
async function sessionsList() {
  try {
    const r = await fetch('/_sandbox/sessions', { headers: { accept: 'application/json' }, credentials: 'same-origin' })
    if (!r.ok) return []
    const data = await r.json()
    return Array.isArray(data.sessions) ? data.sessions : []
  } catch {
    return []
  }
}

async function refreshSessionsNav() {
  const list = await sessionsList()
  document.getElementById('nav-sessions').hidden = !list.some((s) => s.name !== 'default')
  document.getElementById('session-label').textContent = session ? `Session ${session}` : ''
  return list
}

async function sessionsView() {
  const list = await refreshSessionsNav()
  const pick = (name) => {
    session = name === 'default' ? '' : name
    sessionStorage.setItem('dcb-session', session)
    refreshSessionsNav()
    say(`The pages now show session ${name}.`)
    sessionsView()
  }
  page(
    'Sessions',
    h('p', { class: 'empty' }, 'Pick the session the other pages show.'),
    h(
      'ol',
      { class: 'items', 'aria-label': 'Sessions' },
      list.map((s) =>
        h(
          'li',
          {},
          h(
            'div',
            { class: 'line' },
            h('strong', {}, s.name),
            h('span', {}, `${s.subscriptions} subscriptions`),
            h('span', {}, `${s.messages} messages`),
            h('span', {}, `${s.requests} requests`),
            h('span', {}, shortTime(s.now)),
          ),
          (session || 'default') === s.name
            ? h('p', { class: 'text' }, 'Shown')
            : h('button', { type: 'button', class: 'quiet', 'aria-label': `Show session ${s.name}`, onclick: () => pick(s.name) }, 'Show'),
        ),
      ),
    ),
  )
}

// ------------------------------------------------------------------ sign-in (from another address)

function showSignIn(message) {
  if (signedOut) return
  signedOut = true
  stream?.close()
  stream = null
  liveLabel.textContent = 'Signed out'
  const token = h('input', { type: 'password', autocomplete: 'current-password', required: true })
  const note = h('p', { role: 'status' })
  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Sign in'),
    h('p', {}, message),
    h(
      'form',
      {
        onsubmit: async (e) => {
          e.preventDefault()
          const r = await fetch('/_console/login', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ token: token.value }),
            credentials: 'same-origin',
          })
          if (r.ok) return location.reload()
          note.textContent = ((await r.json().catch(() => null)) || {}).message || `HTTP ${r.status}`
        },
      },
      h('label', {}, 'Admin token', token),
      h('button', { type: 'submit' }, 'Sign in'),
    ),
    note,
  )
  main.querySelector('input').focus()
}

// ------------------------------------------------------------------ router

const views = {
  messages: messagesView,
  subscriptions: subscriptionsView,
  clock: clockView,
  requests: requestsView,
  scenarios: scenariosView,
  sessions: sessionsView,
}

async function route() {
  if (signedOut) return
  const [, name = 'messages', id] = location.hash.replace(/^#\/?/, '#/').split('/')
  onLive = null
  clearInterval(clockTimer)
  say('')
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.getAttribute('href') === `#/${name}`) a.setAttribute('aria-current', 'page')
    else a.removeAttribute('aria-current')
  }
  main.setAttribute('aria-busy', 'true')
  const view = name === 'subscriptions' && id ? () => subscriptionView(decodeURIComponent(id)) : views[name] || messagesView
  try {
    await view()
  } catch (e) {
    if (signedOut) return
    page('Not available', h('p', {}, e.message))
  }
  main.setAttribute('aria-busy', 'false')
  if (!signedOut) {
    document.title = `${main.querySelector('h1').textContent} · dcb sandbox`
    if (routed) main.querySelector('h1').focus()
    routed = true
  }
}
let routed = false

window.addEventListener('hashchange', route)
route().then(() => {
  if (signedOut) return
  connect()
  refreshSessionsNav()
})
