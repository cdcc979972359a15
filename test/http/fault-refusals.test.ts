/**
 * The connection effects refused by name (fixtures.md "What the connection does"): by the control
 * API, in a fixture file (file and JSON path) and by `dcb rules add`, each naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { layerWorlds } from '../../src/core/layering.js'
import { startClient, tempFolderPerTest, type Client } from '../helpers.js'
import { dcb } from '../cli/run.js'

const rule = (step: string, effect: Record<string, unknown>) => ({ id: 'bad', match: { ending: '091' }, step, effect })

/** Each refused rule, and the field and words its refusal names. */
const REFUSED: [string, ReturnType<typeof rule>, string, RegExp][] = [
  [
    'a fault on a step with no connection',
    rule('otp', { fault: 'reset' }),
    'effect.fault',
    /step otp does not take fault \(the steps that take it: api, init, verify, status\)/,
  ],
  ['when on status', rule('status', { http: 503, when: 'after' }), 'effect.when', /step status does not take when \(the steps that take it: init, verify\)/],
  [
    'a body over 16 KiB',
    rule('init', { http: 503, body: { text: 'x'.repeat(16 * 1024 + 1), content_type: 'text/plain' } }),
    'effect.body.text',
    /at most 16384 bytes/,
  ],
  ['retry_after without http', rule('init', { fault: 'close', retry_after: 3 }), 'effect.retry_after', /needs http/],
  ['hang_ms over 60000', rule('verify', { fault: 'hang', hang_ms: 60001 }), 'effect.hang_ms', /60000/],
  ['an unknown fault kind', rule('init', { fault: 'explode' }), 'effect.fault', /must be one of reset, close, truncate, garbage, hang/],
  ['hang_ms without a hang', rule('init', { fault: 'reset', hang_ms: 10 }), 'effect.hang_ms', /needs fault: hang/],
  ['a fault with http', rule('init', { fault: 'reset', http: 503 }), 'effect.fault', /give either fault or http, not both/],
  ['an http status not taken', rule('init', { http: 404 }), 'effect.http', /must be one of 429, 500, 502, 503, 504/],
  ['a gateway status on charge', rule('charge', { http: 503 }), 'effect.http', /step charge takes http 500 only/],
]

describe('connection effects refused by name', () => {
  let c: Client
  const files = tempFolderPerTest()
  beforeAll(async () => {
    c = await startClient()
  })
  afterAll(() => c.close())

  it.each(REFUSED)('%s: by POST /_sandbox/rules and in a fixture file', async (_what, bad, field, words) => {
    const r = await c.control('/rules', bad)
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ error: 'BAD_RULE', message: expect.stringContaining(`${field}:`) })
    expect(r.body.message).toMatch(words)
    const layered = layerWorlds([{ source: 'ticket.json', data: { rules: [bad] } }])
    const problems = layered.ok ? [] : layered.problems
    expect(problems.some((p) => p.startsWith(`ticket.json: $.rules[0].${field}:`) && words.test(p))).toBe(true)
  })

  it('dcb rules add refuses one with one line naming the field', async () => {
    const f = files.json('bad.json', [REFUSED[1]![1]])
    const r = await dcb(['rules', 'add', f, '--base-url', c.url])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/effect\.when: step status does not take when/)
    expect((await c.control('/rules')).body.rules.some((x: { id: string }) => x.id === 'bad')).toBe(false)
  })

  it('takes every effect where it belongs', async () => {
    for (const ok of [
      rule('api', { fault: 'garbage' }),
      rule('init', { fault: 'hang', hang_ms: 60000, when: 'after' }),
      rule('verify', { http: 504, body: 'empty', retry_after: 0, when: 'before' }),
      rule('status', { http: 429, body: { text: '{}', content_type: 'application/json' } }),
    ])
      expect((await c.control('/rules', { ...ok, id: undefined })).status).toBe(200)
  })
})
