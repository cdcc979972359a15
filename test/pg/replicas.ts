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

/** A control API call's JSON (GET unless a body is given). */
export async function control(base: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/_sandbox${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { http: res.status, body: (await res.json()) as any }
}

export async function stopAll(list: Served[]): Promise<void> {
  await Promise.all(list.map((r) => r.stop()))
}
