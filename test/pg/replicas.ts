/**
 * Replicas of `dcb serve --store` on one test PostgreSQL: the real binary, each on its own port.
 */
import { serve, type Served } from '../cli/run.js'
import { openStream } from '../sse.js'

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
 * replica shows once the database told it (a request log entry written just after its answer, a notice).
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

/** An open live stream (`GET /_sandbox/events`) of a replica: the events read so far and a wait for one that matches. */
export function liveStream(base: string) {
  return openStream(`${base}/_sandbox/events`)
}
