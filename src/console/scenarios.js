// The Scenarios page (rules, runtime rules added and removed) and the Sessions page.
import { act, call, copyButton, emptyHint, h, markScrolling, page, pathOf, reconnect, say, shortTime, ui } from './lib.js'

// ------------------------------------------------------------------ Scenarios

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`

/** An MSISDN the rule matches, for a try (Malaysian, as the shipped demo numbers); '' when the match says too little. */
export function exampleMsisdn(match) {
  const exact = /^MSISDN (\d+)$/.exec(match)
  if (exact) return exact[1]
  const m = /^ending (\d*)([A-Z]*)(?:-\d+)?(?:, country my)?$/.exec(match)
  if (!m || m[1].length + m[2].length > 8) return ''
  const ending = m[1] + '0'.repeat(m[2].length)
  return '60123456000'.slice(0, 11 - ending.length) + ending
}

export async function scenariosView() {
  const body = h('div')
  const rule = h('textarea', {
    spellcheck: 'false',
    placeholder: '{"id": "slow-init", "match": {"ending": "777"}, "step": "init", "effect": {"delay_ms": 2000}}',
  })
  const load = async () => {
    const r = await call('scenarios')
    const rows = r.scenarios.map((s) =>
      h(
        'tr',
        {},
        h('td', { class: 'ending' }, s.match),
        h(
          'td',
          { class: 'ending' },
          exampleMsisdn(s.match) ? [exampleMsisdn(s.match), ' ', copyButton(`Copy ${exampleMsisdn(s.match)}`, exampleMsisdn(s.match))] : '—',
        ),
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
                      await call('rules.remove', { params: { id: s.id } })
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
        { class: 'table', tabindex: '0', role: 'region', 'aria-label': 'Scenarios table (scrolls sideways)' },
        h('p', { class: 'scroll-hint' }, 'Scroll sideways for more →'),
        h(
          'table',
          {},
          h('caption', { class: 'empty' }, 'Magic endings and rules of the loaded world; runtime rules first'),
          h('thead', {}, h('tr', {}, ...['Match', 'Example MSISDN', 'Step', 'Outcome', 'What it shows', 'Source'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, rows),
        ),
      ),
    )
    markScrolling()
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
            const r = await call('rules.add', { body: parsed })
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
  ui.onLive = (type) => {
    if (type === 'reset') act(load)
  }
}

// ------------------------------------------------------------------ Sessions

/** Sessions exist once the server has the sessions feature and more than the default session. */
async function sessionsList() {
  try {
    const r = await fetch(pathOf('listSessions'), { headers: { accept: 'application/json' }, credentials: 'same-origin' })
    if (!r.ok) return []
    const data = await r.json()
    return Array.isArray(data.sessions) ? data.sessions : []
  } catch {
    return []
  }
}

export async function refreshSessionsNav() {
  const list = await sessionsList()
  document.getElementById('nav-sessions').hidden = !list.some((s) => s.name !== 'default')
  document.getElementById('session-label').textContent = ui.session ? `Session ${ui.session}` : ''
  return list
}

export async function sessionsView() {
  const list = await refreshSessionsNav()
  const pick = (name) => {
    ui.session = name === 'default' ? '' : name
    sessionStorage.setItem('dcb-session', ui.session)
    reconnect()
    refreshSessionsNav()
    say(`The pages now show session ${name}.`)
    sessionsView()
  }
  page(
    'Sessions',
    h('p', { class: 'empty' }, 'Pick the session the other pages show.'),
    // Only the default one: how to start another (any call naming a session makes it).
    list.some((s) => s.name !== 'default')
      ? null
      : emptyHint(
          'No other session yet. A call that names one starts it:',
          'init --msisdn 60123456001 --service STREAMPLUS --country my --session team-a',
          'p',
        ),
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
            h('span', {}, plural(s.subscriptions, 'subscription')),
            h('span', {}, plural(s.messages, 'message')),
            h('span', {}, plural(s.requests, 'request')),
            h('span', {}, shortTime(s.now)),
          ),
          (ui.session || 'default') === s.name
            ? h('p', { class: 'text' }, 'Shown')
            : h('button', { type: 'button', class: 'quiet', 'aria-label': `Show session ${s.name}`, onclick: () => pick(s.name) }, 'Show'),
        ),
      ),
    ),
  )
}
