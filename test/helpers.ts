import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { startSandbox, type RunningSandbox, type ServeHooks as ServeOptions } from '../src/server.js'

export const DEMO = 'sandbox-demo-key'

export interface Client {
  sandbox: RunningSandbox
  url: string
  /** POST a merchant call; answers HTTP status and parsed body (or text when not JSON). */
  api(
    path: string,
    body?: unknown,
    opts?: { key?: string | null; headers?: Record<string, string>; method?: string; raw?: string },
  ): Promise<{ status: number; body: any; text: string; headers: Headers }>
  /** A control call under /_sandbox. */
  control(path: string, body?: unknown, opts?: { method?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any }>
  /** Init + read the OTP from the inbox + verify; answers the subscription id. */
  subscribe(msisdn: string, service?: string, country?: string, key?: string): Promise<string>
  close(): Promise<void>
}

export async function startClient(opts: ServeOptions = {}): Promise<Client> {
  const sandbox = await startSandbox({ port: 0, inMemory: opts.data === undefined, onError: () => {}, ...opts })
  const url = sandbox.url
  const api: Client['api'] = async (path, body, o = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(o.headers ?? {}) }
    const key = o.key === undefined ? DEMO : o.key
    if (key !== null) headers['api-key'] = key
    const res = await fetch(url + path, {
      method: o.method ?? 'POST',
      headers,
      body: o.method === 'GET' || o.method === 'HEAD' ? undefined : (o.raw ?? (body === undefined ? undefined : JSON.stringify(body))),
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {}
    return { status: res.status, body: parsed, text, headers: res.headers }
  }
  const control: Client['control'] = async (path, body, o = {}) => {
    const res = await fetch(`${url}/_sandbox${path}`, {
      method: o.method ?? (body === undefined ? 'GET' : 'POST'),
      headers: { 'content-type': 'application/json', ...(o.headers ?? {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {}
    return { status: res.status, body: parsed }
  }
  const subscribe: Client['subscribe'] = async (msisdn, service = 'STREAMPLUS', country = 'my', key = DEMO) => {
    const init = await api('/subscriptions/init', { msisdn, service_code: service, country_code: country }, { key })
    if (init.body.status !== 'SUCCESS') throw new Error(`init failed: ${init.text}`)
    const otp = await control(`/otp?msisdn=${msisdn}`)
    const verify = await api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp: otp.body.otp }, { key })
    if (verify.body.status !== 'SUCCESS') throw new Error(`verify failed: ${verify.text}`)
    return verify.body.payload.subscription_id
  }
  return { sandbox, url, api, control, subscribe, close: () => sandbox.close() }
}

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'dcb-test-'))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Writes `doc` as a JSON file (a fixture, run or rules file) named `name` in `dir`; answers its path. */
export function writeJson(dir: string, name: string, doc: unknown): string {
  const f = join(dir, name)
  writeFileSync(f, JSON.stringify(doc, null, 2))
  return f
}

/**
 * A fresh temp folder for each test of the file (made before it, removed after), and `json` to
 * write files into it. Read `dir` inside a test: it is another folder for each.
 */
export function tempFolderPerTest(): { readonly dir: string; json: (name: string, doc: unknown) => string } {
  let folder: ReturnType<typeof tempDir> | undefined
  beforeEach(() => {
    folder = tempDir()
  })
  afterEach(() => folder?.cleanup())
  const dir = () => {
    if (!folder) throw new Error('tempFolderPerTest: the folder exists only inside a test')
    return folder.dir
  }
  return {
    get dir() {
      return dir()
    },
    json: (name, doc) => writeJson(dir(), name, doc),
  }
}

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/

/**
 * One sandbox for a test file: started before its tests, reset before each, closed after. Answers
 * a stand-in that forwards to the running client.
 */
export function useSandbox(opts: ServeOptions = {}): Client {
  let client: Client | undefined
  beforeAll(async () => {
    client = await startClient(opts)
  })
  afterAll(() => client?.close())
  beforeEach(async () => {
    await client!.control('/reset', {})
  })
  return new Proxy({} as Client, {
    get: (_t, key) => {
      if (!client) throw new Error('the sandbox is not started yet (use it inside a test)')
      const v = (client as unknown as Record<PropertyKey, unknown>)[key]
      return typeof v === 'function' ? v.bind(client) : v
    },
  })
}
