// The Clock page (the time, advance, set, what a move ran).
import { call, h, page, say, shortTime, ui } from './lib.js'

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

/** A valid time one day after `now` (the Set to field's example). */
function dayAfter(now) {
  const t = Date.parse(`${String(now).slice(0, 19)}Z`)
  return Number.isNaN(t) ? '2026-01-31T00:00:00' : new Date(t + 86_400_000).toISOString().slice(0, 19)
}

/** A field with its error beside it (described by it, so a screen reader reads both). */
function field(label, input, id) {
  const error = h('p', { class: 'field-error', id, role: 'status' })
  input.setAttribute('aria-describedby', id)
  return { error, label: h('label', {}, label, input) }
}

export async function clockView() {
  const now = h('p', { class: 'clock-now', 'aria-live': 'off' })
  const info = h('p', { class: 'empty' })
  const result = h('div', { role: 'region', 'aria-label': 'What the move ran' })
  const by = h('input', { placeholder: 'P1M or 36h', autocomplete: 'off', required: true })
  const to = h('input', { placeholder: '2026-01-31T00:00:00', autocomplete: 'off', required: true })
  const byField = field('Advance by', by, 'advance-error')
  const toField = field('Set to', to, 'set-error')
  const quickError = h('p', { class: 'field-error', role: 'status' })
  const nextButton = h('button', { type: 'button', class: 'quiet', onclick: () => toNext() }, 'To the next event')
  const show = () => {
    now.textContent = clockText()
    const next = ui.clockShown && ui.clockShown.next_event_dt
    info.textContent = ui.clockShown ? `${ui.clockShown.frozen ? 'Frozen' : 'Running'}; next event: ${shortTime(next) || 'none'}` : ''
    nextButton.disabled = !next
    if (ui.clockShown) to.placeholder = dayAfter(ui.clockShown.now)
  }
  /** A move; its error goes beside the field it came from (`error`), and a success clears them all. */
  const move = async (name, body, error) => {
    for (const e of [byField.error, toField.error, quickError]) e.textContent = ''
    try {
      const r = await call(name, { body })
      ui.clockShown = { ...r.clock, seen: Date.now() }
      show()
      result.replaceChildren(h('h2', {}, `Moved to ${shortTime(r.clock.now)}`), ...moveSummary(r).filter(Boolean))
      say(`Clock moved to ${shortTime(r.clock.now)}.`)
    } catch (e) {
      error.textContent = e.message
    }
  }
  const toNext = () => ui.clockShown && ui.clockShown.next_event_dt && move('setTime', { to: ui.clockShown.next_event_dt }, quickError)
  const quick = (label, by) => h('button', { type: 'button', class: 'quiet', onclick: () => move('advance', { by }, quickError) }, label)
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
          move('advance', { by: by.value.trim() }, byField.error)
        },
      },
      byField.label,
      h('button', { type: 'submit' }, 'Advance'),
      byField.error,
    ),
    h(
      'form',
      {
        onsubmit: (e) => {
          e.preventDefault()
          move('setTime', { to: to.value.trim() }, toField.error)
        },
      },
      toField.label,
      h('button', { type: 'submit' }, 'Set'),
      toField.error,
    ),
    h(
      'div',
      { class: 'quick', role: 'group', 'aria-labelledby': 'quick-label' },
      h('span', { id: 'quick-label', class: 'empty' }, 'Quick moves'),
      quick('+1h', 'PT1H'),
      quick('+1d', 'P1D'),
      quick('+1M', 'P1M'),
      nextButton,
    ),
    quickError,
    result,
  )
  ui.clockShown = { ...(await call('now')), seen: Date.now() }
  show()
  ui.clockTimer = setInterval(show, 1000)
  ui.onLive = (type) => {
    if (type === 'clock' || type === 'hello') show()
  }
}
