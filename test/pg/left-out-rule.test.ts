/**
 * Issue 43 on the shared store: a database holding a runtime rule over the regex bounds, as an older
 * version stored it, still starts a replica. The replica leaves the rule out, says so on stderr, and
 * answers merchant calls as if the rule were not there: the call it barred succeeds (as a data file does: test/cli/regex-cost.test.ts).
 * Real binaries on loopback; the rule's regex is rewritten in the database's rows.
 */
import { describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { outputShows } from '../wait.js'
import { BARRED_BY_WIDE, storeOverCostRule } from './older-rule.js'
import { control, merchant } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

const NOTE = /^dcb: session "default": runtime rule wide is left out \(match\.regex: too costly to compile: .*\); remove it with dcb rules remove wide$/m
const init = (base: string, headers: Record<string, string> = {}) =>
  merchant(base, 'init', { msisdn: BARRED_BY_WIDE, service_code: 'STREAMPLUS', country_code: 'my' }, headers)
const says = (s: Served, text: RegExp) => outputShows(s.child, s.output, text)

describe('a stored rule over the regex bounds, on the shared store', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it('a replica starting on it leaves the rule out of the default session, saying so on stderr', async () => {
    const db = 'left_out_default'
    await pg.createDatabase(db)
    expect(await storeOverCostRule(pg, db, ['default'])).toBeGreaterThan(0)
    const [a] = await replicas.start(pg.url(db), 1)
    await says(a!, NOTE)
    const answered = await init(a!.url)
    expect(answered.http).toBe(200)
    expect(answered.body).toMatchObject({ status: 'SUCCESS', message: '' })
    // Not in force (`rules`); still listed as added (`runtime`), so that it can be removed.
    const listed = (await control(a!.url, '/rules')).body
    expect(listed.rules.map((r: { id: string }) => r.id)).not.toContain('wide')
    expect(listed.runtime.map((r: { id: string }) => r.id)).toContain('wide')
  })

  it('a replica starting on it leaves the rule out of a named session stored before, naming the session on stderr', async () => {
    const db = 'left_out_named'
    await pg.createDatabase(db)
    expect(await storeOverCostRule(pg, db, ['alice'])).toBeGreaterThan(0)
    const [a] = await replicas.start(pg.url(db), 1)
    await says(
      a!,
      /^dcb: session "alice": runtime rule wide is left out \(match\.regex: too costly to compile: .*\); remove it with dcb rules remove wide --session alice$/m,
    )
    const answered = await init(a!.url, { 'x-dcb-session': 'alice' })
    expect(answered.http).toBe(200)
    expect(answered.body).toMatchObject({ status: 'SUCCESS', message: '' })
  })
})
