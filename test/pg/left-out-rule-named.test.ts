/**
 * Issue 43 on the shared store: a named session a replica opens after its start-up (written by another
 * process meanwhile) that holds a rule over the regex bounds, as an older version stored it. The
 * replica leaves the rule out, as at start-up (test/pg/left-out-rule.test.ts), and says so on stderr.
 */
import { describe, expect, it } from 'vitest'
import { BARRED_BY_WIDE, putBack, setAside, storeOverCostRule } from './older-rule.js'
import { control, merchant, until } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

describe('a stored rule over the regex bounds in a session opened after start-up', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it('the replica opening it leaves the rule out of the session, saying so on stderr', async () => {
    const db = 'left_out_opened'
    await pg.createDatabase(db)
    expect(await storeOverCostRule(pg, db, ['alice'])).toBeGreaterThan(0)
    // Alice is not there while the replica starts; then written as another process would, unheard.
    await setAside(pg, db, 'alice')
    const [a] = await replicas.start(pg.url(db), 1)
    // Answered once start-up is over (requests wait for it): the sessions stored then are open.
    expect((await control(a!.url, '/health')).http).toBe(200)
    await putBack(pg, db)
    const answered = await merchant(a!.url, 'init', { msisdn: BARRED_BY_WIDE, service_code: 'STREAMPLUS', country_code: 'my' }, { 'x-dcb-session': 'alice' })
    expect(answered.http).toBe(200)
    expect(answered.body).toMatchObject({ status: 'SUCCESS', message: '' })
    const note =
      /^dcb: warning: session "alice": runtime rule wide is left out \(match\.regex: too costly to compile: .*\); remove it with dcb rules remove wide --session alice$/m
    await until('the replica to say the rule is left out', async () => note.test(a!.output())).catch((e: Error) => {
      throw new Error(`${e.message}; its output:\n${a!.output()}`)
    })
  })
})
