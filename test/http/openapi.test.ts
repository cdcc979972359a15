import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CONTROL_ROUTES, SESSION_ROUTES } from '../../src/http/control-routes.js'
import { RequestLogEntry, SessionsAnswer, SubscriptionDetail } from '../../src/contract/control.js'
import { CONTROL_CALLS } from '../../src/contract/calls.js'
import { tempDir, useSandbox } from '../helpers.js'

const c = useSandbox()
const REDOCLY = join(process.cwd(), 'node_modules', '@redocly', 'cli', 'bin', 'cli.js')

describe('the control routes', () => {
  it('are the declared calls, each with a route (the dispatch table is made from the declarations, the routes load on first use)', () => {
    const declared = new Set(Object.values(CONTROL_CALLS).map((c) => `${c.method} ${c.path}`))
    expect(new Set(CONTROL_ROUTES.map((r) => `${r.method} ${r.path}`))).toEqual(declared)
  })
})

describe('/openapi.json', () => {
  it('documents every control call beside the merchant API', async () => {
    const doc = await (await fetch(`${c.url}/openapi.json`)).json()
    for (const r of [...CONTROL_ROUTES, ...SESSION_ROUTES]) {
      const op = doc.paths[`/_sandbox${r.path.replace(/:(\w+)/g, '{$1}')}`]?.[r.method.toLowerCase()]
      expect(op, `${r.method} ${r.path}`).toMatchObject({ operationId: r.operationId, responses: { '200': expect.anything(), '403': expect.anything() } })
    }
    const advance = doc.paths['/_sandbox/clock/advance'].post
    expect(advance.requestBody.content['application/json'].schema.required).toEqual(['by'])
    expect(advance.responses['400'].content['application/json'].schema.properties.error.enum).toEqual(['BAD_REQUEST', 'BAD_DURATION', 'CLOCK_LIMIT'])
    expect(doc.paths['/_sandbox/sessions/{name}'].delete.responses['404'].content['application/json'].schema.properties.error.enum).toEqual([
      'SESSION_NOT_FOUND',
    ])
    expect(doc.paths['/_sandbox/sessions'].get.responses['200'].content['application/json'].schema.properties.sessions.items.required).toEqual([
      'name',
      'subscriptions',
      'messages',
      'requests',
      'now',
    ])
    // The schema is what the server answers.
    await fetch(`${c.url}/_sandbox/clock`, { headers: { 'x-dcb-session': 'documented' } })
    const listed = SessionsAnswer.strict().parse(await (await fetch(`${c.url}/_sandbox/sessions`)).json())
    expect(listed.sessions.map((s) => s.name)).toContain('documented')
    // A subscription says whether a carrier cancel is taken (the console's Cancel button follows it).
    const subscription = doc.paths['/_sandbox/subscriptions/{id}'].get.responses['200'].content['application/json'].schema
    expect(subscription.required).toContain('cancelable')
    expect(subscription.properties.cancelable.type).toBe('boolean')
    const id = await c.subscribe('60123456001')
    expect(SubscriptionDetail.strict().parse(await (await fetch(`${c.url}/_sandbox/subscriptions/${id}`)).json())).toMatchObject({
      cancelable: true,
      timeline: expect.any(Array),
    })
    // Each request-log entry is as documented, a merchant call's with its headers.
    const { requests } = (await (await fetch(`${c.url}/_sandbox/requests`)).json()) as { requests: unknown[] }
    const entries = requests.map((e) => RequestLogEntry.strict().parse(e))
    expect(entries.filter((e) => e.headers?.['content-type'] === 'application/json').length).toBeGreaterThan(0)
    expect(doc.paths['/_sandbox/otp'].get.parameters.map((p: any) => [p.name, p.required])).toEqual([
      ['msisdn', false],
      ['verif_request_id', false],
      ['wait', false],
    ])
  })

  it('documents the query numbers as numbers (the server reads them as decimal digits: the schemas are unchanged)', async () => {
    const doc = await (await fetch(`${c.url}/openapi.json`)).json()
    const param = (path: string, name: string) => doc.paths[`/_sandbox${path}`].get.parameters.find((p: { name: string }) => p.name === name)
    const wait = 'wait up to this many seconds for an OTP to arrive'
    expect(param('/otp', 'wait')).toEqual({
      name: 'wait',
      in: 'query',
      required: false,
      description: wait,
      schema: { description: wait, type: 'number', minimum: 0, maximum: 120 },
    })
    const limit = 'at most this many (default 200)'
    expect(param('/messages', 'limit')).toEqual({
      name: 'limit',
      in: 'query',
      required: false,
      description: limit,
      schema: { description: limit, type: 'integer', minimum: 1, maximum: 5000 },
    })
    // A list's limit has its cap (issue 43: an unbounded one let reads exhaust memory).
    for (const [path, name, minimum, maximum] of [
      ['/requests', 'limit', 1, 1_000_000],
      ['/requests', 'since', 0, Number.MAX_SAFE_INTEGER],
      ['/subscriptions', 'limit', 1, 100_000],
    ] as const)
      expect(param(path, name).schema, `${path} ${name}`).toMatchObject({ type: 'integer', minimum, maximum })
  })

  it('passes the redocly linter with no errors', async () => {
    const t = tempDir()
    try {
      const file = join(t.dir, 'openapi.json')
      writeFileSync(file, await (await fetch(`${c.url}/openapi.json`)).text())
      const out = await new Promise<string>((resolve) =>
        execFile(
          process.execPath,
          [REDOCLY, 'lint', file, '--format=json'],
          { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' }, timeout: 60_000 },
          (_err, stdout) => resolve(stdout),
        ),
      )
      const report = JSON.parse(out) as {
        totals: { errors: number }
        problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[]
      }
      const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)
      expect(errors).toEqual([])
      expect(report.totals.errors).toBe(0)
    } finally {
      t.cleanup()
    }
  }, 60_000)
})
