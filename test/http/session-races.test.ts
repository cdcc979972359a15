/**
 * Sessions' calls that race: a session deleted twice at once is deleted once (200), and the other
 * call finds none (404 SESSION_NOT_FOUND, as any DELETE of a session that is not there); a call of a
 * session asked for while it is deleted is served by a new one, not refused; and one still being
 * opened when the host closes is closed with the others.
 */
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { createHost, memorySessions } from '../../src/runtime/host.js'
import { fileSessions } from '../../src/store/file-sessions.js'
import { loadWorld } from '../../src/world/load.js'

const S = (name: string) => ({ 'x-dcb-session': name })

describe('DELETE /_sandbox/sessions/NAME twice at once', () => {
  let tmp: ReturnType<typeof tempDir>
  let c: Client | undefined
  beforeEach(() => {
    tmp = tempDir()
  })
  afterEach(async () => {
    await c?.close()
    c = undefined
    tmp.cleanup()
  })

  for (const where of ['data folder', 'memory'] as const)
    it(`(${where}) one deletes it, the other answers 404 SESSION_NOT_FOUND`, async () => {
      const data = where === 'memory' ? undefined : join(tmp.dir, 'sandbox.json')
      c = await startClient({ data })
      const names = ['a', 'b', 'c']
      for (const name of names) expect((await c.control('/clock', undefined, { headers: S(name) })).status).toBe(200)
      for (const name of names) {
        const both = await Promise.all([1, 2].map(() => c!.control(`/sessions/${name}`, undefined, { method: 'DELETE' })))
        expect(both.map((r) => r.status).sort(), name).toEqual([200, 404])
        expect(both.find((r) => r.status === 200)!.body).toEqual({ deleted: name })
        expect(both.find((r) => r.status === 404)!.body).toEqual({ error: 'SESSION_NOT_FOUND', message: `no session ${name}` })
      }
      expect((await c.control('/sessions')).body.sessions.map((s: { name: string }) => s.name)).toEqual(['default'])
      if (!data) return
      await c.close()
      c = await startClient({ data })
      expect((await c.control('/sessions')).body.sessions.map((s: { name: string }) => s.name)).toEqual(['default'])
    })
})

describe('a session asked for while it is deleted', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeEach(() => {
    tmp = tempDir()
  })
  afterEach(() => tmp.cleanup())

  it('(data folder) is served by a new session that takes changes once the delete is done', async () => {
    const sessions = fileSessions(join(tmp.dir, 'sandbox.json'))
    await sessions.load()
    const host = createHost(sessions, { engine: { world: loadWorld([]).world }, version: 'test' })
    await host.activate()
    try {
      const old = await host.get('a')
      await old.operations.advance('1h')
      // Asked for at once after the delete began (its write not yet done).
      const dropping = host.drop('a')
      const asked = host.get('a')
      expect(await dropping).toBe(true)
      const got = await asked
      expect(got).not.toBe(old)
      expect(host.peek('a')).toBe(got)
      await got.operations.advance('1h')
    } finally {
      await host.close()
    }
  })
})

describe('a session being opened while the host closes', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeEach(() => {
    tmp = tempDir()
  })
  afterEach(() => tmp.cleanup())

  for (const where of ['data folder', 'memory'] as const)
    it(`(${where}) is closed with the others, not left open in the closed host`, async () => {
      const sessions = where === 'memory' ? memorySessions() : fileSessions(join(tmp.dir, 'sandbox.json'))
      await sessions.load()
      const host = createHost(sessions, { engine: { world: loadWorld([]).world }, version: 'test' })
      await host.activate()
      const asked = host.get('late')
      await host.close()
      await asked
      expect(host.peek('late')).toBeUndefined()
      expect(host.all().map((s) => s.name)).toEqual(['default'])
    })
})
