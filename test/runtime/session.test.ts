/** The one place a session is built (`src/runtime/session.ts`), called directly over a memory store. */
import { describe, expect, it } from 'vitest'
import { State } from '../../src/core/state.js'
import { createSession } from '../../src/runtime/session.js'
import { MemoryStore } from '../../src/store/memory.js'
import { loadWorld } from '../../src/world/load.js'

const world = loadWorld([]).world

function session(store = new MemoryStore()) {
  return createSession({ name: 'a', state: new State(), store, engine: { world }, requestLogBudget: 1024, version: 'test' })
}

describe('createSession', () => {
  it('writes the changes of its operations to its store', async () => {
    const store = new MemoryStore()
    const s = session(store)
    await s.operations.rules.add({ match: { country: 'bg' }, step: 'init', effect: { error: 'BARRED' } })
    expect(store.info().changes).toBeGreaterThan(0)
  })

  it('keeps a request log of the byte budget given', () => {
    expect(session().requestLog.byteBudget).toBe(1024)
  })

  it('makes its live stream on first use, then answers the same one', () => {
    const s = session()
    expect(s.live()).toBe(s.live())
    s.closeStreams()
  })

  it('closes its store when it closes', async () => {
    const store = new MemoryStore()
    let closed = 0
    store.close = async () => void closed++
    await session(store).close()
    expect(closed).toBe(1)
  })
})
