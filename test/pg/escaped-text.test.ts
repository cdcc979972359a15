import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { control, merchant } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

// Texts go to PostgreSQL as bind parameters or as escape strings (E'…'), so what they say does not
// depend on standard_conforming_strings: on a database that sets it off, every replica reads back
// what was written, and a replica restarted on it starts.
const TRICKY = `back\\slash \\n \\' 'quote' ''two'' "dq" new\nline\ttab \\\\ 😀 𝄞 é`
const CLOCK = ['--clock', '2026-01-31T00:00:00']
const MSISDN = '60123456001'

describe('a database with standard_conforming_strings = off', () => {
  const pg = usePostgres()
  const replicas = useReplicas()
  // The fixtures' folders, removed once the block ends: replicas started in a beforeAll read them across tests.
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  /**
   * Database `db` set so, two replicas on it with a fixture's text, and an MO and a rule of TRICKY written
   * through the first: the replicas, and what a replica reads back (asserted).
   */
  async function written(db: string) {
    const url = await pg.createDatabase(db)
    await pg.query(`ALTER DATABASE ${db} SET standard_conforming_strings = off`)
    expect((await pg.query(`SELECT current_setting('standard_conforming_strings') AS s`, [], db)).rows[0].s).toBe('off')
    const dir = mkdtempSync(join(os.tmpdir(), 'dcb-escapes-'))
    dirs.push(dir)
    const fixtures = join(dir, 'texts.json')
    writeFileSync(fixtures, JSON.stringify({ messages: { otp: { en: `Code {otp} ${TRICKY}` } } }))
    const args = [...CLOCK, '--fixtures', fixtures]
    const [a, b] = (await replicas.start(url, 2, args)) as [Served, Served]
    // The most unusual session name there is room for: every character a name may hold.
    const session = { 'x-dcb-session': 'A.b_c-9' }

    const init = await merchant(a.url, 'init', { msisdn: MSISDN, service_code: 'STREAMPLUS', country_code: 'my' }, session)
    expect(init.body, JSON.stringify(init)).toMatchObject({ status: 'SUCCESS' })
    const mo = await control(a.url, '/mo', { msisdn: MSISDN, short_code: '32123', text: TRICKY }, session)
    expect(mo.http).toBe(200)
    const rule = { id: `r ${TRICKY}`, description: TRICKY, match: { regex: '^6012\\d{3}9\\d+$' }, step: 'init', effect: { error: 'NOT_ELIGIBLE' } }
    expect((await control(a.url, '/rules', rule, session)).http).toBe(200)

    /** What a replica reads back: the OTP's text (a fixture's), the MO's, the rule. */
    const readBack = async (base: string) => {
      const listed = await control(base, `/messages?msisdn=${MSISDN}`, undefined, session)
      expect(listed.http, JSON.stringify(listed.body)).toBe(200)
      const messages = listed.body.messages as { kind: string; text: string }[]
      expect(messages.find((m) => m.kind === 'otp')?.text, `the OTP's text through ${base}`).toMatch(new RegExp(`^Code \\d+ ${escapeRegExp(TRICKY)}$`))
      expect(JSON.stringify(messages), `the MO through ${base}`).toContain(JSON.stringify(TRICKY).slice(1, -1))
      const rules = (await control(base, '/rules', undefined, session)).body.rules as { id: string; description?: string; match: unknown }[]
      expect(
        rules.find((r) => r.id === rule.id),
        `the rule through ${base}`,
      ).toMatchObject({ description: TRICKY, match: rule.match })
      const sessions = (await control(base, '/sessions')).body.sessions as { name: string }[]
      expect(sessions.map((s) => s.name)).toContain('A.b_c-9')
    }
    return { url, args, a, b, rule, session, readBack }
  }

  describe('text of backslashes, quotes, newlines, non-BMP characters in MO texts, rules, sessions, fixtures', () => {
    let w: Awaited<ReturnType<typeof written>>
    beforeAll(async () => {
      w = await written('escapes')
    }, 90_000)

    it('reads back as written through another replica', async () => {
      await w.readBack(w.b.url)
    })

    it('reads back as written through the replica that wrote it', async () => {
      await w.readBack(w.a.url)
    })

    it('takes effect as written in a rule: its regex (a backslash in it) matches', async () => {
      const refused = await merchant(w.b.url, 'init', { msisdn: '60123459001', service_code: 'STREAMPLUS', country_code: 'my' }, w.session)
      expect(refused.body).toMatchObject({ status: 'FAIL', message: 'NOT_ELIGIBLE' })
    })

    it('is kept as written in the request log', async () => {
      const requests = (await control(w.b.url, '/requests?limit=50', undefined, w.session)).body
      expect(JSON.stringify(requests)).toContain(JSON.stringify(TRICKY).slice(1, -1))
    })
  })

  it('a replica restarted on it reads back every text as written', async () => {
    const { url, args, readBack } = await written('escapes_restart')
    await replicas.stop()
    // A replica started again reads the whole state from the database.
    const [again] = (await replicas.start(url, 1, args)) as [Served]
    await readBack(again.url)
  }, 90_000)
})

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
