/**
 * The shared sessions, read again: a session deleted through two replicas at once is deleted once
 * (200, the other 404 SESSION_NOT_FOUND).
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { control, replicas, stopAll } from './replicas.js'
import { usePostgres } from './use-postgres.js'

describe('shared sessions, reviewed', () => {
  const pg = usePostgres()
  let started: Served[] = []
  afterEach(async () => {
    await stopAll(started)
    started = []
  })

  it('a session deleted through two replicas at once: one answers 200, the other 404 SESSION_NOT_FOUND', async () => {
    const url = await pg.createDatabase('dropraced')
    const [a, b] = (started = await replicas(url, 2))
    const names = ['s1', 's2', 's3', 's4']
    for (const name of names) expect((await control(a!.url, '/clock', undefined, { 'x-dcb-session': name })).http).toBe(200)
    for (const name of names) {
      const both = await Promise.all([a!, b!].map((r) => control(r.url, `/sessions/${name}`, undefined, {}, 'DELETE')))
      expect(both.map((r) => r.http).sort(), name).toEqual([200, 404])
      expect(both.find((r) => r.http === 404)!.body).toEqual({ error: 'SESSION_NOT_FOUND', message: `no session ${name}` })
    }
    for (const r of [a!, b!]) expect((await control(r.url, '/sessions')).body.sessions.map((s: { name: string }) => s.name)).toEqual(['default'])
  })
})
