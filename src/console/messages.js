// The Messages page (every handset, live, the MO form).
import { act, call, copyButton, debounce, emptyHint, h, msisdnSearch, page, shortTime, ui } from './lib.js'

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
          const r = await call('mo', { body: { msisdn: msisdn.value.trim(), short_code: shortCode.value.trim(), text: text.value } })
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
    else list.append(emptyHint('No messages yet. Start a subscription for its OTP:', 'init --msisdn 60123456001 --service STREAMPLUS --country my'))
  }
  const load = async () => {
    messages = (await call('messages', { query: ui.msisdn ? { msisdn: ui.msisdn } : undefined })).messages
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
