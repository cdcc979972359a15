// The console's shared parts: building elements, the status line, control calls, the live stream
// and the sign-in form (from another address). Every text goes into the page as text.

export const main = document.getElementById('main')
const statusLine = document.getElementById('status')
const liveLabel = document.getElementById('live')
const downBanner = document.getElementById('down')

/** What the pages share. */
export const ui = {
  /** The session the pages show ('' for the default one). */
  session: sessionStorage.getItem('dcb-session') || '',
  /** The current page's answer to live events (set by each view). */
  onLive: null,
  signedOut: false,
  /** The clock as last read, and when (the Clock page runs it on). */
  clockShown: null,
  clockTimer: 0,
  /** The MSISDN searched for: kept in the URL (`?msisdn=`), so it stays set from page to page. */
  msisdn: '',
}

// ------------------------------------------------------------------ helpers

/** An element: h('p', {class: 'x'}, 'text', child...). Attributes starting with "on" are listeners. */
export function h(tag, attrs, ...children) {
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

export function say(text, error = false) {
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

/** The calls by name, as the server declares them (the page carries them): `{ method, path }`. */
const CALLS = JSON.parse(document.getElementById('dcb-calls').textContent)

/** The path of a declared call: its `:name` parameters filled and encoded, then the query (a URLSearchParams or an object), if any. */
export function pathOf(name, params = {}, query) {
  const path = CALLS[name].path.replace(/:(\w+)/g, (_, key) => encodeURIComponent(params[key]))
  const q = query === undefined ? '' : String(new URLSearchParams(query))
  return q ? `${path}?${q}` : path
}

/** A declared control call by name, with its declared method: `{ params, query, body }` as it takes them. */
export const call = (name, { params, query, body } = {}) => api(pathOf(name, params, query), body, CALLS[name].method)

/** A control call: JSON in, JSON out; a failure throws its message. */
async function api(path, body, method) {
  const headers = { accept: 'application/json' }
  if (body !== undefined || (method && method !== 'GET')) headers['content-type'] = 'application/json'
  if (ui.session) headers['x-dcb-session'] = ui.session
  let res
  try {
    res = await fetch(path, {
      method: method || (body === undefined ? 'GET' : 'POST'),
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    })
  } catch {
    // No answer at all (not an HTTP error): the server is stopped, as the banner says.
    downBanner.hidden = false
    throw new Error('The server is not answering: start it with dcb serve.')
  }
  downBanner.hidden = true
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

export const json = (v) => JSON.stringify(v, null, 2)
export const shortTime = (t) => (t ? String(t).slice(0, 19).replace('T', ' ') : '')
export const debounce = (fn, ms) => {
  let t = 0
  return (...a) => {
    clearTimeout(t)
    t = setTimeout(() => fn(...a), ms)
  }
}

/** Runs an action from a form; reports its error in the status line. */
export async function act(fn) {
  try {
    await fn()
  } catch (e) {
    say(e.message, true)
  }
}

/** A button that copies `text`; the status line says whether the browser let it. */
export function copyButton(label, text, caption = 'Copy') {
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      say(`Copied: ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`)
    } catch {
      say('The browser refused to copy: select the text and copy it.', true)
    }
  }
  return h('button', { type: 'button', class: 'quiet copy', 'aria-label': label, onclick: copy }, caption)
}

/** The CLI's default base URL, as the server wrote it into the page. */
const DEFAULT_BASE_URL = document.querySelector('meta[name="dcb-default-base-url"]')?.getAttribute('content')

/** A dcb command for this server and session: `--base-url` unless it is the default one, `--session` unless the default. */
export function dcbCommand(args) {
  const where = location.origin === DEFAULT_BASE_URL ? '' : ` --base-url ${location.origin}`
  const session = ui.session && !/ --session /.test(` ${args}`) ? ` --session ${ui.session}` : ''
  return `dcb ${args}${where}${session}`
}

/** What an empty page says: how to make its first entry, a command to copy (`tag`: a list item or a paragraph). */
export function emptyHint(text, args, tag = 'li') {
  const command = dcbCommand(args)
  // Word by word, each kept whole: a line never breaks inside `--session` at its hyphens.
  const words = command.split(' ').flatMap((w, i) => [i ? ' ' : '', h('span', { class: 'word' }, w)])
  return h(tag, { class: 'empty hint' }, text, h('span', { class: 'command' }, h('code', {}, words), copyButton(`Copy ${command}`, command)))
}

/** Marks each table wider than its box (`.scrolls`: the hint "Scroll sideways for more" shows). */
export function markScrolling() {
  for (const t of document.querySelectorAll('.table')) t.classList.toggle('scrolls', t.scrollWidth > t.clientWidth + 1)
}
window.addEventListener('resize', markScrolling)

/** The nav links carry the MSISDN searched for, so the next page filters by it too. */
export function navLinks() {
  for (const a of document.querySelectorAll('#nav a')) {
    const base = a.getAttribute('href').split('?')[0]
    a.setAttribute('href', ui.msisdn ? `${base}?msisdn=${encodeURIComponent(ui.msisdn)}` : base)
  }
}

/** Keeps the MSISDN searched for in the URL (replaced, not a new history entry) and the nav links. */
export function setMsisdn(value) {
  ui.msisdn = value
  const [path, query = ''] = location.hash.split('?')
  const q = new URLSearchParams(query)
  if (value) q.set('msisdn', value)
  else q.delete('msisdn')
  const rest = q.toString()
  history.replaceState(null, '', `${path || '#/requests'}${rest ? `?${rest}` : ''}`)
  navLinks()
}

/** The "Filter by MSISDN" field of a page, on the shared search; `changed` reloads the page's list. */
export function msisdnSearch(changed) {
  const input = h('input', { type: 'search', inputmode: 'numeric', autocomplete: 'off', value: ui.msisdn })
  input.addEventListener('input', () => {
    setMsisdn(input.value.trim())
    changed()
  })
  return h('label', {}, 'Filter by MSISDN', input)
}

/** A page: its title and parts; an absent part (null) is left out, as `h` does. */
export function page(title, ...children) {
  main.replaceChildren(h('h1', { tabindex: '-1' }, title), ...children.filter((c) => c != null))
}

// ------------------------------------------------------------------ live stream

let stream = null
export function connect() {
  if (stream || ui.signedOut) return
  // The stream of the session shown (EventSource sends no headers: the session goes in the query).
  stream = new EventSource(pathOf('events', {}, ui.session ? { session: ui.session } : undefined))
  stream.onopen = () => {
    liveLabel.textContent = 'Live'
    downBanner.hidden = true
  }
  stream.onerror = () => {
    liveLabel.textContent = 'Reconnecting'
    // Said plainly at the top: a stopped server is the usual reason.
    downBanner.hidden = false
    if (stream.readyState === EventSource.CLOSED) {
      stream = null
      setTimeout(connect, 2000)
    }
  }
  for (const type of ['hello', 'sms', 'sms-many', 'subscriptions', 'requests', 'clock', 'reset']) {
    stream.addEventListener(type, (ev) => {
      const data = JSON.parse(ev.data)
      if (type === 'clock' || type === 'hello') ui.clockShown = { ...data.clock, seen: Date.now() }
      if (ui.onLive) ui.onLive(type, data)
    })
  }
}

// ------------------------------------------------------------------ sign-in (from another address)

/** Follows another session's stream (after a pick on Sessions). */
export function reconnect() {
  stream?.close()
  stream = null
  connect()
}

export function showSignIn(message) {
  if (ui.signedOut) return
  ui.signedOut = true
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
          const r = await fetch(pathOf('login'), {
            method: CALLS.login.method,
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
