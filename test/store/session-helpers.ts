/** What the sessions' write-ahead log tests share: a one-change write, a session's counters, a crash. */
import type { State } from '../../src/core/state.js'
import { Tx } from '../../src/core/tx.js'
import type { SessionWal, SessionStore } from '../../src/store/session-wal.js'

/** Writes one counter into a session's store (one transaction). */
export const put = (store: SessionStore, id: string, v: number) => {
  const tx = new Tx(store.state)
  tx.put('counters', id, v)
  return store.append(tx.changes)
}

/** A session's counters as a plain object. */
export const counters = (state: State | undefined) => Object.fromEntries(state?.counters ?? [])

/** Leaves the write-ahead log as a killed server would: nothing flushed beyond what was acknowledged, no compaction. */
export async function crash(j: SessionWal): Promise<void> {
  await (j as any).wal.close()
}
