/**
 * The merchant calls are declared once, in `MERCHANT_CALLS` (`src/contract/merchant-calls.ts`): path,
 * body fields, answer fields, outcomes. The router, OpenAPI, the clients and the sandbox read it, so
 * each declared call is checked to be served, documented and callable from the declaration alone;
 * and a merchant path written again elsewhere in the sources (which would drift unseen) is searched for.
 * Likewise a control path: the router and replay read it off `contract/calls.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { merchantClient, type FetchInit } from '../../src/client/fetch.js'
import { CONTROL_CALLS, SESSION_CALLS } from '../../src/contract/calls.js'
import { PAYLOAD_SCHEMAS } from '../../src/contract/merchant.js'
import { MERCHANT_CALLS, MERCHANT_OPERATIONS, type FieldRule, type MerchantOperation } from '../../src/contract/merchant-calls.js'
import { PAGE_CALLS } from '../../src/http/console.js'
import { openApiDocument } from '../../src/http/openapi.js'
import { createSandbox, type Sandbox } from '../../src/index.js'

const SRC = resolve(import.meta.dirname, '../../src')
const DEMO = 'sandbox-demo-key'
const fieldsOf = (op: MerchantOperation) => MERCHANT_CALLS[op].fields as Record<string, FieldRule>
const answerOf = (op: MerchantOperation) => Object.keys(MERCHANT_CALLS[op].answer)

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  )
}

/** Every string a source writes (literals and the text of templates), as the TypeScript parser reads them: comments are not code. */
function stringsOf(file: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, 'utf8'),
    ts.ScriptTarget.Latest,
    false,
    file.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS,
  )
  const found: { line: number; text: string }[] = []
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node))
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text: (node as ts.LiteralLikeNode).text })
    ts.forEachChild(node, visit)
  }
  ts.forEachChild(source, visit)
  return found
}

/** `file:line "text"` for each string of the files under `dirs` (outside `except`) that `writes` a path. */
function writtenOutside(dirs: string[], except: string, writes: (text: string) => boolean): string[] {
  return dirs
    .flatMap((d) => (d.endsWith('.ts') ? [join(SRC, d)] : sourceFiles(join(SRC, d))))
    .filter((f) => relative(SRC, f) !== except)
    .flatMap((f) => stringsOf(f).flatMap((s) => (writes(s.text) ? [`${relative(SRC, f)}:${s.line} ${JSON.stringify(s.text)}`] : [])))
}

let sandbox: Sandbox
beforeAll(async () => {
  sandbox = await createSandbox()
})
afterAll(() => sandbox.close())

const post = (path: string, body: string, method = 'POST') =>
  sandbox.fetch(`http://localhost${path}`, {
    method,
    headers: { 'api-key': DEMO, 'content-type': 'application/json' },
    body: method === 'POST' ? body : undefined,
  })

describe.each(MERCHANT_OPERATIONS)('the declared merchant call %s', (op) => {
  const call = MERCHANT_CALLS[op]
  const fields = fieldsOf(op)
  const first = Object.keys(fields)[0]!

  it('is routed to the merchant handler, which checks its declared fields', async () => {
    const r = await post(call.path, '{}')
    expect(r.status).toBe(400)
    expect(r.headers.get('x-dcb-reason')).toBe(`${first}: required`)
  })

  it('answers another method 405, allowing POST', async () => {
    const wrong = await post(call.path, '{}', 'GET')
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'POST'])
  })

  describe('its OpenAPI path', () => {
    const oa = () => (openApiDocument('test') as { paths: Record<string, any> }).paths[call.path]!.post

    it('has its operation id', () => {
      expect(oa()).toMatchObject({ operationId: op })
    })

    it('has its summary', () => {
      expect(oa()).toMatchObject({ summary: call.summary })
    })

    it('has the body of its fields, required unless optional', () => {
      const body = oa().requestBody.content['application/json'].schema
      expect(Object.keys(body.properties)).toEqual(Object.keys(fields))
      expect(body.required ?? []).toEqual(Object.keys(fields).filter((f) => !fields[f]!.optional))
    })

    it('has the payload of its answer', () => {
      const payload = oa().responses['200'].content['application/json'].schema.properties.payload.oneOf[0]
      expect(Object.keys(payload.properties)).toEqual(answerOf(op))
    })

    it('has its failures', () => {
      expect(Object.keys(oa().responses)).toContain('400')
    })
  })

  describe('as a function of the client', () => {
    /** Calls it with its first field on a client whose fetch records what it sends and answers a 400. */
    async function callClient() {
      const sent: [string, FetchInit][] = []
      const fake = async (url: string, init: FetchInit) => {
        sent.push([url, init])
        return new Response('{"status":"FAIL","message":"BAD_REQUEST","status_code":400,"payload":null}', { status: 400 })
      }
      const client = merchantClient(fake, 'http://h/base', { apiKey: 'k', headers: {} })
      const r = await client[op]({ [first]: 'x' } as never)
      return { sent, r }
    }

    it('posts its body to its path', async () => {
      const { sent } = await callClient()
      expect(sent.map(([url, init]) => [url, init.method, init.body])).toEqual([[`http://h/base${call.path}`, 'POST', JSON.stringify({ [first]: 'x' })]])
    })

    it('answers what the server answered (HTTP status, envelope)', async () => {
      const { r } = await callClient()
      expect(r).toMatchObject({ httpStatus: 400, envelope: { message: 'BAD_REQUEST' } })
    })
  })

  it("is a function of a sandbox, through the router (the reason is the handler's)", async () => {
    const r = await sandbox[op]({} as never)
    expect(r).toMatchObject({ httpStatus: 400, envelope: { message: 'BAD_REQUEST' }, reason: `${first}: required` })
  })
})

