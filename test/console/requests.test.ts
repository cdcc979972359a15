/** The Requests page (the console's landing page), the shared MSISDN search and the stopped-server banner, in chromium. */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { useConsole } from './open-console.js'

const run = promisify(execFile)
const con = useConsole()
const nav = (name: string) => con.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true })
const list = () => con.page.getByRole('list', { name: 'Requests, newest first' })
const INIT = { service_code: 'STREAMPLUS', country_code: 'my' }

describe('Requests in chromium', () => {
  it('is the landing page, and empty it says how to make the first entry', async () => {
    await con.page.goto(`${con.c.url}/`)
    await expect.poll(() => con.page.getByRole('heading', { level: 1 }).textContent()).toBe('Requests')
    expect(await nav('Requests').getAttribute('aria-current')).toBe('page')
    await list().getByText('No requests yet.').waitFor()
    // For this server: its address, as it is not the default one.
    const command = `dcb init --msisdn 60123456001 --service STREAMPLUS --country my --base-url ${new URL(con.c.url).origin}`
    await list()
      .getByRole('button', { name: `Copy ${command}` })
      .waitFor()
  })

  it('colours badges by outcome: a FAIL envelope is a failure whatever its HTTP status; Failures only hides successes', async () => {
    await con.page.locator('#live', { hasText: /^Live$/ }).waitFor()
    await con.c.subscribe('60123456002')
    const again = await con.c.api('/subscriptions/init', { msisdn: '60123456002', ...INIT })
    expect(again.body.message).toBe('ALREADY_SUBSCRIBED')
    const barred = await con.c.api('/subscriptions/init', { msisdn: '60123456107', ...INIT })
    expect(barred.body.message).toBe('BARRED')
    const log = (await con.c.control('/requests')).body.requests as { id: number; http_status: number; response: { status?: string } }[]
    await expect.poll(() => list().locator('li[data-id]').count()).toBe(log.length)
    for (const e of log) {
      const want = e.http_status >= 400 ? 'bad' : e.response.status === 'FAIL' ? 'warn' : 'ok'
      expect(await list().locator(`li[data-id="${e.id}"] summary .tag`).first().getAttribute('class'), String(e.id)).toBe(`tag ${want}`)
    }
    // ALREADY_SUBSCRIBED and BARRED are not green, whatever HTTP status they were answered with.
    for (const code of ['ALREADY_SUBSCRIBED', 'BARRED'])
      expect(await list().locator('li', { hasText: code }).locator('summary .tag').first().getAttribute('class')).not.toBe('tag ok')
    const failed = log.filter((e) => e.http_status >= 400 || e.response.status === 'FAIL')
    expect(failed.length).toBeGreaterThanOrEqual(2)
    expect(failed.length).toBeLessThan(log.length)
    await con.page.getByRole('checkbox', { name: 'Failures only' }).check()
    await expect.poll(() => list().locator('li[data-id]').count()).toBe(failed.length)
    await con.page.getByRole('checkbox', { name: 'Failures only' }).uncheck()
    await expect.poll(() => list().locator('li[data-id]').count()).toBe(log.length)
  })

  it('keeps the MSISDN searched for in the URL, across Requests, Messages and Subscriptions', async () => {
    await con.page.getByRole('searchbox', { name: 'Filter by MSISDN' }).fill('60123456002')
    await expect.poll(() => con.page.url()).toMatch(/#\/requests\?msisdn=60123456002$/)
    const about = (await con.c.control('/requests?msisdn=60123456002')).body.requests.length
    await expect.poll(() => list().locator('li[data-id]').count()).toBe(about)
    await nav('Messages').click()
    await expect.poll(() => con.page.getByRole('heading', { level: 1 }).textContent()).toBe('Messages')
    expect(con.page.url()).toMatch(/#\/messages\?msisdn=60123456002$/)
    expect(await con.page.getByRole('searchbox', { name: 'Filter by MSISDN' }).inputValue()).toBe('60123456002')
    const messages = (await con.c.control('/messages?msisdn=60123456002')).body.messages.length
    expect(messages).toBeGreaterThan(0)
    await expect.poll(() => con.page.getByRole('list', { name: 'Messages, newest first' }).locator('li[data-id]').count()).toBe(messages)
    await nav('Subscriptions').click()
    await expect.poll(() => con.page.getByRole('heading', { level: 1 }).textContent()).toBe('Subscriptions')
    expect(await con.page.getByRole('searchbox', { name: 'Filter by MSISDN' }).inputValue()).toBe('60123456002')
    await con.page.getByRole('link', { name: /60123456002 · STREAMPLUS · ACTIVE/ }).waitFor()
    expect(await con.page.getByRole('link', { name: /60123456107/ }).count()).toBe(0)
    // Cleared, it is gone from the URL and the links.
    await con.page.getByRole('searchbox', { name: 'Filter by MSISDN' }).fill('')
    await expect.poll(() => nav('Requests').getAttribute('href')).toBe('#/requests')
  })

  it("shows a merchant call's request headers and copies it as curl, which repeats the call", async () => {
    await nav('Requests').click()
    await con.c.api('/subscriptions/init', { msisdn: '60123456031', ...INIT }, { headers: { 'user-agent': 'h11-test' } })
    const entry = (await con.c.control('/requests?msisdn=60123456031')).body.requests[0]
    expect(entry.headers['api-key']).toBe('sandbox-demo-key')
    expect(entry.headers['user-agent']).toBe('h11-test')
    const item = list().locator(`li[data-id="${entry.id}"]`)
    await item.locator('summary').click()
    await item.getByText('api-key: sandbox-demo-key').first().waitFor()
    await item.getByRole('button', { name: `Copy request ${entry.id} as curl` }).click()
    await con.page.getByText(/^Copied: curl /).waitFor()
    const command = await con.page.evaluate(() => navigator.clipboard.readText())
    expect(command).toContain("'api-key: sandbox-demo-key'")
    // Run, the copied command makes the same call again: a new entry, the same path and body.
    const out = await run('sh', ['-c', command])
    expect(JSON.parse(out.stdout).status).toBe('SUCCESS')
    const [repeat] = (await con.c.control('/requests?msisdn=60123456031')).body.requests
    expect(repeat.id).toBeGreaterThan(entry.id)
    expect([repeat.method, repeat.path, repeat.request]).toEqual([entry.method, entry.path, entry.request])
  })

  it('masks an API key the package does not ship: the curl reads it from $DCB_API_KEY', async () => {
    const refused = await con.c.api('/subscriptions/init', { msisdn: '60123456032', ...INIT }, { key: 'my-secret-key' })
    expect(refused.status).toBe(401)
    const entry = (await con.c.control('/requests?limit=1')).body.requests[0]
    expect(entry.headers['api-key']).toBe('(masked)')
    expect(JSON.stringify(entry)).not.toContain('my-secret-key')
    const item = list().locator(`li[data-id="${entry.id}"]`)
    await item.locator('summary').click()
    const command = (await item.locator('pre.curl').textContent())!
    expect(command).toContain('-H "api-key: $DCB_API_KEY"')
    // The refusal came before the body was read, so the log holds none: the repeat is the same refused call.
    const out = await run('sh', ['-c', command], { env: { ...process.env, DCB_API_KEY: 'my-secret-key' } })
    expect(JSON.parse(out.stdout).status_code, command).toBe(401)
    const repeat = (await con.c.control('/requests?limit=1')).body.requests[0]
    expect(repeat.id).toBeGreaterThan(entry.id)
    expect([repeat.path, repeat.http_status, repeat.headers['api-key']]).toEqual([entry.path, 401, '(masked)'])
  })

  it('says plainly at the top when the server stops answering', async () => {
    const banner = con.page.getByRole('alert')
    expect(await banner.isVisible()).toBe(false)
    await con.c.close()
    await banner.getByText('The server is not answering: start it with dcb serve.').waitFor({ timeout: 15_000 })
    // A control call then fails with the same plain words, not a browser's "Failed to fetch".
    await con.page.getByRole('checkbox', { name: 'Failures only' }).waitFor()
    await nav('Clock').click()
    await con.page.locator('main[aria-busy="false"]').waitFor()
    await con.page.getByRole('main').getByText('The server is not answering: start it with dcb serve.').waitFor()
  })

  it('made no request off the server and logged no error (the stopped server aside)', () => {
    expect(con.problems.filter((p) => !/ERR_CONNECTION_REFUSED|events/.test(p))).toEqual([])
  })
})
