import { describe, expect, it } from 'vitest'
import pg from 'pg'
import { usePostgres } from './use-postgres.js'

// The harness itself: a real server that starts, keeps data across a stop, and refuses while down.
describe('test PostgreSQL server', () => {
  const server = usePostgres()

  it("keeps a fresh database's rows across a stop and a start, refusing connections while stopped", async () => {
    const url = await server.createDatabase('harness')
    await server.query('CREATE TABLE t (n int)', [], 'harness')
    await server.query('INSERT INTO t VALUES (42)', [], 'harness')
    await server.stop()
    const down = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
    await expect(down.connect()).rejects.toThrow()
    await server.start()
    const { rows } = await server.query('SELECT n FROM t', [], 'harness')
    expect(rows).toEqual([{ n: 42 }])
  })

  it('is PostgreSQL 14 or newer', async () => {
    const { rows: v } = await server.query('SHOW server_version_num')
    expect(Number(v[0].server_version_num)).toBeGreaterThanOrEqual(140000)
  })
})