describe('the merchant calls are the declaration', () => {
  describe('each success of a whole OTP flow', () => {
    let answers: Record<
      MerchantOperation,
      Awaited<ReturnType<Sandbox['init']>> | Awaited<ReturnType<Sandbox['verify']>> | Awaited<ReturnType<Sandbox['status']>>
    >
    beforeAll(async () => {
      await sandbox.reset()
      const msisdn = '60123456001'
      const init = await sandbox.init({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
      const verif = init.envelope.status === 'SUCCESS' ? init.envelope.payload.verif_request_id! : ''
      const verify = await sandbox.verify({ verif_request_id: verif, otp: (await sandbox.otp(msisdn)).otp })
      const sub = verify.envelope.status === 'SUCCESS' ? verify.envelope.payload.subscription_id : ''
      const status = await sandbox.status({ subscription_id: sub })
      answers = { init, verify, status } as typeof answers
    })

    it('is a SUCCESS', () => {
      for (const op of MERCHANT_OPERATIONS) expect(answers[op].envelope.status, op).toBe('SUCCESS')
    })

    it('answers the declared payload fields, in their order', () => {
      for (const op of MERCHANT_OPERATIONS) expect(Object.keys(answers[op].envelope.payload!), op).toEqual(answerOf(op))
    })

    it('answers a payload its schema takes', () => {
      for (const op of MERCHANT_OPERATIONS) expect(PAYLOAD_SCHEMAS[op].safeParse(answers[op].envelope.payload).success, op).toBe(true)
    })
  })

  it('routes no merchant path that is not declared', async () => {
    expect((await post('/subscriptions/cancel', '{}')).status).toBe(404)
  })

  it('writes a merchant path in no source but the declaration (console included)', () => {
    const paths = MERCHANT_OPERATIONS.map((op) => MERCHANT_CALLS[op].path)
    expect(paths.length).toBeGreaterThan(0)
    expect(writtenOutside(['.'], 'contract/merchant-calls.ts', (text) => paths.some((p) => text.includes(p)))).toEqual([])
  })

  it('writes a control path in no source but its declaration (router, clients, console, request log readers, replay)', () => {
    const paths = [...Object.values(CONTROL_CALLS), ...Object.values(SESSION_CALLS)].map((c) => c.path.replace(/\/:\w+.*$/, ''))
    // A path as written: alone, or under /_sandbox (a template may go on from it).
    const writes = (text: string) => paths.some((p) => text === p || text.startsWith(`/_sandbox${p}`))
    expect(writtenOutside(['http', 'client', 'control', 'console', 'cli/replay.ts', 'cli/client.ts', 'cli/serve.ts'], 'contract/calls.ts', writes)).toEqual([])
  })

  it("names only calls the console's page declares in the console's script", () => {
    const declared = Object.keys(JSON.parse(PAGE_CALLS))
    const named = sourceFiles(join(SRC, 'console')).flatMap((f) => callNamesOf(f).map((n) => `${relative(SRC, f)} ${n}`))
    expect(named.length).toBeGreaterThan(10)
    expect(named.filter((n) => !declared.includes(n.split(' ')[1]!))).toEqual([])
  })

  it("serves the console's page with each declared control call's method and path", async () => {
    const page = await (await sandbox.fetch('http://localhost/')).text()
    const calls = JSON.parse(/<script type="application\/json" id="dcb-calls">([^<]*)<\/script>/.exec(page)![1]!)
    for (const [name, c] of Object.entries({ ...CONTROL_CALLS, ...SESSION_CALLS }))
      expect(calls[name]).toEqual({ method: c.method, path: `/_sandbox${c.path}` })
  })
})

/**
 * The names a console script gives `call(...)`, `pathOf(...)` and the clock page's `move(...)`: the
 * first argument, a string. A helper passing its own `name` on is checked at its callers.
 */
function callNamesOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.JS)
  const names: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && ['call', 'pathOf', 'move'].includes(node.expression.text)) {
      const first = node.arguments[0]
      if (!(first && ts.isIdentifier(first) && first.text === 'name'))
        names.push(first && ts.isStringLiteralLike(first) ? first.text : `(not a string: ${first?.getText(source)})`)
    }
    ts.forEachChild(node, visit)
  }
  ts.forEachChild(source, visit)
  return names
}
