/**
 * The empty pages' commands (copied and run, they make the first entry), the Subscriptions table
 * (status badges, the failed-renewal mark) and a subscription's page (its timeline, then Cancel), in chromium.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { useConsole } from './open-console.js'

const run = promisify(execFile)
const con = useConsole()
const nav = (name: string) => con.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true })
const table = () => con.page.getByRole('region', { name: 'Subscriptions table (scrolls sideways)' })
const row = (msisdn: string) =>
  table()
    .getByRole('row')
    .filter({ has: con.page.getByRole('link', { name: new RegExp(`^${msisdn} · `) }) })

/** Runs a command the console gave (`dcb ...`) with this checkout's CLI, with no DCB_* variable of ours. */
async function runCopied(command: string) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DCB_')))
  const [dcb, ...args] = command.split(' ')
  expect(dcb).toBe('dcb')
  return run(process.execPath, ['bin/dcb.js', ...args], { env })
}

/** The command an empty page offers, read from the clipboard after its Copy button. */
async function copied(where: ReturnType<typeof con.page.locator>) {
  await where.getByRole('button', { name: /^Copy dcb / }).click()
  const command = await con.page.evaluate(() => navigator.clipboard.readText())
  expect(await where.locator('code').textContent()).toBe(command)
  return command
}

describe('empty pages in chromium', () => {
  it('say how to make the first entry: a command for this server, which run makes it', async () => {
    const origin = new URL(con.c.url).origin
    await con.page.goto(`${con.c.url}/#/coverage`)
    await con.page.locator('#live', { hasText: /^Live$/ }).waitFor()
    const coverage = con.page.getByRole('main').locator('.hint')
    await coverage.getByText(/^No merchant has traffic in this session yet\./).waitFor()
    expect(await copied(coverage)).toBe(`dcb flow --msisdn 60123456001 --service STREAMPLUS --country my --base-url ${origin}`)

    await con.page.goto(`${con.c.url}/#/sessions`)
    const sessions = con.page.getByRole('main').locator('.hint')
    await sessions.getByText(/^No other session yet\./).waitFor()
    const other = await copied(sessions)
    expect(other).toBe(`dcb init --msisdn 60123456001 --service STREAMPLUS --country my --session team-a --base-url ${origin}`)

    await nav('Subscriptions').click()
    const hint = con.page.getByRole('main').locator('.hint')
    await hint.getByText(/^No subscriptions yet\./).waitFor()
    expect(await table().isVisible()).toBe(false)
    const flow = await copied(hint)
    await runCopied(flow)
    // Live: the row of the subscription it made, and the hint gone.
    await row('60123456001').getByText('ACTIVE', { exact: true }).waitFor({ timeout: 5000 })
    expect(await hint.count()).toBe(0)
    // The session command starts session team-a: Sessions is offered.
    await runCopied(other)
    expect((await con.c.control('/sessions')).body.sessions.map((s: { name: string }) => s.name)).toContain('team-a')
  })
})

