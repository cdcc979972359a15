/**
 * The host of sessions (`src/runtime/host.ts`) called directly, over sessions kept in memory: how it
 * opens a named session once, refuses one past the cap or badly named, and orders drops with the
 * gets and opens around them, and follows what other processes did (their notices). (Over HTTP and a
 * data folder: test/http/session-races.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest'
import { SESSION_NAME_RULE, dotNameRefusal } from '../../src/contract/defaults.js'
import { SandboxError } from '../../src/core/errors.js'
import { createHost, memorySessions, type Host, type HostOptions } from '../../src/runtime/host.js'
import { loadWorld } from '../../src/world/load.js'

const world = loadWorld([]).world
let host: Host | undefined

async function start(opts: Partial<HostOptions> = {}): Promise<Host> {
  const sessions = memorySessions()
  await sessions.load()
  host = createHost(sessions, { engine: { world }, version: 'test', ...opts })
  await host.activate()
  return host
}

afterEach(async () => {
  await host?.close()
  host = undefined
})

/** The refusal `call` throws or rejects with. */
async function refusal(call: () => unknown): Promise<SandboxError> {
  try {
    await call()
  } catch (e) {
    if (e instanceof SandboxError) return e
    throw e
  }
  throw new Error('the call was not refused')
}

describe('host.get', () => {
  it('opens one session for two gets at once of one new name', async () => {
    const h = await start()
    const [a, b] = await Promise.all([h.get('a'), h.get('a')])
    expect(a).toBe(b)
    expect(h.size).toBe(1)
  })

  it('answers the open session itself, not a promise, once it is open', async () => {
    const h = await start()
    const opened = await h.get('a')
    expect(h.get('a')).toBe(opened)
  })

  it('refuses a new session past the cap with SESSION_LIMIT, naming the cap', async () => {
    const h = await start({ maxSessions: 1 })
    await h.get('a')
    const e = await refusal(() => h.get('b'))
    expect(e.code).toBe('SESSION_LIMIT')
    expect(e.message).toBe('the server holds its limit of 1 session (--max-sessions); delete one with DELETE /_sandbox/sessions/NAME')
    expect(h.peek('b')).toBeUndefined()
  })

  it('counts a session still being opened against the cap', async () => {
    const h = await start({ maxSessions: 1 })
    const [a, b] = await Promise.allSettled([h.get('a'), h.get('b')])
    expect(a.status).toBe('fulfilled')
    expect(b.status === 'rejected' && (b.reason as SandboxError).code).toBe('SESSION_LIMIT')
  })

  it('refuses a bad session name with BAD_REQUEST, saying what a name is', async () => {
    const h = await start()
    const e = await refusal(() => h.get('no spaces'))
    expect(e.code).toBe('BAD_REQUEST')
    expect(e.message).toBe(`X-DCB-Session must be ${SESSION_NAME_RULE}`)
    expect(h.size).toBe(0)
  })

  it('refuses "." as the name of a new session: a URL client could never delete it', async () => {
    const h = await start()
    const e = await refusal(() => h.get('.'))
    expect(e.code).toBe('BAD_REQUEST')
    expect(e.message).toBe(dotNameRefusal('.'))
  })
})

describe('host.peek', () => {
  it('opens nothing', async () => {
    const h = await start()
    expect(h.peek('a')).toBeUndefined()
    expect(h.has('a')).toBe(false)
    expect(h.all().map((s) => s.name)).toEqual(['default'])
  })
})

describe('host.drop', () => {
  it('of a session being opened waits for the open, then drops it', async () => {
    const h = await start()
    const opening = h.get('a')
    const dropped = h.drop('a')
    expect(await dropped).toBe(true)
    await opening
    expect(h.peek('a')).toBeUndefined()
  })

  it('makes a get asked while it runs wait, then give a new session', async () => {
    const h = await start()
    const old = await h.get('a')
    const dropping = h.drop('a')
    const asked = h.get('a')
    expect(await dropping).toBe(true)
    const got = await asked
    expect(got).not.toBe(old)
    expect(h.peek('a')).toBe(got)
  })

  it('of one name twice at once finds it once', async () => {
    const h = await start()
    await h.get('a')
    expect(await Promise.all([h.drop('a'), h.drop('a')])).toEqual([true, false])
  })

  it('refuses the default session, saying how to reset it', async () => {
    const h = await start()
    const e = await refusal(() => h.drop('default'))
    expect(e.code).toBe('BAD_REQUEST')
    expect(e.message).toBe('the default session cannot be deleted; reset it with POST /_sandbox/reset')
  })

  it('refuses a bad session name', async () => {
    const h = await start()
    const e = await refusal(() => h.drop('no spaces'))
    expect(e.code).toBe('BAD_REQUEST')
    expect(e.message).toBe(`"no spaces" is not a session name: ${SESSION_NAME_RULE}`)
  })
})

