import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, writeJson, type Client } from '../helpers.js'
import { dcb } from './run.js'

// A support engineer's fixture with a new country and a rule, given to `dcb rules add` on a running
// server: the rule was added and the country left out without a word; a file of records only was
// checked as one rule ("step: must be one of …; Unrecognized keys: countries, …").
const tmp = tempDir()
let c: Client
beforeAll(async () => {
  c = await startClient()
})
afterAll(async () => {
  await c.close()
  tmp.cleanup()
})

const THAILAND = { code: 'th', name: 'Thailand', calling_code: '66', lengths: [11] }
const RULE = { id: 'x1', match: { msisdn: '60123456077' }, step: 'init', effect: { error: 'BARRED' } }

describe('dcb rules add with a fixture file that has records', () => {
  it('is refused, adding no rule, naming the records with where they load', async () => {
    const both = writeJson(tmp.dir, 'both.json', { countries: [THAILAND], rules: [RULE] })
    const r = await dcb(['rules', 'add', both, '--base-url', c.url])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(
      `dcb: ${both} has countries: a running sandbox takes rules only (records are loaded when a server starts: dcb serve --fixtures FILE, or dcb run --fixtures FILE); give a file with only "rules"\n`,
    )
    expect((await c.control('/rules')).body.runtime).toEqual([])
    const records = writeJson(tmp.dir, 'records.json', { countries: [THAILAND], carriers: [] })
    const only = await dcb(['rules', 'add', records, '--base-url', c.url])
    expect(only.code).toBe(2)
    expect(only.stderr).toContain(`dcb: ${records} has countries, carriers: a running sandbox takes rules only`)
    // A file of rules (with a description) is added as before.
    const rules = writeJson(tmp.dir, 'rules.json', { description: 'ticket', rules: [RULE] })
    expect((await dcb(['rules', 'add', rules, '--base-url', c.url])).code).toBe(0)
    expect((await c.control('/rules')).body.runtime.map((r: { id: string }) => r.id)).toEqual(['x1'])
  })
})
