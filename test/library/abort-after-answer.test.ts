/**
 * A signal that aborts after the answer came, before its body is read: Node's fetch rejects the read
 * (the body is errored with the abort), status and headers stay. `sandbox.fetch` left the body
 * readable. Each sequence runs through Node's own fetch against a real server (`startSandbox`) and
 * through `sandbox.fetch`, and the outcomes are compared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox, startSandbox, type Sandbox, type SandboxServer } from '../../src/index.js'

type Fetch = (input: string | Request, init?: RequestInit) => Promise<Response>
type Read = (res: Response) => Promise<unknown>

const READS: Record<string, Read> = {
  text: (r) => r.text(),
  json: (r) => r.json(),
  arrayBuffer: (r) => r.arrayBuffer(),
  blob: (r) => r.blob(),
  'body reader': (r) => r.body!.getReader().read(),
  'a clone': (r) => r.clone().text(),
  'a Request with the signal': (r) => r.text(),
}

let n = 0
/** One Init with a signal (an ending 000-099: answered at once), the signal aborted (with `reason`) once the answer is there, then `read`. */
async function sequence(fetch: Fetch, base: string, how: string, reason?: unknown, abortFirst = true) {
  const controller = new AbortController()
  const init: RequestInit = {
    method: 'POST',
    headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
    body: JSON.stringify({ msisdn: `601234560${String(n++ % 100).padStart(2, '0')}`, service_code: 'STREAMPLUS', country_code: 'my' }),
    signal: controller.signal,
  }
  const url = `${base}/subscriptions/init`
  const res = how === 'a Request with the signal' ? await fetch(new Request(url, init)) : await fetch(url, init)
  // Read first, abort while the read is under way (the same tick).
  const reading = abortFirst ? undefined : READS[how]!(res)
  controller.abort(reason)
  const kept = { status: res.status, type: res.headers.get('content-type'), bodyUsed: abortFirst ? res.bodyUsed : 'reading' }
  try {
    await (reading ?? READS[how]!(res))
    return { ...kept, read: 'ok' }
  } catch (e) {
    const err = e as { constructor: { name: string }; name?: string }
    return { ...kept, read: 'rejected', error: `${err.constructor.name} ${err.name}`, isReason: e === controller.signal.reason }
  }
}

describe('sandbox.fetch: a signal aborted after the answer, before its body is read', () => {
  let server: SandboxServer
  let sandbox: Sandbox
  const node: Fetch = (input, init) => fetch(input, init)
  beforeAll(async () => {
    server = await startSandbox({ inMemory: true, port: 0 })
    sandbox = await createSandbox()
  })
  afterAll(async () => {
    await server?.close()
    await sandbox?.close()
  })
  const local: Fetch = (input, init) => sandbox.fetch(input, init)

  it.each(Object.keys(READS))('abort(): reading by %s rejects with an AbortError as with Node fetch; status and headers stay', async (how) => {
    const expected = await sequence(node, server.url, how)
    expect(expected).toMatchObject({ status: 200, read: 'rejected', error: 'DOMException AbortError' })
    const got = await sequence(local, 'http://localhost', how)
    expect({ ...got, isReason: undefined }).toEqual({ ...expected, isReason: undefined })
  })

  it('a read under way when the signal aborts rejects too', async () => {
    for (const how of ['text', 'body reader']) {
      const expected = await sequence(node, server.url, how, undefined, false)
      expect(expected.read).toBe('rejected')
      expect(await sequence(local, 'http://localhost', how, undefined, false)).toMatchObject({
        read: 'rejected',
        error: (expected as { error?: string }).error,
      })
    }
  })

  it('a read done before the signal aborts stays done', async () => {
    for (const fetchOf of [node, local]) {
      const controller = new AbortController()
      const base = fetchOf === node ? server.url : 'http://localhost'
      const res = await fetchOf(`${base}/_sandbox/health`, { signal: controller.signal })
      const body = await res.json()
      controller.abort()
      expect(body).toMatchObject({ ok: true })
    }
  })

  it("abort(reason): the body stream errors with the reason itself, as Node fetch's; every read rejects", async () => {
    const reason = new Error('gave up')
    expect(await sequence(node, server.url, 'body reader', reason)).toMatchObject({ read: 'rejected', isReason: true })
    expect(await sequence(local, 'http://localhost', 'body reader', reason)).toMatchObject({ read: 'rejected', isReason: true })
    // Node 20's fetch rejects text() and the like with an AbortError of its own, later ones with the
    // reason (as the fetch standard says); sandbox.fetch gives the reason.
    for (const how of ['text', 'json', 'arrayBuffer', 'blob', 'a clone']) {
      expect((await sequence(node, server.url, how, reason)).read).toBe('rejected')
      expect(await sequence(local, 'http://localhost', how, reason)).toMatchObject({ read: 'rejected', isReason: true })
    }
  })

  it('a signal that never aborts leaves the answer as it is', async () => {
    const res = await sandbox.fetch('http://localhost/_sandbox/health', { signal: new AbortController().signal })
    expect(res.bodyUsed).toBe(false)
    const clone = res.clone()
    expect(await res.json()).toMatchObject({ ok: true })
    expect(res.bodyUsed).toBe(true)
    expect(await new Response(clone.body).json()).toMatchObject({ ok: true })
  })
})
