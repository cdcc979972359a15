// The Clock page (the time, advance, set, what a move ran).
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
