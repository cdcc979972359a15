/**
 * Issue 43 on the shared store: a rule regex past the server's bounds (src/core/regex-cost.ts) is
 * refused 400 by name on a replica of `dcb serve --store`, as on a data file
 * (test/cli/regex-cost.test.ts), and the refusal writes nothing to the database: the other replica
 * never lists the rule, and a session the call names is not made. Real binaries on loopback.
 */
import { describe, expect, it } from 'vitest'
import { control, until } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

/** 390 characters that compile to about 60,000 instructions (half a second and 50 MiB each, unbounded). */
const EXPANDING = '[0-9]{1,999}'.repeat(30)
const LONG = `^(${Array.from({ length: 60 }, (_, i) => `601234${String(i).padStart(5, '0')}`).join('|')})$`
const SIZE_REFUSAL = /match\.regex: too costly to compile: it expands to about \d+ instructions \(repeat bounds multiply\), the most a rule regex takes is 1000/
const LENGTH_REFUSAL = /match\.regex: too long: \d+ characters, the most a rule regex takes is 500/

/** A rule of `id` matching `regex`, to POST to /_sandbox/rules. */
const rule = (id: string, regex: string) => ({ id, match: { regex }, step: 'init', effect: { error: 'BARRED' } })
const session = (name: string) => ({ 'x-dcb-session': name })
/** The ids of the runtime rules a replica lists. */
const ruleIds = async (base: string) => ((await control(base, '/rules')).body.runtime as { id: string }[]).map((r) => r.id)
const sessionNames = async (base: string) => ((await control(base, '/sessions')).body.sessions as { name: string }[]).map((s) => s.name)

describe('a too costly rule regex on the shared store', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it('is refused 400 naming match.regex with the bound it passes, of size or of length', async () => {
    const url = await pg.createDatabase('regex_refused')
    const [a] = await replicas.start(url, 1)
    const size = await control(a!.url, '/rules', rule('wide', EXPANDING))
    expect(size.http).toBe(400)
    expect(size.body.error).toBe('BAD_RULE')
    expect(size.body.message).toMatch(SIZE_REFUSAL)
    const length = await control(a!.url, '/rules', rule('long', LONG))
    expect(length.http).toBe(400)
    expect(length.body.error).toBe('BAD_RULE')
    expect(length.body.message).toMatch(LENGTH_REFUSAL)
  })

  it('stores nothing: the other replica lists the rule taken after it, never the refused one', async () => {
    const url = await pg.createDatabase('regex_not_stored')
    const [a, b] = await replicas.start(url, 2)
    expect((await control(a!.url, '/rules', rule('wide', EXPANDING))).http).toBe(400)
    expect((await control(a!.url, '/rules', rule('long', LONG))).http).toBe(400)
    // A rule within the bounds, sent after them: once B lists it, B has read past where they would be.
    expect((await control(a!.url, '/rules', rule('within', '^60(?<n>[0-9]{1,15})$'))).http).toBe(200)
    expect(await until('B to list the rule taken', async () => (await ruleIds(b!.url)).includes('within') && ruleIds(b!.url))).toEqual(['within'])
    expect(await ruleIds(a!.url)).toEqual(['within'])
    // The database's changes hold the rule taken, as its regex reads, and neither refused one.
    const holding = async (text: string) =>
      (await pg.query(`SELECT count(*)::int AS n FROM dcb_changes WHERE strpos(changes, $1) > 0`, [text], 'regex_not_stored')).rows[0].n
    expect(await holding('(?<n>[0-9]{1,15})')).toBe(1)
    expect(await holding('[0-9]{1,999}')).toBe(0)
    expect(await holding('60123400059')).toBe(0)
  })

  it('makes no session: a refused call naming a new one leaves it in no row, listed by no replica', async () => {
    const url = await pg.createDatabase('regex_no_session')
    const [a, b] = await replicas.start(url, 2)
    expect((await control(a!.url, '/rules', rule('wide', EXPANDING), session('refused-one'))).http).toBe(400)
    // A session made after it: once B lists that one, it would list the refused call's too.
    expect((await control(a!.url, '/rules', rule('within', '^6099$'), session('taken-one'))).http).toBe(200)
    const listed = await until('B to list the session made after the refusal', async () => {
      const names = await sessionNames(b!.url)
      return names.includes('taken-one') && names
    })
    expect(listed).toEqual(['default', 'taken-one'])
    expect(await sessionNames(a!.url)).toEqual(['default', 'taken-one'])
    const rows = await pg.query(`SELECT name FROM dcb_sessions ORDER BY name`, [], 'regex_no_session')
    expect(rows.rows.map((r) => r.name)).toEqual(['default', 'taken-one'])
  })
})
