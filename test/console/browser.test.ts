/**
 * The console in a real browser (Debian's chromium driven by playwright-core), used as a person uses
 * it: things are found by role and accessible name. Every request the page makes is checked to stay
 * on the server's origin, and the browser console must stay free of errors.
 */
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FINDING_ADVICE } from '../../src/core/coverage.js'
import type { Client } from '../helpers.js'
import { useConsole } from './open-console.js'

const con = useConsole(undefined, 1200)
let c: Client
let page: Page
/** A new tab that reports console errors and page errors (into `con.problems`). */
const openPage = () => con.open(1200)

beforeAll(async () => {
  c = con.c
  page = con.page
  await page.goto(c.url + '/')
  await page.locator('#live', { hasText: /^Live$/ }).waitFor()
}, 60_000)

const nav = (name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true })

describe('the console in chromium', () => {
  it('shows an OTP live, within 2 s, after an Init made over HTTP', async () => {
    await nav('Messages').click()
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Messages')
    const init = await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    expect(init.body.status).toBe('SUCCESS')
    const otp = (await c.control('/otp?msisdn=60123456001')).body.otp as string
    const messages = page.getByRole('list', { name: 'Messages, newest first' })
    await messages.getByText(`verification code is ${otp}`).waitFor({ timeout: 2000 })
  })

  it('sends an MO from the form that activates a PSMS subscription', async () => {
    const msisdn = '601300001042'
    const init = await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
    expect(init.body.payload.short_code).toBe('32123')
    const keyword = init.body.payload.keyword as string
    // The form is folded away under the list (a <details>).
    await page.getByText('Send an MO (as a handset)').click()
    const form = page.getByRole('form', { name: 'Send an MO' })
    await form.getByRole('textbox', { name: 'MSISDN' }).fill(msisdn)
    await form.getByRole('textbox', { name: 'Short code' }).fill('32123')
    await form.getByRole('textbox', { name: 'Text' }).fill(keyword)
    await form.getByRole('button', { name: 'Send MO' }).click()
    await page.getByText(/MO sent: subscribed · subscription /).waitFor({ timeout: 5000 })
    const subs = (await c.control(`/subscriptions?msisdn=${msisdn}`)).body.subscriptions
    expect(subs).toHaveLength(1)
    expect(subs[0].status).toBe('ACTIVE')
    expect(subs[0].flow).toBe('psms')
    // The MO and the welcome SMS show in the list, live.
    await page.getByRole('list', { name: 'Messages, newest first' }).getByText(keyword, { exact: true }).waitFor({ timeout: 2000 })
  })

  it('cancels a subscription as the carrier from its page', async () => {
    await nav('Subscriptions').click()
    const link = page.getByRole('link', { name: /601300001042 · STREAMPLUS · ACTIVE/ })
    await link.click()
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Subscription /)
    await page.getByRole('button', { name: 'Cancel', exact: true }).click()
    await page.getByText(/canceled by the carrier/).waitFor({ timeout: 5000 })
    await expect.poll(async () => (await c.control('/subscriptions?msisdn=601300001042')).body.subscriptions[0].status).toBe('CANCELED')
    await page
      .getByRole('list', { name: 'Timeline, oldest first' })
      .getByText('ACTIVE → CANCELED (canceled through the control API)')
      .waitFor({ timeout: 2000 })
    expect(await page.getByRole('button', { name: 'Cancel', exact: true }).isDisabled()).toBe(true)
  })

  const ran = () => page.getByRole('region', { name: 'What the move ran' })

  it('advances the clock, listing the events the move ran', async () => {
    await c.subscribe('60123456002')
    await nav('Clock').click()
    await page.getByRole('textbox', { name: 'Advance by' }).fill('P1M')
    await page.getByRole('button', { name: 'Advance', exact: true }).click()
    await ran()
      .getByText(/events? ran: .*renewed/)
      .waitFor({ timeout: 5000 })
    expect((await c.control('/clock')).body.now.slice(0, 10)).toBe('2026-02-01')
    await ran().getByRole('list', { name: 'Events of the move' }).getByText('60123456002', { exact: false }).first().waitFor()
  })

  it('sets the clock, saying a move that ran nothing did so (and nothing else)', async () => {
    // On the Clock page the test above opened.
    await page.getByRole('textbox', { name: 'Set to' }).fill('2026-02-10T00:00:00')
    await page.getByRole('button', { name: 'Set', exact: true }).click()
    await ran().getByRole('heading', { name: 'Moved to 2026-02-10 00:00:00' }).waitFor({ timeout: 5000 })
    expect((await c.control('/clock')).body.now).toBe('2026-02-10T00:00:00.000000')
    expect(await ran().textContent()).toBe('Moved to 2026-02-10 00:00:00No event fell due.')
  })

  it('explains a 400 in Requests, live', async () => {
    await nav('Requests').click()
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Requests')
    const r = await c.api('/subscriptions/init', { msisdn: '60123456003', service_code: 'STREAMPLUS', country_code: 'MY' })
    expect(r.status).toBe(400)
    const list = page.getByRole('list', { name: 'Requests, newest first' })
    await list.getByText('Why: country_code: must be lower case (got "MY")').first().waitFor({ timeout: 2000 })
    // Opening the entry shows its bodies.
    await list.getByRole('group').first().locator('summary').click()
    await list.getByText('"country_code": "MY"').first().waitFor()
  })

  it("shows Coverage: each merchant's share of outcomes, the outcomes never seen, its findings with advice; live", async () => {
    await nav('Coverage').click()
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Coverage')
    const demo = (await c.control('/coverage?merchant=demo')).body.coverage[0]
    await page.getByRole('heading', { level: 2, name: `demo: ${demo.percent}% (${demo.covered} of ${demo.total} outcomes)` }).waitFor({ timeout: 2000 })
    // The 400 of the Requests test is a finding, with its advice.
    expect(demo.findings.map((f: { code: string }) => f.code)).toContain('INVALID_REQUEST')
    const section = page.getByRole('region', { name: /^demo: / })
    await section.getByText(FINDING_ADVICE.INVALID_REQUEST).waitFor()
    // Each outcome never seen, with how to produce it; since in the format of the other pages.
    const never = section.getByRole('list', { name: 'Outcomes demo never saw, and how to produce each' })
    await never.getByText('verify.INSUFFICIENT_FUNDS').waitFor()
    expect(await never.getByRole('listitem').filter({ hasText: 'verify.INSUFFICIENT_FUNDS' }).textContent()).toBe(
      'verify.INSUFFICIENT_FUNDS: Verify (after Init) for a number ending 201 (rule charge-201)',
    )
    expect(await section.locator('time').first().textContent()).toBe(demo.since.slice(0, 19).replace('T', ' '))
    // The finding links to its request log entry, which the Requests page opens.
    const invalid = demo.findings.find((f: { code: string }) => f.code === 'INVALID_REQUEST')
    await section.getByRole('link', { name: `request log entry ${invalid.example}` }).click()
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Requests')
    await page.locator(`[data-id="${invalid.example}"] details[open]`).waitFor({ timeout: 2000 })
    await nav('Coverage').click()
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Coverage')
    const seen = section.getByRole('table', { name: 'Outcomes seen by demo' })
    await expect.poll(() => seen.getByRole('row', { name: /^init\.otp \d+$/ }).count()).toBe(1)
    // Another merchant's first call shows up live.
    const r = await c.api('/subscriptions/init', { msisdn: '60123456004', service_code: 'NEWSDAILY', country_code: 'my' }, { key: 'sandbox-other-key' })
    expect(r.body.status).toBe('SUCCESS')
    const other = (await c.control('/coverage?merchant=other')).body.coverage[0]
    await page.getByRole('heading', { level: 2, name: `other: ${other.percent}% (1 of ${other.total} outcomes)` }).waitFor({ timeout: 2000 })
    await page
      .getByRole('region', { name: /^other: / })
      .getByText('No findings.')
      .waitFor()
  })

  describe('with the keyboard alone', () => {
    // The two tests run in order: the second starts where the first left the focus.
    it('reaches the Clock page by Tab, Enter', async () => {
      await page.goto(c.url + '/#/messages')
      await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor()
      // As a person waits for the page to settle: the move is done (focus moves to the heading then).
      await page.locator('main[aria-busy="false"]').waitFor()
      let onClock = false
      for (let i = 0; i < 20 && !onClock; i++) {
        await page.keyboard.press('Tab')
        onClock = await page.evaluate(() => document.activeElement?.textContent === 'Clock')
      }
      expect(onClock).toBe(true)
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: 'Clock', level: 1 }).waitFor()
    })

    it('advances the clock by 36h from the focused heading', async () => {
      const before = (await c.control('/clock')).body.now as string
      // The heading has the focus after a move (once the page is ready: wait for it, as a person would); the next Tab reaches "Advance by".
      await page.getByRole('textbox', { name: 'Advance by' }).waitFor()
      await expect.poll(() => page.evaluate(() => (document.activeElement?.tagName === 'H1' ? document.activeElement.textContent : null))).toBe('Clock')
      await page.keyboard.press('Tab')
      expect(await page.evaluate(() => document.activeElement?.getAttribute('placeholder'))).toBe('P1M or 36h')
      await page.keyboard.type('36h')
      await page.keyboard.press('Enter')
      await page.getByText(/^Clock moved to /).waitFor({ timeout: 5000 })
      const after = (await c.control('/clock')).body.now as string
      expect(Date.parse(after + 'Z') - Date.parse(before + 'Z')).toBe(36 * 3600 * 1000)
    })
  })

  it('fits a 390 px wide screen on every page', async () => {
    const narrow = await openPage()
    await narrow.setViewportSize({ width: 390, height: 844 })
    for (const name of ['messages', 'subscriptions', 'clock', 'requests', 'scenarios']) {
      await narrow.goto(`${c.url}/#/${name}`)
      await narrow.locator('main[aria-busy="false"]').waitFor()
      const width = await narrow.evaluate(() => document.documentElement.scrollWidth)
      expect(width, name).toBeLessThanOrEqual(390)
    }
    await narrow.goto(`${c.url}/#/messages`)
    await narrow.getByText('Send an MO (as a handset)').click()
    await narrow.getByRole('button', { name: 'Send MO' }).waitFor()
    await narrow.screenshot({ path: join(tmpdir(), 'dcb-console-390.png'), fullPage: true })
    await narrow.close()
  })

  it('adds a runtime rule on Scenarios', async () => {
    await nav('Scenarios').click()
    await page.getByRole('textbox', { name: 'Rule (JSON)' }).fill('{"id": "slow-777", "match": {"ending": "777"}, "step": "init", "effect": {"delay_ms": 10}}')
    await page.getByRole('button', { name: 'Add rule' }).click()
    await page.getByRole('button', { name: 'Remove rule slow-777' }).waitFor()
    expect((await c.control('/rules')).body.runtime.map((r: { id: string }) => r.id)).toEqual(['slow-777'])
  })

  it('removes a runtime rule on Scenarios', async () => {
    // The rule the test above added.
    await page.getByRole('button', { name: 'Remove rule slow-777' }).click()
    await page.getByText('Rule slow-777 removed.').waitFor()
    expect((await c.control('/rules')).body.runtime).toHaveLength(0)
    await page.screenshot({ path: join(tmpdir(), 'dcb-console-wide.png'), fullPage: true })
  })

  describe('Sessions', () => {
    // The tests run in order: pick team-a, read its pages, then see one of its SMS come in.
    const messages = () => page.getByRole('list', { name: 'Messages, newest first' })
    afterAll(async () => {
      // Back to the default session for the tests after.
      await nav('Sessions').click()
      await page.getByRole('button', { name: 'Show session default' }).click()
      await page.getByText('The pages now show session default.').waitFor()
    })

    it('lists a session once a request made it, to pick', async () => {
      await c.api('/subscriptions/init', { msisdn: '60123456077', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: { 'x-dcb-session': 'team-a' } })
      await page.goto(c.url + '/#/messages')
      await nav('Sessions').click()
      await page.getByRole('button', { name: 'Show session team-a' }).click()
      await page.getByText('The pages now show session team-a.').waitFor()
    })

    it("the pages show the picked session's handsets only", async () => {
      await nav('Messages').click()
      await messages()
        .getByText(/^Your Stream Plus verification code is/)
        .first()
        .waitFor()
      expect(await messages().getByText('60123456077', { exact: false }).count()).toBeGreaterThan(0)
      // The default session's handsets are not shown.
      expect(await messages().getByText('60123456001', { exact: false }).count()).toBe(0)
    })

    it('a new SMS of the picked session shows live', async () => {
      await c.api('/subscriptions/init', { msisdn: '60123456078', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: { 'x-dcb-session': 'team-a' } })
      await messages().getByText('Stream Plus → 60123456078').waitFor({ timeout: 2000 })
    })
  })

  describe('Requests', () => {
    // The tests run in order on one page: the log is made first, then read, then filtered.
    let id: string
    const list = () => page.getByRole('list', { name: 'Requests, newest first' })
    const filter = () => page.getByRole('searchbox', { name: 'Filter by MSISDN' })
    beforeAll(async () => {
      id = await c.subscribe('60123456021')
      await c.api('/subscriptions/init', { msisdn: '60123456022', service_code: 'STREAMPLUS', country_code: 'my' })
    })

    it('logs a client that gives up as client_closed', async () => {
      // A client that gives up while its answer is held back (ending 599: 9.9 s), once the OTP is out.
      const gone = new AbortController()
      const slow = fetch(`${c.url}/subscriptions/init`, {
        method: 'POST',
        headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
        body: JSON.stringify({ msisdn: '60123456599', service_code: 'STREAMPLUS', country_code: 'my' }),
        signal: gone.signal,
      }).catch(() => 'aborted')
      await c.control('/otp?msisdn=60123456599&wait=5')
      gone.abort()
      expect(await slow).toBe('aborted')
      await expect.poll(async () => (await c.control('/requests?msisdn=60123456599')).body.requests[0]?.client_closed).toBe(true)
    })

    it('a subscription links to its requests', async () => {
      await page.goto(`${c.url}/#/subscriptions/${id}`)
      await page.getByRole('link', { name: 'Its requests' }).click()
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Requests')
      const about = (await c.control(`/requests?subscription=${id}`)).body.requests as { path: string }[]
      expect(about.map((e) => e.path)).toEqual(['/subscriptions/verify', '/subscriptions/init'])
      await expect
        .poll(() => list().locator('summary').allTextContents())
        .toEqual([expect.stringMatching(/^200 POST \/subscriptions\/verify /), expect.stringMatching(/^200 POST \/subscriptions\/init /)])
    })

    it('shows sandbox time, as on the other pages: not the wall time', async () => {
      const about = (await c.control(`/requests?subscription=${id}`)).body.requests as { sandbox_time: string; time: string }[]
      const shown = await list().locator('summary time').allTextContents()
      expect(shown).toEqual(about.map((e) => e.sandbox_time.slice(0, 19).replace('T', ' ')))
      expect(shown[0]).not.toBe(about[0]!.time.slice(0, 19).replace('T', ' '))
    })

    it('marks a request whose client gave up "client gone"', async () => {
      await nav('Requests').click()
      await filter().fill('60123456599')
      await expect.poll(() => list().locator('summary').allTextContents()).toEqual([expect.stringMatching(/^200 POST \/subscriptions\/init client gone/)])
    })

    it('filters by MSISDN', async () => {
      await filter().fill('60123456022')
      await expect.poll(() => list().locator('summary').allTextContents()).toEqual([expect.stringMatching(/^200 POST \/subscriptions\/init .*60123456022/)])
    })

    it('a filtered list takes in only new requests of its MSISDN, live', async () => {
      await c.api('/subscriptions/init', { msisdn: '60123456023', service_code: 'STREAMPLUS', country_code: 'my' })
      await c.api('/subscriptions/status', { subscription_id: 'nope' })
      await c.api('/subscriptions/init', { msisdn: '60123456022', service_code: 'STREAMPLUS', country_code: 'my' })
      await expect.poll(() => list().locator('summary').count()).toBe(2)
      expect((await list().locator('summary').allTextContents()).every((t) => t.includes('60123456022'))).toBe(true)
    })
  })

  it('Requests: a clock move says what it ran (a failed renewal is seen in the request log, not only in its body)', async () => {
    const id = await c.subscribe('60123456301')
    await c.control('/clock/advance', { by: 'P1M' })
    const fresh = await openPage()
    await fresh.goto(`${c.url}/#/requests`)
    const list = fresh.getByRole('list', { name: 'Requests, newest first' })
    await expect
      .poll(() => list.locator('summary').first().textContent())
      .toMatch(/^200 POST \/_sandbox\/clock\/advance .*Ran: .*renewal_failed( 60123456301)? INSUFFICIENT_FUNDS/)
    // The subscription's timeline says which rule failed the renewal.
    await fresh.goto(`${c.url}/#/subscriptions/${id}`)
    await fresh
      .getByRole('list', { name: 'Timeline, oldest first' })
      .getByRole('listitem')
      .filter({ hasText: 'renewal charge: INSUFFICIENT_FUNDS' })
      .getByText('rule renewal-301 (ending 301): renewal INSUFFICIENT_FUNDS', { exact: true })
      .waitFor()
    await fresh.close()
  })

  it("shows a subscription's timeline as one list, oldest first: a retry that succeeded (EXPIRED → ACTIVE), a superseded one", async () => {
    const retried = await c.subscribe('60123459302')
    const mo = () => c.control('/mo', { msisdn: '60133459302', short_code: '32123', text: 'STREAM' })
    const old = (await mo()).body.subscription_id
    await c.control('/clock/advance', { by: 'P1M' })
    const again = (await mo()).body.subscription_id
    await c.control('/clock/advance', { by: 'P1D' })
    const api = (await c.control(`/subscriptions/${retried}`)).body
    const fresh = await openPage()
    const items = async (id: string) => {
      await fresh.goto(`${c.url}/#/subscriptions/${id}`)
      const list = fresh.getByRole('list', { name: 'Timeline, oldest first' })
      await list.waitFor()
      return list.getByRole('listitem').allTextContents()
    }
    const shown = await items(retried)
    // The server's timeline, in its order, one item each.
    expect(shown).toHaveLength(api.timeline.length)
    const times = shown.map((t) => t.slice(0, 19))
    expect(times).toEqual(api.timeline.map((e: any) => e.at.slice(0, 19).replace('T', ' ')))
    expect(times).toEqual([...times].sort())
    const states = shown.filter((t) => t.includes(' → ') || t.includes('subscribed: '))
    expect(states.map((t) => t.slice(19).replace(/^state/, ''))).toEqual([
      'subscribed: ACTIVE (Verify)',
      'ACTIVE → EXPIRED (renewal failed)',
      'EXPIRED → ACTIVE (carrier retry succeeded)',
    ])
    const superseded = await items(old)
    expect(superseded[superseded.length - 1]).toContain(`EXPIRED → EXPIRED (superseded, carrier retries dropped by ${again})`)
    await fresh.getByRole('link', { name: again }).click()
    await fresh.getByRole('heading', { level: 1, name: `Subscription ${again}` }).waitFor()
    expect(await fresh.locator('#cancel-note').textContent()).toBe('Cancel acts as the carrier: the subscriber gets the cancellation SMS.')
    await fresh.goto(`${c.url}/#/subscriptions/${old}`)
    await expect
      .poll(() => fresh.locator('#cancel-note').textContent())
      .toBe(`Nothing to cancel: this subscription expired and its carrier retries were dropped when subscription ${again} superseded it.`)
    await fresh.close()
  })

  it('shows no stray text on any page (the Requests page showed "null" under its description)', async () => {
    for (const name of ['messages', 'subscriptions', 'clock', 'requests', 'scenarios', 'coverage']) {
      await page.goto(`${c.url}/#/${name}`)
      await page.locator('main[aria-busy="false"]').waitFor()
      // Every part of a page is an element: a bare text node directly in main is a part that was absent.
      const bare = await page.locator('main').evaluate((m) => [...m.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent))
      expect(bare, name).toEqual([])
    }
  })

  // Just before the final checks: it starts the default session over at a clock of its own.
  it('disables Cancel, saying why, on a subscription the server would refuse to cancel (EXPIRED with no retry left), not on one the carrier still retries', async () => {
    await c.control('/reset', { clock: '2026-01-31T09:00:00', frozen: true })
    // Ending 303: every renewal and retry fails; the default carrier retries once, a day later.
    const ended = await c.subscribe('60123457303')
    await c.control('/clock/advance', { by: 'P1M' })
    const retrying = await c.subscribe('60123458303')
    await c.control('/clock/advance', { by: 'P1M' })
    expect((await c.control(`/subscriptions/${ended}`)).body).toMatchObject({ status: 'EXPIRED', next_retry_dt: null, cancelable: false })
    expect((await c.control(`/subscriptions/${retrying}`)).body).toMatchObject({ status: 'EXPIRED', next_retry_dt: expect.any(String), cancelable: true })

    const cancel = page.getByRole('button', { name: 'Cancel', exact: true })
    const note = page.locator('#cancel-note')
    /** Opens a subscription's page; answers once its Cancel button is there (the page is filled in after its heading). */
    const open = async (id: string) => {
      await page.goto(`${c.url}/#/subscriptions/${id}`)
      await page.getByRole('heading', { level: 1, name: `Subscription ${id}` }).waitFor()
      await cancel.waitFor()
    }
    await open(ended)
    expect(await cancel.isDisabled()).toBe(true)
    expect(await note.textContent()).toBe('Nothing to cancel: this subscription expired and the carrier has no retry left.')
    expect(await cancel.getAttribute('title')).toBe(await note.textContent())
    // As the server answers a cancel of it.
    expect((await c.control(`/subscriptions/${ended}/cancel`, {})).body.error).toBe('ALREADY_EXPIRED')

    await open(retrying)
    expect(await cancel.isEnabled()).toBe(true)
    expect(await note.textContent()).toBe('Cancel acts as the carrier: the subscriber gets the cancellation SMS.')
    expect(await cancel.getAttribute('title')).toBeNull()
    await cancel.click()
    await page.getByText(`Subscription ${retrying} canceled by the carrier.`).waitFor({ timeout: 5000 })
    expect((await c.control(`/subscriptions/${retrying}`)).body).toMatchObject({ status: 'CANCELED', cancelable: false })
    await expect.poll(() => note.textContent()).toBe('Nothing to cancel: this subscription was canceled already.')
    expect(await cancel.isDisabled()).toBe(true)
  })

  it('made no request off the server', () => {
    expect(con.problems.filter((p) => p.startsWith('off origin: '))).toEqual([])
  })

  it('logged no error (nor any other problem)', () => {
    expect(con.problems).toEqual([])
  })
})
