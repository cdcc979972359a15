import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { dcb, type Served } from '../cli/run.js'
import { freePort } from './postgres.js'
import { control } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

// Start-up of `dcb serve --store`: what it refuses (and that it wrote nothing then), the world check,
// and what it keeps of a database it did not make.
const OTHER_WORLD = join(import.meta.dirname, '..', 'fixtures', 'streamplus-gb-only.json')

/** `dcb serve --store URL ...` expected to refuse: its exit code, stderr lines and how long it took. */
async function refused(args: string[], env: Record<string, string> = {}) {
  const t = Date.now()
  const run = await dcb(['serve', '--port', '0', ...args], { env, timeoutMs: 25_000 })
  // A fixture's warnings (streamplus-gb-only.json drops STREAMPLUS's other countries on purpose) are not the refusal.
  const lines = run.stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('dcb: warning: '))
  // wall-clock: the contract bounds a refused start-up (within 15 s)
  return { code: run.code, lines, stdout: run.stdout, seconds: (Date.now() - t) / 1000 }
}

describe('dcb serve --store: start-up', () => {
  const pg = usePostgres()
  const replicas = useReplicas()
  const up = (url: string, args: string[] = [], env: Record<string, string> = {}): Promise<Served> =>
    replicas.serve(url ? ['--store', url, ...args] : args, { env })

  /** The dcb tables of a database (none when refused before writing). */
  const tables = async (db: string) =>
    (await pg.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'dcb_%' ORDER BY tablename`, [], db)).rows.map((r) => r.tablename)

  describe('a refused port, a wrong password, an unknown database or host', () => {
    type Case = { url: string; where: string; error: RegExp }
    let cases: Case[]
    let runs: Awaited<ReturnType<typeof refused>>[]
    /** Each refusal with its case, `run.lines` shown when a check fails. */
    const each = (check: (run: Awaited<ReturnType<typeof refused>>, c: Case) => void) => runs.forEach((run, i) => check(run, cases[i]!))
    beforeAll(async () => {
      const port = await freePort()
      await pg.createDatabase('credentials')
      cases = [
        { url: `postgres://postgres:password@127.0.0.1:${port}/sandbox`, where: `127.0.0.1:${port}/sandbox`, error: /ECONNREFUSED/ },
        {
          url: `postgres://postgres:wrong@127.0.0.1:${pg.port}/credentials`,
          where: `127.0.0.1:${pg.port}/credentials`,
          error: /password authentication failed/,
        },
        { url: pg.url('nosuch'), where: `127.0.0.1:${pg.port}/nosuch`, error: /database "nosuch" does not exist/ },
        { url: 'postgres://postgres:password@nosuch.invalid:5432/sandbox', where: 'nosuch.invalid:5432/sandbox', error: /ENOTFOUND|EAI_AGAIN/ },
      ]
      runs = await Promise.all(cases.map((c) => refused(['--store', c.url])))
    }, 60_000)

    it('exits 1', () => {
      each((run) => expect(run.code, run.lines.join('\n')).toBe(1))
    })

    it('refuses within 15 s', () => {
      each((run) => expect(run.seconds).toBeLessThan(15))
    })

    it('says so in one line naming the host, then the error', () => {
      each((run, c) => {
        expect(run.lines).toHaveLength(1)
        expect(run.lines[0]).toMatch(new RegExp(`^dcb: cannot use the database at ${c.where.replace(/\./g, '\\.')}: `))
        expect(run.lines[0]).toMatch(c.error)
      })
    })

    it('never shows the password', () => {
      each((run) => expect(run.lines[0]).not.toContain('wrong'))
    })

    it('prints nothing on stdout', () => {
      each((run) => expect(run.stdout).toBe(''))
    })

    it('writes nothing: no table, no database made', async () => {
      expect(await tables('credentials')).toEqual([])
      expect((await pg.query(`SELECT 1 FROM pg_database WHERE datname = 'nosuch'`)).rowCount).toBe(0)
    })
  })

  it('a malformed URL, or --store with --data or --in-memory, is a usage error (exit 2)', async () => {
    const url = pg.url('usage')
    const runs = await Promise.all([
      refused(['--store', 'not a url']),
      refused(['--store', 'mysql://root@127.0.0.1/db']),
      refused([], { DCB_STORE: 'postgres://' }),
      refused(['--store', url, '--in-memory']),
      refused(['--store', url, '--data', join(import.meta.dirname, 'never.json')]),
      refused(['--replace-world', '--in-memory']),
    ])
    for (const run of runs) {
      expect(run.code, run.lines.join('\n')).toBe(2)
      expect(run.lines.join('\n')).toMatch(/--store|--replace-world|DCB_STORE/)
    }
    // A URL from the environment is named as coming from there.
    expect(runs[2]!.lines.join('\n')).toContain('DCB_STORE "postgres://" names no host')
    expect(runs[0]!.lines.join('\n')).toContain('postgres://USER:PASSWORD@HOST:PORT/DATABASE')
    expect(runs[1]!.lines.join('\n')).toContain('not mysql://')
    expect(runs[3]!.lines.join('\n')).toContain('--in-memory')
  })

  it('a database with a newer schema is refused naming both versions, left as it was', async () => {
    await pg.createDatabase('newer')
    await pg.query(`CREATE TABLE dcb_meta (key text PRIMARY KEY, value text NOT NULL); INSERT INTO dcb_meta VALUES ('schema_version', '99')`, [], 'newer')
    const run = await refused(['--store', pg.url('newer')])
    expect(run.code).toBe(1)
    expect(run.lines).toHaveLength(1)
    expect(run.lines[0]).toMatch(/schema version 99, newer than this dcb knows \(1\)/)
    expect(await tables('newer')).toEqual(['dcb_meta'])
    expect((await pg.query(`SELECT key, value FROM dcb_meta`, [], 'newer')).rows).toEqual([{ key: 'schema_version', value: '99' }])
  })

  /** The schema version database `db` holds. */
  const schemaVersion = async (db: string) => Number((await pg.query(`SELECT value FROM dcb_meta WHERE key = 'schema_version'`, [], db)).rows[0].value)

  describe('a new database', () => {
    // One database through two starts: the tests run in order.
    let url: string
    let version: number
    beforeAll(async () => {
      url = await pg.createDatabase('fresh')
      await up(url)
      version = await schemaVersion('fresh')
    }, 60_000)

    it('gets the dcb tables at its first start', async () => {
      expect(await tables('fresh')).toEqual(['dcb_changes', 'dcb_journals', 'dcb_meta', 'dcb_requests', 'dcb_sessions', 'dcb_snapshots'])
    })

    it('keeps the schema version its first start wrote through a second start', async () => {
      // A second start finds its tables and keeps them (no migration runs twice).
      const b = await up(url)
      expect((await control(b.url, '/health')).body.store.schema_version).toBe(version)
    })
  })

  it('health names the database DCB_STORE names, with its schema version', async () => {
    const url = await pg.createDatabase('fresh_env')
    const a = await up('', [], { DCB_STORE: url })
    const health = await control(a.url, '/health')
    expect(health.http).toBe(200)
    expect(health.body.store).toMatchObject({ kind: 'postgres', database: `127.0.0.1:${pg.port}/fresh_env`, schema_version: await schemaVersion('fresh_env') })
  })

  /** The world digest database `db` holds. */
  const digestOf = async (db: string) => (await pg.query(`SELECT value FROM dcb_meta WHERE key = 'world_digest'`, [], db)).rows[0].value

  it('a replica of another world is refused, naming --replace-world, the database left as it was', async () => {
    const url = await pg.createDatabase('worlds')
    const old = await up(url)
    const before = await digestOf('worlds')
    const other = await refused(['--store', url, '--fixtures', OTHER_WORLD])
    expect(other.code).toBe(1)
    expect(other.lines).toHaveLength(1)
    expect(other.lines[0]).toMatch(/serves another world/)
    expect(other.lines[0]).toContain('--replace-world')
    expect(await digestOf('worlds')).toBe(before)
    expect((await control(old.url, '/health')).http).toBe(200)
  })

  it('--replace-world makes its world the database’s: the old world is refused then', async () => {
    const url = await pg.createDatabase('worlds_replaced')
    const old = await up(url)
    const digest = () => digestOf('worlds_replaced')
    const before = await digest()
    await old.stop()
    const replaced = await up(url, ['--fixtures', OTHER_WORLD, '--replace-world'])
    expect(await digest()).not.toBe(before)
    // The new world is the database's: its replicas start without the option, the old world's are refused.
    const second = await up(url, ['--fixtures', OTHER_WORLD])
    for (const x of [replaced, second]) expect((await control(x.url, '/health')).http).toBe(200)
    const again = await refused(['--store', url])
    expect(again.code).toBe(1)
    expect(again.lines[0]).toMatch(/serves another world/)
  })

  it('--clock sets the clock of a new database only', async () => {
    const url = await pg.createDatabase('clock')
    const first = await up(url, ['--clock', '2026-01-31T00:00:00'])
    expect((await control(first.url, '/clock')).body).toMatchObject({ now: '2026-01-31T00:00:00.000000', frozen: true })
    await control(first.url, '/clock/advance', { by: 'PT1H' })
    await first.stop()
    const later = await up(url, ['--clock', '2027-06-01T00:00:00'])
    expect((await control(later.url, '/clock')).body).toMatchObject({ now: '2026-01-31T01:00:00.000000', frozen: true })
    expect(later.output()).toContain('--clock 2027-06-01T00:00:00 was not applied')
  })

  it('--clock on a replica of a database in use whose clock was never set (running real time): not applied, no time moves back for the others', async () => {
    const url = await pg.createDatabase('clockused')
    const first = await up(url)
    const init = await dcb(['init', '--msisdn', '60123456001', '--service', 'STREAMPLUS', '--country', 'my'], { env: { DCB_BASE_URL: first.url } })
    expect(init.code).toBe(0)
    const second = await up(url, ['--clock', '2026-01-31T00:00:00'])
    expect(second.output()).toContain('--clock 2026-01-31T00:00:00 was not applied')
    for (const s of [first, second]) expect((await control(s.url, '/clock')).body).toMatchObject({ frozen: false, offset_ms: 0 })
  })
})
