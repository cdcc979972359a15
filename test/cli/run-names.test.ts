/**
 * A run file whose steps give the same `as` name twice: the later result replaced the earlier, so a
 * reference or expect meant for the first read the second. The file is refused, naming both steps and
 * the name, before the sandbox is reset or anything is sent; an `as` name that is another step's action,
 * left as that step's name, clashes the same way. Through the binary against a real server.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir, useSandbox, writeJson } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())
const run = (file: string) => dcb(['run', file], { env: { DCB_BASE_URL: c.url, DCB_SESSION: undefined, DCB_API_KEY: undefined } })

describe('dcb run: step names', () => {
  it('the same as name on two steps refuses the file naming both steps, before anything is reset or sent', async () => {
    await c.subscribe('60123456001')
    const file = writeJson(tmp.dir, 'twice.run.json', {
      steps: [
        { as: 'first', init: { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' } },
        { otp: '60123456002' },
        { as: 'first', init: { msisdn: '60123456003', service_code: 'STREAMPLUS', country_code: 'my' } },
        { expect: { 'first.payload.carrier_code': 'sbx-my-otp' } },
      ],
    })
    const r = await run(file)
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(
      `dcb: ${file}: steps 1 and 3 are both named "first" ($.steps[0].as, $.steps[2].as): the later result would replace the earlier; give each its own name\n`,
    )
    // Not reset (the subscription made before is there), nothing sent (the request log lists newest first).
    expect((await c.control('/subscriptions')).body.subscriptions).toHaveLength(1)
    expect((await c.control('/requests')).body.requests.map((e: { path: string }) => e.path)).toEqual(['/subscriptions/verify', '/subscriptions/init'])
  })

  it("an as name that is another step's action left as its name clashes too, either way round; nothing is sent", async () => {
    const init = (msisdn: string) => ({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
    const after = writeJson(tmp.dir, 'as-then-action.run.json', {
      steps: [{ as: 'init', init: init('60123456004') }, { otp: '60123456004' }, { init: init('60123456005') }],
    })
    const before = writeJson(tmp.dir, 'action-then-as.run.json', {
      steps: [{ init: init('60123456004') }, { otp: '60123456004' }, { as: 'otp', otp: '60123456004' }, { as: 'init', init: init('60123456005') }],
    })
    const sent = (await c.control('/requests')).body.requests.length
    const a = await run(after)
    expect([a.code, a.stdout]).toEqual([2, ''])
    expect(a.stderr).toBe(
      `dcb: ${after}: steps 1 and 3 are both named "init" ($.steps[0].as, the action of $.steps[2]): the later result would replace the earlier; give each its own name\n`,
    )
    const b = await run(before)
    expect([b.code, b.stdout]).toEqual([2, ''])
    expect(b.stderr).toBe(
      `dcb: ${before}: steps 2 and 3 are both named "otp" (the action of $.steps[1], $.steps[2].as): the later result would replace the earlier; give each its own name\n`,
    )
    expect((await c.control('/requests')).body.requests).toHaveLength(sent)
  })

  it('a file runs with names left to the action repeating (two otp steps) beside distinct as names', async () => {
    const file = writeJson(tmp.dir, 'distinct.run.json', {
      steps: [
        { as: 'a', init: { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' } },
        { otp: '60123456002' },
        { as: 'b', init: { msisdn: '60123456003', service_code: 'STREAMPLUS', country_code: 'my' } },
        { otp: '60123456003' },
        { expect: { 'a.message': '', 'b.message': '' } },
      ],
    })
    const r = await run(file)
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toContain('✔ 5 steps, 2 expectations passed')
  })
})
