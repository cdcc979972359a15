/** Messages (OTP codes, the kind filter, the folded MO form) and Clock (quick moves, errors by their field), in chromium. */
import { describe, expect, it } from 'vitest'
import { useConsole } from './open-console.js'

const con = useConsole()
const heading = () => con.page.getByRole('heading', { level: 1 }).textContent()
const messages = () => con.page.getByRole('list', { name: 'Messages, newest first' })

describe('Messages in chromium', () => {
  it('empty, says how to make the first message', async () => {
    await con.page.goto(`${con.c.url}/#/messages`)
    await messages().getByText('No messages yet.').waitFor()
    await messages()
      .getByRole('button', { name: /^Copy dcb init / })
      .waitFor()
  })

  it('lists first, highlights an OTP code with a copy button', async () => {
    await con.page.locator('#live', { hasText: /^Live$/ }).waitFor()
    await con.c.api('/subscriptions/init', { msisdn: '60123456041', service_code: 'STREAMPLUS', country_code: 'my' })
    const otp = (await con.c.control('/otp?msisdn=60123456041')).body.otp as string
    await messages().locator('mark.otp', { hasText: otp }).waitFor({ timeout: 2000 })
    // The list comes before the MO form, which is folded away.
    const order = await con.page.locator('main').evaluate((m) => [...m.children].map((c) => c.tagName.toLowerCase()))
    expect(order.indexOf('ol')).toBeLessThan(order.indexOf('details'))
    expect(await con.page.getByRole('button', { name: 'Send MO' }).isVisible()).toBe(false)
    await messages()
      .getByRole('button', { name: `Copy OTP ${otp}` })
      .click()
    expect(await con.page.evaluate(() => navigator.clipboard.readText())).toBe(otp)
  })

  it('filters by kind: renewal notices hidden', async () => {
    await con.c.subscribe('60123456042')
    await con.c.control('/clock/advance', { by: 'P1M' })
    await con.page.reload()
    await messages().locator('li[data-kind="renewal"]').first().waitFor()
    await con.page.getByRole('combobox', { name: 'Kind' }).selectOption({ label: 'All but renewal notices' })
    await expect.poll(() => messages().locator('li[data-kind="renewal"]').count()).toBe(0)
    expect(await messages().locator('li[data-kind="otp"]').count()).toBeGreaterThan(0)
    await con.page.getByRole('combobox', { name: 'Kind' }).selectOption({ label: 'renewal' })
    await expect.poll(() => messages().locator('li[data-kind]:not([data-kind="renewal"])').count()).toBe(0)
  })

  it('reports only the latest outcome of the MO form', async () => {
    await con.page.getByText('Send an MO (as a handset)').click()
    const form = con.page.getByRole('form', { name: 'Send an MO' })
    await form.getByRole('textbox', { name: 'MSISDN' }).fill('not-a-number')
    await form.getByRole('textbox', { name: 'Short code' }).fill('32123')
    await form.getByRole('textbox', { name: 'Text' }).fill('HELP')
    await form.getByRole('button', { name: 'Send MO' }).click()
    const result = con.page.locator('details.fold p[role="status"]')
    await result.getByText(/^MO not sent: /).waitFor()
    await form.getByRole('textbox', { name: 'MSISDN' }).fill('60123456042')
    await form.getByRole('textbox', { name: 'Text' }).fill('HELP')
    await form.getByRole('button', { name: 'Send MO' }).click()
    await result.getByText(/^MO sent: /).waitFor()
    expect(await result.textContent()).not.toMatch(/not sent/)
    expect(await con.page.locator('#status').textContent()).toBe('')
  })
})

describe('Clock in chromium', () => {
  it('moves by +1h, +1d, +1M and to the next event', async () => {
    await con.page.goto(`${con.c.url}/#/clock`)
    await expect.poll(heading).toBe('Clock')
    const group = con.page.getByRole('group', { name: 'Quick moves' })
    for (const [label, ms] of [
      ['+1h', 3_600_000],
      ['+1d', 86_400_000],
    ] as const) {
      const before = Date.parse(`${(await con.c.control('/clock')).body.now.slice(0, 19)}Z`)
      await group.getByRole('button', { name: label, exact: true }).click()
      await con.page.getByText(/^Clock moved to /).waitFor()
      await expect.poll(async () => Date.parse(`${(await con.c.control('/clock')).body.now.slice(0, 19)}Z`) - before).toBeGreaterThanOrEqual(ms)
      await con.page.locator('#status').evaluate((s) => (s.textContent = ''))
    }
    const month = (await con.c.control('/clock')).body.now.slice(5, 7)
    await group.getByRole('button', { name: '+1M', exact: true }).click()
    await expect.poll(async () => (await con.c.control('/clock')).body.now.slice(5, 7)).not.toBe(month)
    const next = (await con.c.control('/clock')).body.next_event_dt as string
    expect(next).toBeTruthy()
    await group.getByRole('button', { name: 'To the next event' }).click()
    await expect.poll(async () => (await con.c.control('/clock')).body.now.slice(0, 19)).toBe(next.slice(0, 19))
  })

  it("offers a valid future time as Set to's example, and shows an error beside its field", async () => {
    const set = con.page.getByRole('textbox', { name: 'Set to' })
    const now = (await con.c.control('/clock')).body.now as string
    // The page takes in the last move's answer after the server made it: wait for its example to follow.
    await expect.poll(async () => Date.parse(`${await set.getAttribute('placeholder')}Z`)).toBeGreaterThan(Date.parse(`${now.slice(0, 19)}Z`))
    const example = (await set.getAttribute('placeholder'))!
    await set.fill(example)
    await con.page.getByRole('button', { name: 'Set', exact: true }).click()
    await expect.poll(async () => (await con.c.control('/clock')).body.now.slice(0, 19)).toBe(example)
    await con.page.getByRole('textbox', { name: 'Advance by' }).fill('soon')
    await con.page.getByRole('button', { name: 'Advance', exact: true }).click()
    const error = con.page.locator('#advance-error')
    await error.getByText(/./).waitFor()
    expect(await con.page.getByRole('textbox', { name: 'Advance by' }).getAttribute('aria-describedby')).toBe('advance-error')
    expect(await con.page.locator('#set-error').textContent()).toBe('')
  })

  it('made no request off the server and logged no error (the two 400s asked for aside)', () => {
    const asked = /status of 400 .*\/_sandbox\/(mo|clock\/advance)\)$/
    expect(con.problems.filter((p) => !asked.test(p))).toEqual([])
  })
})
