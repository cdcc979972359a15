/**
 * Replicas of `dcb serve --store` on one test PostgreSQL: the real binary, each on its own port.
 */
import { serve, type Served } from '../cli/run.js'

export const KEY = 'sandbox-demo-key'

/** Starts `n` replicas on one database (the same world), one after another. */
export async function replicas(url: string, n: number, args: string[] = []): Promise<Served[]> {
  const out: Served[] = []
  for (let i = 0; i < n; i++) out.push(await serve(['--store', url, ...args]))
  return out
}

/** A merchant API call (JSON answer and the reason header). */
export async function merchant(base: string, op: 'init' | 'verify' | 'status', body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/subscriptions/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': KEY, ...headers },
    body: JSON.stringify(body),
  })
  return { http: res.status, body: (await res.json()) as any, reason: res.headers.get('x-dcb-reason') }
}

/** A control API call's JSON (GET unless a body is given; `method` for DELETE). */
export async function control(base: string, path: string, body?: unknown, headers: Record<string, string> = {}, method?: string) {
  const res = await fetch(`${base}/_sandbox${path}`, {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { http: res.status, body: (await res.json()) as any }
}

export async function stopAll(list: Served[]): Promise<void> {
  await Promise.all(list.map((r) => r.stop()))
}

/**
 * Asks `check` again (every 50 ms) until it answers something other than undefined/false, and
 * answers that; fails naming `what` and the last answer when `ms` pass first. For what another
 * replica shows once the database told it (a journal entry written just after its answer, a notice).
 */
export async function until<T>(what: string, check: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  let last: unknown
  for (;;) {
    try {
      const got = await check()
      if (got !== undefined && got !== false) return got
      last = got
    } catch (e) {
      last = e
    }
    // wall-clock: another process's state is seen only by asking again; the deadline names what never came
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`)
    // wall-clock: the pause between two asks of another process, not a wait before an assertion
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** An open live stream (`GET /_sandbox/events`): the events read so far and a wait for one that matches. */
export async function liveStream(base: string) {
  const ctrl = new AbortController()
  const res = await fetch(`${base}/_sandbox/events`, { signal: ctrl.signal })
  if (!res.ok || !res.body) throw new Error(`GET /_sandbox/events answered ${res.status}`)
  const events: { event: string; data: any }[] = []
  const waiters: (() => void)[] = []
  const wake = () => {
    for (const w of waiters.splice(0)) w()
  }
  let ended = false
  void (async () => {
    const decoder = new TextDecoder()
    let buf = ''
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true })
        let end
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end)
          buf = buf.slice(end + 2)
          let event = 'message'
          let data = ''
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7)
            else if (line.startsWith('data: ')) data += line.slice(6)
          }
          if (data) events.push({ event, data: JSON.parse(data) })
        }
        wake()
      }
    } catch {
      // aborted by close()
    } finally {
      ended = true
      wake()
    }
  })()
  /** The first event named `name` whose data matches; fails when the stream ends first (the test's timeout otherwise). */
  async function event(name: string, match: (data: any) => boolean = () => true): Promise<any> {
    for (;;) {
      const found = events.find((e) => e.event === name && match(e.data))
      if (found) return found.data
      if (ended) throw new Error(`the stream ended before a ${name} event; have ${JSON.stringify(events.map((e) => e.event))}`)
      await new Promise<void>((resolve) => waiters.push(resolve))
    }
  }
  return { events, event, close: () => ctrl.abort() }
}
