import { describe, expect, it } from 'vitest'
import { connectionConfig, SERVER_SETTINGS } from '../../src/store/postgres-connection.js'
import { SharedDatabase } from '../../src/store/postgres.js'
import { usePostgres } from './use-postgres.js'

// The bounds every connection sets win over the database's settings and over the URL's own
// `options` (which node-postgres would otherwise take instead of dcb's); the URL's other options stay.
describe("the shared store's connection settings", () => {
  const pg = usePostgres()

  it("win on the pool over the database's settings and the URL's options, whose other settings stay", async () => {
    const url = await pg.createDatabase('settings')
    await pg.query(`ALTER DATABASE settings SET lock_timeout = 0`)
    await pg.query(`ALTER DATABASE settings SET idle_in_transaction_session_timeout = 0`)
    const options = encodeURIComponent('-c statement_timeout=0 -c search_path=public,pg_catalog')
    const db = await SharedDatabase.open({ url: `${url}?options=${options}`, world: { name: 'settings' } })
    try {
      const names = [...Object.keys(SERVER_SETTINGS), 'search_path']
      const { rows } = await db.pool.query<{ name: string; setting: string; unit: string | null }>(
        `SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)`,
        [names],
      )
      const got = Object.fromEntries(rows.map((r) => [r.name, r.setting]))
      expect(got).toEqual({
        idle_in_transaction_session_timeout: '2000',
        lock_timeout: '2000',
        statement_timeout: '2500',
        tcp_keepalives_idle: '5',
        tcp_keepalives_interval: '1',
        tcp_keepalives_count: '3',
        tcp_user_timeout: '5000',
        client_encoding: 'UTF8',
        search_path: 'public,pg_catalog',
      })
    } finally {
      await db.close()
    }
  }, 30_000)

  it("put the URL's options before dcb's, keeping the rest of the URL", () => {
    const config = connectionConfig('postgres://u:p%40ss@db.example:5433/dcb?sslmode=disable&options=-c%20search_path%3Ddcb', 3000, 3000)
    expect(config.connectionString).toBe('postgres://u:p%40ss@db.example:5433/dcb?sslmode=disable')
    expect(config.options).toMatch(/^-c search_path=dcb -c idle_in_transaction_session_timeout=2000 -c lock_timeout=2000 /)
    expect(config).toMatchObject({ keepAlive: true, connectionTimeoutMillis: 3000, query_timeout: 3000 })
    expect(connectionConfig('postgres://u@h/d', 10_000, undefined).connectionString).toBe('postgres://u@h/d')
  })
})
