import { describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { control, merchant } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

// What the host of sessions answers on replicas of one database: the session cap, the clock new
// sessions and resets start at, the sessions' counts. Replicas started with different options, so
// each test starts its own (the real binary).
describe('replicas on one database: the sessions they share', () => {
  const pg = usePostgres()
  const replicas = useReplicas()
  async function up(url: string, args: string[] = []): Promise<Served> {
    const [s] = await replicas.start(url, 1, args)
    return s!
  }
  const as = (name: string) => ({ 'x-dcb-session': name })
  const named = async (db: string) => Number((await pg.query(`SELECT count(*) FROM dcb_sessions WHERE name <> 'default'`, [], db)).rows[0].count)

  it("--max-sessions counts the database's sessions: a replica at the cap refuses only a new one, serving the sessions another made", async () => {
    const url = await pg.createDatabase('cap')
    const a = await up(url, ['--max-sessions', '1'])
    const b = await up(url)
    expect((await control(a.url, '/clock', undefined, as('s1'))).http).toBe(200)
    expect((await control(b.url, '/clock', undefined, as('s2'))).http).toBe(200)
    // s2 exists: A serves it (a merchant call and a control call), and lists both.
    const init = await merchant(a.url, 'init', { msisdn: '60123456010', service_code: 'STREAMPLUS', country_code: 'my' }, as('s2'))
    expect([init.http, init.body.status]).toEqual([200, 'SUCCESS'])
    expect((await control(a.url, '/otp?msisdn=60123456010', undefined, as('s2'))).http).toBe(200)
    const list = await control(a.url, '/sessions')
    expect(list.http).toBe(200)
    expect(list.body.sessions.map((s: { name: string }) => s.name)).toEqual(['default', 's1', 's2'])
    // A new session through A: the database holds 2 of A's 1.
    const over = await control(a.url, '/clock', undefined, as('s3'))
    expect(over).toEqual({
      http: 429,
      body: {
        error: 'SESSION_LIMIT',
        message:
          "the shared sandbox holds 2 sessions, at or past this server's limit of 1 (--max-sessions, counted over every replica); delete one with DELETE /_sandbox/sessions/NAME",
      },
    })
    expect((await merchant(a.url, 'init', { msisdn: '60123456011', service_code: 'STREAMPLUS', country_code: 'my' }, as('s3'))).http).toBe(429)
    // Deletes through A: its own session and the one B made.
    expect(await control(a.url, '/sessions/s1', undefined, {}, 'DELETE')).toEqual({ http: 200, body: { deleted: 's1' } })
    expect((await control(a.url, '/clock', undefined, as('s3'))).http).toBe(429)
    expect(await control(a.url, '/sessions/s2', undefined, {}, 'DELETE')).toEqual({ http: 200, body: { deleted: 's2' } })
    expect(await control(a.url, '/sessions/s2', undefined, {}, 'DELETE')).toMatchObject({ http: 404, body: { error: 'SESSION_NOT_FOUND' } })
    expect((await control(a.url, '/clock', undefined, as('s3'))).http).toBe(200)
    expect(await named(url.slice(url.lastIndexOf('/') + 1))).toBe(1)
    for (const x of [a, b]) expect((await control(x.url, '/sessions')).body.sessions.map((s: { name: string }) => s.name)).toEqual(['default', 's3'])
  })

  it('replicas making new sessions at once never pass the cap together', async () => {
    const url = await pg.createDatabase('capraced')
    const both = [await up(url, ['--max-sessions', '2']), await up(url, ['--max-sessions', '2'])]
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => control(both[i % 2]!.url, '/clock', undefined, as(`x${i}`))))
    expect(answers.map((r) => r.http).sort()).toEqual([200, 200, 429, 429, 429, 429])
    expect(await named('capraced')).toBe(2)
    const made = answers.flatMap((r, i) => (r.http === 200 ? [`x${i + 1}`] : []))
    for (const x of both)
      expect((await control(x.url, '/sessions')).body.sessions.map((s: { name: string }) => s.name).sort()).toEqual(['default', ...made].sort())
  })

  it('a replica whose --clock was not applied (a database in use) starts new sessions and resets as the others do', async () => {
    const url = await pg.createDatabase('clockkept')
    const first = await up(url)
    expect((await merchant(first.url, 'init', { msisdn: '60123456010', service_code: 'STREAMPLUS', country_code: 'my' })).http).toBe(200)
    const a = await up(url, ['--clock', '2030-01-01T00:00:00'])
    expect(a.output()).toContain(
      '--clock 2030-01-01T00:00:00 was not applied, nor to new sessions and resets (they start where the database says, through every replica)',
    )
    for (const [x, name] of [
      [a, 'viaA'],
      [first, 'viaB'],
    ] as const)
      expect((await control(x.url, '/clock', undefined, as(name))).body).toMatchObject({ frozen: false, offset_ms: 0 })
    for (const x of [a, first]) {
      const reset = await control(x.url, '/reset', {}, as('viaB'))
      expect(reset.http).toBe(200)
      expect(reset.body.clock).toMatchObject({ frozen: false, offset_ms: 0 })
    }
  })

  it("a database made with --clock: every replica starts new sessions and resets at the database's clock, whatever its own --clock", async () => {
    const url = await pg.createDatabase('clockmade')
    const maker = await up(url, ['--clock', '2030-01-01T00:00:00'])
    const plain = await up(url)
    const other = await up(url, ['--clock', '2031-06-01T00:00:00'])
    expect(plain.output()).not.toContain('not applied')
    expect(other.output()).toContain('--clock 2031-06-01T00:00:00 was not applied')
    const at2030 = { now: '2030-01-01T00:00:00.000000', frozen: true }
    for (const [i, x] of [maker, plain, other].entries()) {
      expect((await control(x.url, '/clock', undefined, as(`new${i}`))).body).toMatchObject(at2030)
      expect((await control(x.url, '/clock/advance', { by: 'PT1H' }, as(`new${i}`))).http).toBe(200)
      expect((await control(x.url, '/reset', {}, as(`new${i}`))).body.clock).toMatchObject(at2030)
    }
    expect((await control(plain.url, '/clock')).body).toMatchObject(at2030)
  })

  it('the sessions list counts the requests the shared request log holds, the same through every replica', async () => {
    const url = await pg.createDatabase('counts')
    const [a, b] = [await up(url), await up(url)]
    const init = (x: Served, msisdn: string, headers: Record<string, string> = as('s1')) =>
      merchant(x.url, 'init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, headers).then((r) => expect(r.http).toBe(200))
    const counts = async (x: Served) =>
      Object.fromEntries((await control(x.url, '/sessions')).body.sessions.map((s: { name: string; requests: number }) => [s.name, s.requests]))
    // A replica writes its own entries to the database before it counts: each count below is exact.
    for (const m of ['60123456020', '60123456021', '60123456022']) await init(a, m)
    expect(await counts(a)).toEqual({ default: 0, s1: 3 })
    for (const m of ['60123456023', '60123456024']) await init(b, m)
    await init(b, '60123456030', {})
    expect(await counts(b)).toEqual({ default: 1, s1: 5 })
    expect(await counts(a)).toEqual({ default: 1, s1: 5 })
    expect((await control(b.url, '/requests', undefined, as('s1'))).body.requests).toHaveLength(5)
  })
})
