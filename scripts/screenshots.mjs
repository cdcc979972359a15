// `npm run screenshots`: starts a sandbox (from dist/: build first), makes real traffic over HTTP,
// and writes a screenshot of every console page at 1280 and 390 px wide into .screenshots/, then
// of the pages that list, empty (a session with nothing yet).
// Uses Debian's chromium (/usr/bin/chromium, or $CHROMIUM) through playwright-core.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { startSandbox } from '../dist/index.js'

const OUT = process.argv[2] || '.screenshots'
const KEY = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
mkdirSync(OUT, { recursive: true })
const server = await startSandbox({ port: 0, inMemory: true, clock: '2026-01-01T00:00:00' })
const url = server.url
const api = async (path, body, headers = {}) =>
  (await fetch(url + path, { method: 'POST', headers: { ...KEY, ...headers }, body: JSON.stringify(body) })).json()
const control = async (path, body, headers = {}) =>
  (
    await fetch(`${url}/_sandbox${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { 'content-type': 'application/json', ...headers },
      body: body && JSON.stringify(body),
    })
  ).json()

async function subscribe(msisdn, headers = {}) {
  const init = await api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, headers)
  const { otp } = await control(`/otp?msisdn=${msisdn}`, undefined, headers)
  const verify = await api('/subscriptions/verify', { verif_request_id: init.payload.verif_request_id, otp }, headers)
  return verify.payload.subscription_id
}

let browser
try {
  // Real traffic: subscriptions, refusals (BARRED at 200, a 400), a clock move with renewals, a session.
  const id = await subscribe('60123456001')
  await subscribe('60123456002')
  await subscribe('60123456301')
  await api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
  await api('/subscriptions/init', { msisdn: '60123456107', service_code: 'STREAMPLUS', country_code: 'my' })
  await api('/subscriptions/init', { msisdn: 'nope', service_code: 'STREAMPLUS' })
  await api('/subscriptions/init', { msisdn: '60123456010', service_code: 'STREAMPLUS', country_code: 'my' })
  await control('/clock/advance', { by: 'P1M' })
  await subscribe('60123456051', { 'x-dcb-session': 'demo-session' })
  // One canceled: its page shows a disabled Cancel and why.
  const canceled = await subscribe('60123456003')
  await control(`/subscriptions/${canceled}/cancel`, {})

  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--headless=new', '--no-sandbox', '--disable-gpu'] })
  const pages = ['requests', 'messages', 'subscriptions', `subscriptions/${id}`, `subscriptions/${canceled}`, 'clock', 'scenarios', 'coverage', 'sessions']
  const fileName = (name) => (name === `subscriptions/${id}` ? 'subscription-active' : name === `subscriptions/${canceled}` ? 'subscription-canceled' : name)
  for (const width of [1280, 390]) {
    const page = await browser.newPage({ viewport: { width, height: 900 } })
    for (const name of pages) {
      await page.goto(`${url}/#/${name}`)
      await page.locator('main[aria-busy="false"]').waitFor()
      await page.locator('#live', { hasText: /^Live$/ }).waitFor()
      const file = join(OUT, `${fileName(name)}-${width}.png`)
      await page.screenshot({ path: file, fullPage: true })
      console.log(file)
      if (name !== 'requests') continue
      // A merchant call opened: its headers, bodies and curl command.
      await page.locator('li[data-outcome="warn"] summary').first().click()
      const opened = join(OUT, `requests-open-${width}.png`)
      await page.screenshot({ path: opened, fullPage: true })
      console.log(opened)
    }
    // The empty pages (a session with nothing in it yet): each says how to make its first entry.
    await page.evaluate(() => sessionStorage.setItem('dcb-session', 'empty-demo'))
    for (const name of ['requests', 'messages', 'subscriptions', 'coverage']) {
      await page.goto(`${url}/#/${name}`)
      await page.reload()
      await page.locator('main[aria-busy="false"]').waitFor()
      await page.locator('#live', { hasText: /^Live$/ }).waitFor()
      const file = join(OUT, `empty-${name}-${width}.png`)
      await page.screenshot({ path: file, fullPage: true })
      console.log(file)
    }
    await page.close()
  }
} finally {
  await browser?.close()
  await server.close()
}