describe('Subscriptions in chromium', () => {
  it('colours each status, and marks the subscription whose renewal failed', async () => {
    await con.c.subscribe('60123456002')
    // Ending 301: its first renewal fails (INSUFFICIENT_FUNDS), the carrier retries a day later.
    await con.c.subscribe('60123456301')
    const canceled = await con.c.subscribe('60123456003')
    await con.c.control(`/subscriptions/${canceled}/cancel`, {})
    await con.c.control('/clock/advance', { by: 'P1M' })
    await row('60123456301').getByText('EXPIRED', { exact: true }).waitFor({ timeout: 5000 })
    const badge = (msisdn: string) => row(msisdn).locator('td.badges .tag').first()
    expect(await badge('60123456001').getAttribute('class')).toBe('tag ok')
    expect(await badge('60123456301').getAttribute('class')).toBe('tag warn')
    expect(await badge('60123456003').getAttribute('class')).toBe('tag off')
    // Told apart at a glance: three different colours.
    const colours = new Map(
      await table().evaluate((t) => [...t.querySelectorAll('td.badges .tag:first-child')].map((e) => [e.textContent, getComputedStyle(e).color] as const)),
    )
    expect([...colours.keys()].sort()).toEqual(['ACTIVE', 'CANCELED', 'EXPIRED'])
    expect(new Set(colours.values()).size).toBe(3)
    // Its links are the console's, not the browser's default underlined blue.
    // (Read in one go: a live reload replaces the rows.)
    const link = await table().evaluate((t) => {
      const a = t.querySelector('tbody a')!
      return [getComputedStyle(a).textDecorationLine, getComputedStyle(a).color]
    })
    expect(link).toEqual(['none', 'rgb(31, 95, 168)'])
    // The mark: on the failed renewal only, with its outcome and the carrier's retry.
    const failed = (await con.c.control('/subscriptions?msisdn=60123456301')).body.subscriptions[0]
    expect(failed.next_retry_dt).toBeTruthy()
    const mark = row('60123456301').getByText('renewal failed', { exact: true })
    expect(await mark.getAttribute('class')).toBe('tag bad')
    expect(await row('60123456301').locator('.why').textContent()).toBe(`INSUFFICIENT_FUNDS · retry ${failed.next_retry_dt.slice(0, 19).replace('T', ' ')}`)
    expect(await table().locator('tr[data-renewal="failed"]').count()).toBe(1)
    for (const m of ['60123456001', '60123456002', '60123456003'])
      expect(
        await row(m)
          .getByText(/failed/)
          .count(),
        m,
      ).toBe(0)
  })

  it('opens a subscription from the table with the keyboard alone', async () => {
    await nav('Requests').click()
    await nav('Subscriptions').click()
    await row('60123456301').waitFor()
    // The move put the focus on the heading: Tab goes on from there.
    await expect.poll(() => con.page.evaluate(() => document.activeElement?.tagName)).toBe('H1')
    let onLink = false
    for (let i = 0; i < 30 && !onLink; i++) {
      await con.page.keyboard.press('Tab')
      onLink = await con.page.evaluate(() => document.activeElement?.textContent === '60123456301')
    }
    expect(onLink).toBe(true)
    // A live reload (another subscription) keeps the focus where it was.
    await con.c.subscribe('60123456004')
    await row('60123456004').waitFor()
    expect(await con.page.evaluate(() => document.activeElement?.textContent)).toBe('60123456301')
    await con.page.keyboard.press('Enter')
    await con.page.getByRole('heading', { level: 1, name: /^Subscription / }).waitFor()
    await con.page.getByRole('list', { name: 'Timeline, oldest first' }).waitFor()
  })

  it('puts Cancel below the timeline; a disabled one looks it and says why beside it', async () => {
    const [canceled] = (await con.c.control('/subscriptions?msisdn=60123456003')).body.subscriptions
    const [active] = (await con.c.control('/subscriptions?msisdn=60123456002')).body.subscriptions
    const cancel = con.page.getByRole('button', { name: 'Cancel', exact: true })
    const look = () =>
      cancel.evaluate((b) => {
        const s = getComputedStyle(b)
        return { background: s.backgroundColor, color: s.color, border: s.borderStyle, cursor: s.cursor }
      })
    await con.page.goto(`${con.c.url}/#/subscriptions/${active.subscription_id}`)
    await cancel.waitFor()
    const timeline = con.page.getByRole('list', { name: 'Timeline, oldest first' })
    // After the whole story it acts on, in the page's order.
    expect(await timeline.evaluate((t, b) => Boolean(t.compareDocumentPosition(b!) & Node.DOCUMENT_POSITION_FOLLOWING), await cancel.elementHandle())).toBe(
      true,
    )
    const enabled = await look()
    expect(await cancel.isEnabled()).toBe(true)

    await con.page.goto(`${con.c.url}/#/subscriptions/${canceled.subscription_id}`)
    await con.page.getByRole('heading', { level: 1, name: `Subscription ${canceled.subscription_id}` }).waitFor()
    await expect.poll(() => cancel.isDisabled()).toBe(true)
    const disabled = await look()
    expect(disabled.background).not.toBe(enabled.background)
    expect(disabled.color).not.toBe(enabled.color)
    expect(disabled.border).toBe('dashed')
    expect(disabled.cursor).toBe('not-allowed')
    // Why, beside it: on the same line, read with it.
    const note = con.page.locator('#cancel-note')
    expect(await note.textContent()).toBe('Nothing to cancel: this subscription was canceled already.')
    expect(await cancel.getAttribute('aria-describedby')).toBe('cancel-note')
    const [b, n] = [(await cancel.boundingBox())!, (await note.boundingBox())!]
    expect(n.x).toBeGreaterThan(b.x + b.width - 1)
    expect(Math.abs(n.y + n.height / 2 - (b.y + b.height / 2))).toBeLessThan(b.height)
  })

  it('fits 390 px on every page, the empty ones too: the table scrolls inside its box and says so', async () => {
    const narrow = await con.open(390)
    const [one] = (await con.c.control('/subscriptions?msisdn=60123456301')).body.subscriptions
    for (const name of ['requests', 'messages', 'subscriptions', `subscriptions/${one.subscription_id}`, 'clock', 'scenarios', 'coverage', 'sessions']) {
      await narrow.goto(`${con.c.url}/#/${name}`)
      await narrow.locator('main[aria-busy="false"]').waitFor()
      expect(await narrow.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(390)
    }
    await narrow.goto(`${con.c.url}/#/subscriptions`)
    const region = narrow.getByRole('region', { name: 'Subscriptions table (scrolls sideways)' })
    await region.getByRole('link', { name: /^60123456301 · / }).waitFor()
    expect(await region.evaluate((t) => t.scrollWidth > t.clientWidth)).toBe(true)
    await region.getByText('Scroll sideways for more →').waitFor({ state: 'visible' })
    // An empty session's pages: the command wraps at spaces, inside the screen.
    await narrow.evaluate(() => sessionStorage.setItem('dcb-session', 'nothing-yet'))
    for (const name of ['requests', 'messages', 'subscriptions', 'coverage']) {
      await narrow.goto(`${con.c.url}/#/${name}`)
      await narrow.reload()
      await narrow.locator('main[aria-busy="false"]').waitFor()
      const code = narrow.getByRole('main').locator('.hint code')
      expect(await code.textContent(), name).toMatch(/ --session nothing-yet$/)
      expect(await narrow.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(390)
      const words = await code.locator('.word').evaluateAll((ws) => ws.map((w) => w.getClientRects().length))
      expect(
        words.every((n) => n === 1),
        name,
      ).toBe(true)
    }
    await narrow.close()
  })

  it('made no request off the server and logged no error', () => {
    expect(con.problems).toEqual([])
  })
})
