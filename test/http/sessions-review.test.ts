/**
 * Sessions' calls, read again: a session deleted twice at once is deleted once (200), and the other
 * call finds none (404 SESSION_NOT_FOUND, as any DELETE of a session that is not there).
 */
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'

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
