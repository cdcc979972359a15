import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FINDING_ADVICE } from '../../src/core/coverage.js'
import { tempDir, useSandbox } from '../helpers.js'
import { dcb } from './run.js'

// One server for the file, reset before each test (helpers.ts useSandbox).
const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())

const run = (args: string[]) => dcb(['coverage', ...args], { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined, DCB_SESSION: undefined } })

interface XmlElement {
  name: string
  attrs: Record<string, string>
  children: XmlElement[]
  text: string
}

/** A strict little XML parser (elements, attributes, text, character references): throws on anything malformed. */
function parseXml(src: string): XmlElement {
  let i = 0
  const fail = (what: string): never => {
    throw new Error(`malformed XML at ${i}: ${what}`)
  }
  const decode = (s: string) => {
    if (/&(?!(#\d+|#x[0-9a-f]+|lt|gt|amp|quot|apos);)/i.test(s)) fail(`a bare & in ${JSON.stringify(s)}`)
    if (/[<]/.test(s)) fail('a < in text or an attribute')
    return s
      .replace(/&#(\d+);/g, (_, d) => String.fromCharCode(Number(d)))
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&')
  }
  const decl = /^<\?xml [^?]*\?>\s*/.exec(src)
  if (!decl) fail('no XML declaration')
  i = decl![0].length
  const element = (): XmlElement => {
    const open = /^<([A-Za-z][\w.-]*)((?:\s+[A-Za-z][\w.-]*="[^"]*")*)\s*(\/?)>/.exec(src.slice(i))
    if (!open) fail('expected an element')
    i += open![0].length
    const attrs: Record<string, string> = {}
    for (const m of open![2]!.matchAll(/([A-Za-z][\w.-]*)="([^"]*)"/g)) {
      if (m[1]! in attrs) fail(`attribute ${m[1]} twice`)
      attrs[m[1]!] = decode(m[2]!)
    }
    const el: XmlElement = { name: open![1]!, attrs, children: [], text: '' }
    if (open![3]) return el
    for (;;) {
      const next = src.indexOf('<', i)
      if (next < 0) fail(`unclosed <${el.name}>`)
      el.text += decode(src.slice(i, next))
      i = next
      if (src.startsWith(`</${el.name}>`, i)) {
        i += el.name.length + 3
        return el
      }
      if (src.startsWith('</', i)) fail(`</...> does not close <${el.name}>`)
      el.children.push(element())
    }
  }
  const root = element()
  if (src.slice(i).trim()) fail('content after the root element')
  return root
}

async function traffic() {
  const sub = await c.subscribe('60123456001')
  await c.api('/subscriptions/status', { subscription_id: sub })
  await c.api('/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
}

describe('dcb coverage', () => {
  it('prints each merchant: the percentage, the outcomes never seen, the findings with their advice', async () => {
    const none = await run([])
    expect(none).toMatchObject({ code: 0, stdout: 'no merchant has traffic in this session yet\n', stderr: '' })
    await traffic()
    const r = await run([])
    expect(r.code).toBe(0)
    const total = (await c.control('/coverage')).body.coverage[0].total
    expect(r.stdout).toMatch(new RegExp(`^demo {2}${Math.floor(400 / total)}% of outcomes seen \\(4 of ${total}\\) since \\d{4}-\\d\\d-\\d\\dT`))
    // Each outcome never seen, on its own line with how to produce it in the world in force.
    expect(r.stdout).toContain('never seen (' + (total - 4) + '):\n    init.psms: Init on service STREAMPLUS')
    expect(r.stdout).toContain('    verify.INSUFFICIENT_FUNDS: Verify (after Init) for a number ending 201 (rule charge-201)\n')
    expect(r.stdout).not.toMatch(/^ {4}init\.otp/m)
    expect(r.stdout).toContain('! INIT_WHILE_ACTIVE x1 (latest: request log entry ')
    expect(r.stdout).toContain(FINDING_ADVICE.INIT_WHILE_ACTIVE)
    const json = await run(['--json'])
    expect(JSON.parse(json.stdout)).toEqual((await c.control('/coverage')).body)
  })

  it('--junit writes a JUnit report: a test case per outcome, failing when never seen, then a failing one per finding', async () => {
    await traffic()
    const file = join(tmp.dir, 'report.xml')
    const r = await run(['--junit', file])
    expect(r.code).toBe(0)
    const root = parseXml(readFileSync(file, 'utf8'))
    expect(root.name).toBe('testsuites')
    expect(root.children).toHaveLength(1)
    const suite = root.children[0]!
    const ids: string[] = (await c.control('/coverage')).body.coverage[0].outcomes.map((o: any) => o.id)
    const n = ids.length
    expect(suite.attrs).toMatchObject({ name: 'dcb.coverage.demo', tests: String(n + 1), failures: String(n - 4 + 1) })
    expect(root.attrs).toMatchObject({ tests: String(n + 1), failures: String(n - 4 + 1) })
    const cases = suite.children
    expect(cases.every((t) => t.name === 'testcase' && t.attrs.classname === 'dcb.coverage.demo')).toBe(true)
    expect(cases.slice(0, n).map((t) => t.attrs.name)).toEqual(ids)
    const seen = new Set(['init.otp', 'init.ALREADY_SUBSCRIBED', 'verify.SUCCESS', 'status.ACTIVE'])
    for (const t of cases.slice(0, n)) {
      const failure = t.children.find((x) => x.name === 'failure')
      if (seen.has(t.attrs.name!)) expect(failure).toBeUndefined()
      else expect(failure?.attrs.message).toBe('never seen')
    }
    expect(cases[n]!.attrs.name).toBe('finding INIT_WHILE_ACTIVE')
    expect(cases[n]!.children[0]).toMatchObject({ name: 'failure', attrs: { message: FINDING_ADVICE.INIT_WHILE_ACTIVE, type: 'INIT_WHILE_ACTIVE' } })
    expect(readFileSync(file, 'utf8')).toContain('type="INIT_WHILE_ACTIVE">1 time; latest: request log entry ')
  })

  it('--junit to a path that cannot be written says so in one line, exit 1', async () => {
    await traffic()
    const bad = await run(['--junit', join(tmp.dir, 'no-such-dir', 'r.xml')])
    expect(bad.code).toBe(1)
    expect(bad.stderr.trim().split('\n')).toHaveLength(1)
    expect(bad.stderr).toContain('cannot write the JUnit report')
  })

  it('--min exits 1 when a merchant shown is below it, 0 at or above it', async () => {
    expect((await run(['--min', '1'])).code).toBe(1)
    expect((await run(['--min', '0'])).code).toBe(0)
    await traffic()
    const pct: number = (await c.control('/coverage')).body.coverage[0].percent
    expect((await run(['--min', String(pct)])).code).toBe(0)
    const below = await run(['--min', String(pct + 1), '--json'])
    expect(below.code).toBe(1)
    expect(JSON.parse(below.stdout).coverage[0].percent).toBe(pct)
    expect(below.stderr).toBe(`dcb: coverage below --min ${pct + 1}%: demo ${pct}%\n`)
  })

  it('--min refuses a value that is not a whole number from 0 to 100 (exit 2)', async () => {
    for (const v of ['101', '-1', 'half', '7.5']) {
      const r = await run(['--min', v])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('--min must be a whole number from 0 to 100')
    }
  })

  it('--merchant shows that merchant alone', async () => {
    await traffic()
    await c.api('/subscriptions/init', { msisdn: '60123456101', service_code: 'NEWSDAILY', country_code: 'my' }, { key: 'sandbox-other-key' })
    const other = JSON.parse((await run(['--merchant', 'other', '--json'])).stdout)
    expect(other.coverage.map((m: any) => m.merchant)).toEqual(['other'])
  })

  it('--merchant names a merchant that is not there (exit 1)', async () => {
    const unknown = await run(['--merchant', 'nobody'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('no merchant nobody')
  })

  it('--session shows the traffic of that session alone', async () => {
    await c.api('/subscriptions/init', { msisdn: '60133456001', service_code: 'STREAMPLUS', country_code: 'my' }, { headers: { 'x-dcb-session': 'cov-cli' } })
    const inSession = JSON.parse((await run(['--session', 'cov-cli', '--json'])).stdout)
    expect(inSession.coverage.map((m: any) => [m.merchant, m.covered])).toEqual([['demo', 1]])
    expect(inSession.coverage[0].outcomes.find((o: any) => o.id === 'init.psms').count).toBe(1)
    await c.control('/sessions/cov-cli', undefined, { method: 'DELETE' })
  })
})
