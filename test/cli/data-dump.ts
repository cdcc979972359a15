/** What a data folder holds, as the control API reads it back: every session's records, rules, messages and clock. */
import { cpSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Data folders the version before the one write-ahead log wrote (`test/fixtures/data-v1/`), each with the
 * default session and the named sessions `alice` and `bob`, made by `dcb serve --data` under a frozen
 * clock (2026-01-15): subscriptions, a renewal each (a 30-day clock move), a runtime rule in `alice`, a
 * cancel in `bob`. `stopped`: then stopped by SIGTERM (snapshots, empty logs). `crashed`: stopped so
 * once, then as much again and killed (SIGKILL): its logs hold the second round, to be replayed. The
 * lock files were removed and the logs' zeroed space past their last line cut (a start cuts it too).
 * `NAME.expected.json` is what that version read back from each (`dumpSessions`, before any change).
 */
export const DATA_V1 = join(import.meta.dirname, '..', 'fixtures', 'data-v1')

/** Copies the folder `name` of DATA_V1 into `dir` (a start writes to it); answers its data file. */
export function copyDataV1(name: 'stopped' | 'crashed', dir: string): string {
  cpSync(join(DATA_V1, name), dir, { recursive: true })
  return join(dir, 'sandbox.json')
}

async function read(url: string, path: string, session: string): Promise<unknown> {
  const headers: Record<string, string> = session === 'default' ? {} : { 'x-dcb-session': session }
  const res = await fetch(url + path, { headers })
  if (res.status !== 200) throw new Error(`${path} (${session}) answered ${res.status}: ${await res.text()}`)
  return res.json()
}

/** Every session's subscriptions (each with its charges and timeline), runtime rules, messages and clock, read from a running server. */
export async function dumpSessions(url: string): Promise<Record<string, unknown>> {
  const listed = (await read(url, '/_sandbox/sessions', 'default')) as { sessions: { name: string }[] }
  const out: Record<string, unknown> = {}
  for (const { name } of listed.sessions) {
    const subs = (await read(url, '/_sandbox/subscriptions?limit=1000', name)) as { subscriptions: { subscription_id: string }[] }
    const each = []
    for (const s of subs.subscriptions) each.push(await read(url, `/_sandbox/subscriptions/${s.subscription_id}`, name))
    const rules = (await read(url, '/_sandbox/rules', name)) as { runtime?: unknown }
    out[name] = {
      subscriptions: each,
      rules: rules.runtime ?? [],
      messages: await read(url, '/_sandbox/messages?limit=5000', name),
      clock: await read(url, '/_sandbox/clock', name),
    }
  }
  return out
}
