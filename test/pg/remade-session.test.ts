/**
 * A replica that writes to a session another replica has just deleted (before the notice of the delete
 * reached it) makes the session anew, as a session is made on first use: the other replicas are told
 * so (`S+name`), as of any session made, and their lists follow it.
 */
import { describe, expect, it } from 'vitest'
import { SharedDatabase } from '../../src/store/postgres.js'
import { loadWorld } from '../../src/world/load.js'
import { usePostgres } from './use-postgres.js'

describe('a write to a session deleted by another replica', () => {
  const pg = usePostgres()

  it('makes it anew as a session made, telling the other replicas', async () => {
    const url = await pg.createDatabase('remade')
    const world = loadWorld([]).world
    const a = await SharedDatabase.open({ url, world })
    const b = await SharedDatabase.open({ url, world })
    const heard: string[] = []
    let told!: () => void
    const remade = new Promise<void>((resolve) => (told = resolve))
    b.onNotice = (payload) => {
      heard.push(payload)
      if (payload === 'S+s1' && heard.includes('S-s1')) told()
    }
    await b.listen()
    try {
      const { store } = await a.session('s1')
      expect(await b.drop('s1')).toBe(true)
      // a's copy still thinks s1 is there: its next write turn finds the row gone.
      await store.gate!.enter()
      await store.append([{ c: 'meta', id: 'note', v: 'after the delete' }])
      // wall-clock: notices come at the commit, within moments; without one in 5 s the assertion below says what is missing.
      await Promise.race([remade, new Promise((resolve) => setTimeout(resolve, 5000).unref())])
      expect(heard.slice(heard.indexOf('S-s1'))).toContain('S+s1')
      expect((await pg.query(`SELECT name FROM dcb_sessions ORDER BY name`, [], 'remade')).rows).toEqual([{ name: 'default' }, { name: 's1' }])
    } finally {
      await a.close()
      await b.close()
    }
  }, 30_000)
})
