import { mkdirSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { createClient, createSandbox, mergeCoverage, type CoverageAnswer, type Sandbox, type SandboxClient, type SandboxSession } from 'dcb-sandbox'
import { sandboxHandlers } from 'dcb-sandbox/msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { CarrierBilling } from '../src/billing.js'
import { REPORTS } from './gate.js'

// The setup every test file shares. Two ways to run: in process (msw answers from a sandbox of the
// test file's own: vitest runs each file in a worker of its own), or, with DCB_BASE_URL set, against
// a running `dcb serve`. There each file works in sessions of its own, named from the file
// (file-renewal; file-sessions and file-sessions-worker-2), and `dcb coverage --sessions 'file-*'`
// gates them after.
export const DCB_BASE_URL = process.env.DCB_BASE_URL
const CLOCK = '2026-01-31T00:00:00'
const BASE_URL = DCB_BASE_URL ?? 'https://dcb.carrier.example/v1'
const API_KEY = 'sandbox-demo-key'

/** A worker: the merchant code working in a session of its own, and that session's sandbox functions. */
export interface Worker {
  billing: CarrierBilling
  sandbox: SandboxSession | SandboxClient
}

export interface Suite {
  /** The file's sandbox (in process) or its session `file-<name>` of the server; set before the first test. */
  readonly sandbox: Sandbox | SandboxClient
  /** The merchant code under test, calling the carrier's URL. */
  readonly billing: CarrierBilling
  /** One of the workers the file declared; call it in a test. */
  worker(name: string): Worker
}

/**
 * The sandbox of the test file `file` (its `import.meta.filename`) and the merchant code pointed at it,
 * with the hooks that start, reset and close it. `workers`: the sessions beside the file's own that
 * its tests use (named `file-<name>-<worker>` when served).
 */
export function useSandbox(file: string, { workers = [] }: { workers?: string[] } = {}): Suite {
  const name = basename(file, '.test.ts')
  const FILE = `file-${name}`
  const session = (worker: string) => (DCB_BASE_URL ? `${FILE}-${worker}` : worker)
  const urlOf = (worker: string) => DCB_BASE_URL ?? `https://${worker}.carrier.example`
  const merchant = (url: string, session?: string) => new CarrierBilling(url, API_KEY, session ? { 'X-DCB-Session': session } : {})
  let sandbox: Sandbox | SandboxClient | undefined
  const started = () => sandbox ?? fail('the sandbox starts in beforeAll: use it in a test')
  const server = setupServer()

  beforeAll(async () => {
    if (DCB_BASE_URL) {
      const client = createClient({ baseUrl: DCB_BASE_URL, session: FILE })
      // Sessions from an earlier run would count too: each starts over.
      await client.reset({ clock: CLOCK, frozen: true })
      for (const w of workers) await client.session(session(w)).reset({ clock: CLOCK, frozen: true })
      sandbox = client
      return
    }
    const local = await createSandbox({ clock: CLOCK })
    server.use(...sandboxHandlers(local, { baseUrl: BASE_URL }))
    for (const w of workers) server.use(...sandboxHandlers(local, { baseUrl: urlOf(w), session: w }))
    server.listen({ onUnhandledRequest: 'error' })
    sandbox = local
  })
  // In process, each test starts afresh; its coverage is kept first (a reset starts the counts over),
  // to gate the suite as a whole. Served, nothing resets: the server keeps the counts for `dcb coverage`.
  const reports: CoverageAnswer[] = []
  afterEach(async () => {
    if (DCB_BASE_URL) return
    const s = started()
    reports.push(await s.coverage())
    for (const w of workers) reports.push(await s.session(w).coverage())
    await s.reset()
    for (const w of workers) await s.session(w).reset()
  })
  // In process, the file's coverage for the gate (test/gate.ts), which merges every file's.
  afterAll(async () => {
    if (DCB_BASE_URL || !sandbox) return
    server.close()
    await (sandbox as Sandbox).close()
    mkdirSync(REPORTS, { recursive: true })
    writeFileSync(new URL(`${name}.json`, REPORTS), JSON.stringify(mergeCoverage(...reports)))
  })

  return {
    get sandbox() {
      return started()
    },
    billing: merchant(BASE_URL, DCB_BASE_URL ? FILE : undefined),
    worker(w: string): Worker {
      if (!workers.includes(w)) throw new Error(`worker ${w} is not declared: useSandbox(import.meta.filename, { workers: ['${w}'] })`)
      return { billing: merchant(urlOf(w), DCB_BASE_URL ? session(w) : undefined), sandbox: started().session(session(w)) }
    },
  }
}

function fail(message: string): never {
  throw new Error(message)
}