describe('host.discardUnused', () => {
  it('drops a session nothing was written to', async () => {
    const h = await start()
    await h.get('a')
    await h.discardUnused('a')
    expect(h.peek('a')).toBeUndefined()
  })

  it('keeps a session that holds a rule', async () => {
    const h = await start()
    const s = await h.get('a')
    await s.operations.rules.add({ match: { country: 'bg' }, step: 'init', effect: { error: 'BARRED' } })
    await h.discardUnused('a')
    expect(h.peek('a')).toBe(s)
  })
})

describe('host.interrupt', () => {
  it('reaches every open session', async () => {
    const h = await start()
    const a = await h.get('a')
    h.interrupt()
    expect([h.default.engine.interrupted, a.engine.interrupted]).toEqual([true, true])
  })

  it('reaches a session opened after it', async () => {
    const h = await start()
    h.interrupt()
    const late = await h.get('late')
    expect(late.engine.interrupted).toBe(true)
  })
})

describe('host.close', () => {
  it('closes a session still being opened with the others', async () => {
    const h = await start()
    const asked = h.get('late')
    await h.close()
    await asked
    expect(h.peek('late')).toBeUndefined()
    expect(h.all().map((s) => s.name)).toEqual(['default'])
    host = undefined
  })
})

/**
 * Sessions another process shares (as a database's are): `stored` is what the store lists, and each
 * open waits until `release` is called, so a notice can come while it runs.
 */
function sharedLike(stored: Set<string>) {
  const base = memorySessions()
  const waiting: (() => void)[] = []
  const sessions = {
    ...base,
    // `listed`: names a list read earlier (it may name one dropped since).
    others: async (listed?: Iterable<string>) => ({ stored: [...(listed ?? stored)], is: (name: string) => stored.has(name) }),
    open: async (name: string) => {
      await new Promise<void>((resolve) => waiting.push(resolve))
      return base.open(name)
    },
  }
  /** Lets every open that waits go on, once one is waiting. */
  const release = async () => {
    while (!waiting.length) await new Promise((r) => setImmediate(r))
    for (const go of waiting.splice(0)) go()
  }
  return { sessions, release }
}

describe('host.notice', () => {
  async function shared(stored: Set<string>) {
    const { sessions, release } = sharedLike(stored)
    await sessions.load()
    host = createHost(sessions, { engine: { world }, version: 'test' })
    await host.activate()
    return { h: host, release }
  }

  it('forgets a session whose drop notice came while it was being opened', async () => {
    const stored = new Set(['made-and-dropped'])
    const { h, release } = await shared(stored)
    h.notice('S+made-and-dropped')
    stored.delete('made-and-dropped')
    h.notice('S-made-and-dropped')
    // A list read meanwhile passes over a session being opened; its open ends after.
    await h.syncSessions()
    const opened = h.get('made-and-dropped')
    await release()
    await opened
    expect(h.all().map((s) => s.name)).toEqual(['default'])
  })

  it('forgets a session a list read before its drop names, once its drop notice came', async () => {
    const { h, release } = await shared(new Set())
    h.notice('S-listed-then-dropped')
    const listing = h.syncSessions(['listed-then-dropped'])
    await release()
    await listing
    expect(h.all().map((s) => s.name)).toEqual(['default'])
  })

  it('keeps a session dropped then made again while it was being opened', async () => {
    const stored = new Set(['made-again'])
    const { h, release } = await shared(stored)
    h.notice('S+made-again')
    h.notice('S-made-again')
    h.notice('S+made-again')
    await release()
    await h.syncSessions()
    expect(h.all().map((s) => s.name)).toEqual(['default', 'made-again'])
  })

  it('keeps a session whose drop notice came while it was opened, if the store still has it', async () => {
    const stored = new Set(['still-there'])
    const { h, release } = await shared(stored)
    h.notice('S+still-there')
    h.notice('S-still-there')
    await release()
    await h.syncSessions()
    expect(h.all().map((s) => s.name)).toEqual(['default', 'still-there'])
  })
})
