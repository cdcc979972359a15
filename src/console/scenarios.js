// The Scenarios page (rules, runtime rules added and removed) and the Sessions page.
import { act, api, h, page, reconnect, say, shortTime, ui } from './lib.js'

// ------------------------------------------------------------------ Scenarios

export async function scenariosView() {
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
  ui.onLive = (type) => {
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
          (ui.session || 'default') === s.name
            ? h('p', { class: 'text' }, 'Shown')
            : h('button', { type: 'button', class: 'quiet', 'aria-label': `Show session ${s.name}`, onclick: () => pick(s.name) }, 'Show'),
        ),
      ),
    ),
  )
}
