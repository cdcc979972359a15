/** Scenarios (endings on one line, a sign that the table scrolls, an example MSISDN per row) and Sessions (plurals, counts that agree), in chromium. */
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useConsole } from './open-console.js'

const con = useConsole()

/** How many lines each ending cell's text takes. */
const endingLines = (p: Page) =>
  p.locator('td.ending').evaluateAll((cells) =>
    cells.map((td) => {
      const range = document.createRange()
      range.selectNodeContents(td.firstChild!)
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size
    }),
  )

describe('Scenarios in chromium', () => {
  it('keeps every ending on one line at 1280 px', async () => {
    await con.page.goto(`${con.c.url}/#/scenarios`)
    await con.page.locator('main[aria-busy="false"]').waitFor()
    const lines = await endingLines(con.page)
    expect(lines.length).toBeGreaterThan(10)
    expect(lines.every((n) => n === 1)).toBe(true)
  })

  it('shows no sideways sign when the table fits', async () => {
    // On the page the test above opened at 1280 px.
    await con.page.locator('main[aria-busy="false"]').waitFor()
    expect(await con.page.getByText('Scroll sideways for more →').isVisible()).toBe(false)
  })

  it('gives each ending rule an example MSISDN to copy, which the rule matches', async () => {
    const row = con.page.getByRole('row').filter({ hasText: 'Init fails: BARRED' })
    await row.getByRole('cell', { name: /^60123456107/ }).waitFor()
    await row.getByRole('button', { name: 'Copy 60123456107' }).click()
    expect(await con.page.evaluate(() => navigator.clipboard.readText())).toBe('60123456107')
    const init = await con.c.api('/subscriptions/init', { msisdn: '60123456107', service_code: 'STREAMPLUS', country_code: 'my' })
    expect(init.body.message).toBe('BARRED')
  })

  describe('at 390 px', () => {
    let narrow: Page
    const table = () => narrow.getByRole('region', { name: 'Scenarios table (scrolls sideways)' })
    beforeAll(async () => {
      narrow = await con.open(390)
      await narrow.goto(`${con.c.url}/#/scenarios`)
      await narrow.locator('main[aria-busy="false"]').waitFor()
    })
    afterAll(() => narrow.close())

    it('the page does not scroll sideways', async () => {
      expect(await narrow.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    })

    it('the table scrolls sideways, saying so', async () => {
      expect(await table().evaluate((t) => t.scrollWidth > t.clientWidth)).toBe(true)
      await table().getByText('Scroll sideways for more →').waitFor({ state: 'visible' })
    })

    it('the keyboard scrolls the table: the region takes the focus', async () => {
      await table().focus()
      await narrow.keyboard.press('ArrowRight')
      await expect.poll(() => table().evaluate((t) => t.scrollLeft)).toBeGreaterThan(0)
    })
  })
})

describe('Sessions in chromium', () => {
  // The two tests run in order: the first makes the sessions the second reads.
  let counted = 0
  it('says 1 subscription, 1 request, 1 message in the singular', async () => {
    const headers = { 'x-dcb-session': 'one' }
    const init = await con.c.api('/subscriptions/init', { msisdn: '60123456051', service_code: 'STREAMPLUS', country_code: 'my' }, { headers })
    expect(init.body.status).toBe('SUCCESS')
    // A renewal adds a charge notice, which Messages lists: Sessions must count it too.
    const two = { 'x-dcb-session': 'two' }
    const otp = async (m: string) => (await con.c.control(`/otp?msisdn=${m}`, undefined, { headers: two })).body.otp
    const i2 = await con.c.api('/subscriptions/init', { msisdn: '60123456052', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: two })
    await con.c.api('/subscriptions/verify', { verif_request_id: i2.body.payload.verif_request_id, otp: await otp('60123456052') }, { headers: two })
    await con.c.control('/clock/advance', { by: 'P1M' }, { headers: two })
    await con.page.goto(`${con.c.url}/#/sessions`)
    const one = con.page.getByRole('list', { name: 'Sessions' }).getByRole('listitem').filter({ hasText: /^one/ })
    await one.getByText('0 subscriptions').waitFor()
    await one.getByText('1 message', { exact: true }).waitFor()
    await one.getByText('1 request', { exact: true }).waitFor()
    const twoItem = con.page.getByRole('list', { name: 'Sessions' }).getByRole('listitem').filter({ hasText: /^two/ })
    await twoItem.getByText('1 subscription', { exact: true }).waitFor()
    counted = Number((await twoItem.getByText(/^\d+ messages?$/).textContent())!.split(' ')[0])
  })

  it('counts the messages the Messages page lists', async () => {
    await con.page.getByRole('button', { name: 'Show session two' }).click()
    await con.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Messages', exact: true }).click()
    const list = con.page.getByRole('list', { name: 'Messages, newest first' })
    await list.locator('li[data-kind="renewal"]').first().waitFor()
    expect(await list.locator('li[data-id]').count()).toBe(counted)
  })

  it('logged no problem (no request off the server, no error)', () => {
    expect(con.problems).toEqual([])
  })
})
