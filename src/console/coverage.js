// The Coverage page: per merchant, the share of outcomes its traffic exercised, the outcomes never
// seen (each with how to produce it), and the findings (what the traffic did wrong) with their advice
// and a link to the request log entry of the latest. Live: asked again on traffic.
import { call, debounce, emptyHint, h, page, shortTime, ui } from './lib.js'

export async function coverageView() {
  const body = h('div')
  const load = async () => {
    const { coverage } = await call('coverage')
    if (!coverage.length) {
      body.replaceChildren(
        emptyHint(
          'No merchant has traffic in this session yet. Run your tests against this sandbox, or one subscription end to end:',
          'flow --msisdn 60123456001 --service STREAMPLUS --country my',
          'p',
        ),
      )
      return
    }
    body.replaceChildren(...coverage.map(merchantSection))
  }
  page('Coverage', h('p', {}, "What each merchant's traffic exercised, and what it did wrong, since the session's last reset."), body)
  await load()
  const again = debounce(() => load().catch(() => {}), 300)
  ui.onLive = (type) => {
    if (type === 'requests' || type === 'subscriptions' || type === 'clock' || type === 'reset') again()
  }
}

function merchantSection(m) {
  const never = m.outcomes.filter((o) => !o.count)
  const seen = m.outcomes.filter((o) => o.count)
  const findings = m.findings.length
    ? h(
        'ul',
        { class: 'findings' },
        m.findings.map((f) =>
          h(
            'li',
            {},
            h('strong', {}, f.code),
            ` ×${f.count}`,
            f.example === null
              ? ''
              : h('span', { class: 'meta' }, ' (latest: ', h('a', { href: `#/requests?entry=${f.example}` }, `request log entry ${f.example}`), ')'),
            h('br'),
            f.advice,
          ),
        ),
      )
    : h('p', {}, 'No findings.')
  return h(
    'section',
    { 'aria-labelledby': `coverage-${m.merchant}` },
    h('h2', { id: `coverage-${m.merchant}` }, `${m.merchant}: ${m.percent}% (${m.covered} of ${m.total} outcomes)`),
    h('p', { class: 'meta' }, 'Since ', h('time', { datetime: m.since }, shortTime(m.since))),
    h('h3', {}, 'Findings'),
    findings,
    // What the traffic did, before the long list of what it never did.
    h('h3', {}, 'Seen'),
    h(
      'div',
      { class: 'table' },
      h(
        'table',
        { class: 'compact' },
        h('caption', { class: 'sr-only' }, `Outcomes seen by ${m.merchant}`),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Outcome'), h('th', { scope: 'col' }, 'Count'))),
        h(
          'tbody',
          {},
          seen.map((o) => h('tr', {}, h('td', {}, o.id), h('td', {}, String(o.count)))),
        ),
      ),
    ),
    h('h3', {}, 'Never seen'),
    never.length
      ? h(
          'ul',
          { class: 'never', 'aria-label': `Outcomes ${m.merchant} never saw, and how to produce each` },
          never.map((o) => h('li', {}, h('code', {}, o.id), o.how ? `: ${o.how}` : '')),
        )
      : h('p', {}, 'Every outcome was seen.'),
  )
}
