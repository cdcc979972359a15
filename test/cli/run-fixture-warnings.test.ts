/**
 * dcb run --fixtures: the fixtures' warnings are printed on stderr as dcb serve --fixtures prints them
 * (a service left with no integration answers every Init 403: a run that then fails must not leave
 * the user without the reason the loader knew). Through the binary, against the server too.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir, writeJson } from '../helpers.js'
import { dcb, serve } from './run.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())

const fixtures = writeJson(tmp.dir, 'no-integration.json', { services: [{ code: 'GAMECLUB', integrations: [] }] })
const runFile = writeJson(tmp.dir, 'gameclub.run.json', {
  steps: [{ init: { msisdn: '60123456001', service_code: 'GAMECLUB', country_code: 'my' } }, { expect: { 'init.http': 403 } }],
})
const warning = `dcb: warning: ${fixtures}: $.services[0].integrations: service "GAMECLUB" has no integration: every Init for it answers 403 MERCHANT_SERVICE_NOT_CONFIGURED\n`

describe('dcb run --fixtures: the warnings of the fixtures', () => {
  it('go to stderr, as dcb serve --fixtures prints them', async () => {
    const r = await dcb(['run', runFile, '--fixtures', fixtures])
    expect(r.stderr).toBe(warning)
    expect(r.stdout).toContain('✔ 2 steps, 1 expectation passed')
    expect(r.code).toBe(0)
    // With --json too: the report stays alone on stdout.
    const json = await dcb(['run', runFile, '--fixtures', fixtures, '--json'])
    expect(json.stderr).toBe(warning)
    expect(JSON.parse(json.stdout).passed).toBe(true)
    // The same words as the server's start-up.
    const s = await serve(['--in-memory', '--fixtures', fixtures])
    try {
      expect(s.output()).toContain(warning)
    } finally {
      await s.stop()
    }
  })

  it('fixtures with no warning print none', async () => {
    const quiet = writeJson(tmp.dir, 'fine.json', { services: [{ code: 'GAMECLUB', name: 'Game Club' }] })
    const plain = writeJson(tmp.dir, 'plain.run.json', { steps: [{ init: { msisdn: '60123456001', service_code: 'GAMECLUB', country_code: 'my' } }] })
    const r = await dcb(['run', plain, '--fixtures', quiet])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
  })
})
