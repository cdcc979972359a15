// The dcb console: plain JavaScript over the control API (same origin, JSON) and one live stream
// (GET /_sandbox/events). No framework, no build step. This file routes between the pages.
import { clockView } from './clock.js'
import { coverageView } from './coverage.js'
import { connect, h, main, navLinks, page, say, ui } from './lib.js'
import { messagesView } from './messages.js'
import { subscriptionsView, subscriptionView } from './subscriptions.js'
import { requestsView } from './requests.js'
import { refreshSessionsNav, scenariosView, sessionsView } from './scenarios.js'

// ------------------------------------------------------------------ router

const views = {
  messages: messagesView,
  subscriptions: subscriptionsView,
  clock: clockView,
  requests: requestsView,
  scenarios: scenariosView,
  coverage: coverageView,
  sessions: sessionsView,
}

async function route() {
  if (ui.signedOut) return
  // `#/page/id?query`: the query filters a page (`#/requests?subscription=ID`).
  const [path, query = ''] = location.hash.replace(/^#\/?/, '#/').split('?')
  const [, name = 'requests', id] = path.split('/')
  ui.onLive = null
  clearInterval(ui.clockTimer)
  // Sessions start on their first request, anywhere: whether to show Sessions is asked on every move.
  if (routed) refreshSessionsNav()
  say('')
  const params = new URLSearchParams(query)
  ui.msisdn = params.get('msisdn') || ''
  navLinks()
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.getAttribute('href').split('?')[0] === `#/${name || 'requests'}`) a.setAttribute('aria-current', 'page')
    else a.removeAttribute('aria-current')
  }
  main.setAttribute('aria-busy', 'true')
  const view = name === 'subscriptions' && id ? () => subscriptionView(decodeURIComponent(id)) : () => (views[name] || requestsView)(params)
  try {
    await view()
  } catch (e) {
    if (ui.signedOut) return
    page('Not available', h('p', {}, e.message))
  }
  main.setAttribute('aria-busy', 'false')
  if (!ui.signedOut) {
    document.title = `${main.querySelector('h1').textContent} · dcb sandbox`
    if (routed) main.querySelector('h1').focus()
    routed = true
  }
}
let routed = false

window.addEventListener('hashchange', route)
route().then(() => {
  if (ui.signedOut) return
  connect()
  refreshSessionsNav()
})
