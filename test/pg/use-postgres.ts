import { afterAll, beforeAll } from 'vitest'
import { startPostgres, type TestPostgres } from './postgres.js'

/**
 * The PostgreSQL server of a describe block: started before its tests, removed after them. Answers
 * it at once (its calls go to the server once started), so a block reads `const pg = usePostgres()`.
 */
export function usePostgres(): TestPostgres {
  let server: TestPostgres | undefined
  beforeAll(async () => {
    server = await startPostgres()
  }, 60_000)
  afterAll(async () => {
    await server?.remove()
  })
  const started = (): TestPostgres => {
    if (!server) throw new Error('the test PostgreSQL server is not started (usePostgres() runs in a describe block)')
    return server
  }
  return {
    get port() {
      return started().port
    },
    url: (database) => started().url(database),
    createDatabase: (name) => started().createDatabase(name),
    query: (sql, params, database) => started().query(sql, params, database),
    stop: () => started().stop(),
    start: () => started().start(),
    remove: () => started().remove(),
  }
}
