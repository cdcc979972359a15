/**
 * A server and Debian's chromium (playwright-core) for one console test file: every request the
 * pages make must stay on the server's origin, and the browser console must stay free of errors.
 * `useConsole()` opens them before the file's tests and closes them after.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { startClient, type Client } from '../helpers.js'

const ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface Console {
  c: Client
  context: BrowserContext
  /** Console errors, page errors and requests off the server's origin, as they happened. */
  problems: string[]
  open(width?: number): Promise<Page>
  close(): Promise<void>
}

export async function openConsole(opts: Parameters<typeof startClient>[0] = { clock: '2026-01-01T00:00:00' }): Promise<Console> {
  const c = await startClient(opts)
  const profile = mkdtempSync(join(tmpdir(), 'dcb-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(c.url).origin })
  const problems: string[] = []
  const origin = new URL(c.url).origin
  await context.route('**/*', (route) => {
    const url = route.request().url()
    if (new URL(url).origin === origin) return route.continue()
    problems.push(`off origin: ${url}`)
    return route.abort()
  })
  const open = async (width = 1280) => {
    const p = await context.newPage()
    await p.setViewportSize({ width, height: 900 })
    p.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()} (${m.location().url})`)
    })
    p.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
    return p
  }
  return {
    c,
    context,
    problems,
    open,
    close: async () => {
      await context.close()
      // A test may have stopped the server already (the banner of a stopped server).
      await c.close().catch(() => {})
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

/** A console (and its first tab, `page`) for the tests of one file: opened before them, closed after. */
export interface UsedConsole extends Console {
  /** The tab opened before the tests (`width` px wide). */
  page: Page
}

export function useConsole(opts?: Parameters<typeof openConsole>[0], width = 1280): UsedConsole {
  let con: Console | undefined
  let page: Page | undefined
  const ready = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the console is opened in beforeAll: use it inside a test')
    return v
  }
  beforeAll(async () => {
    con = await openConsole(opts)
    page = await con.open(width)
  }, 60_000)
  afterAll(async () => {
    await con?.close()
  })
  return {
    get c() {
      return ready(con).c
    },
    get context() {
      return ready(con).context
    },
    get problems() {
      return ready(con).problems
    },
    get page() {
      return ready(page)
    },
    open: (w) => ready(con).open(w),
    close: () => ready(con).close(),
  }
}
