/**
 * examples/merchant's coverage policy gating a suite run against `dcb serve`, all from the packed
 * package as a consumer installs it: the tarball's `dcb serve`, two test files as scripts that use its
 * `createClient` in a session each, then its `dcb coverage --sessions 'file-*' --policy` over both.
 * The JUnit report the binary writes is the XML the installed library's `coverageJUnit` gives for the
 * merged sessions, so a suite gates the same way in process and against a server.
 */
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packedConsumer, run, servePacked } from './packed.js'

describe("the packed package: examples/merchant's policy against dcb serve, one session per test file", () => {
  const packed = packedConsumer()
  let server: ChildProcess | undefined
  afterAll(() => {
    server?.kill()
  })

  let app: string
  let bin: string
  let url: string
  let xml: string
  beforeAll(async () => {
    app = packed.app
    bin = join(app, 'node_modules', 'dcb-sandbox', 'bin', 'dcb.js')
    const s = await servePacked(bin, app, ['--clock', '2026-01-31T00:00:00'])
    server = s.child
    url = s.url
  }, 30_000)
  /** One test file: its calls in its own session, through the installed client. */
  const file = (session: string, body: string) =>
    packed.script(`import { createClient } from 'dcb-sandbox'
const sandbox = createClient({ baseUrl: '${url}', session: '${session}' })
const subscribe = async (msisdn) => {
  const init = await sandbox.init({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
  const verify = await sandbox.verify({ verif_request_id: init.envelope.payload.verif_request_id, otp: (await sandbox.otp(msisdn)).otp })
  return verify.envelope.payload?.subscription_id
}
${body}`)
  const gate = () =>
    run(process.execPath, [bin, 'coverage', '--base-url', url, '--sessions', 'file-*', '--policy', 'coverage-policy.json', '--junit', 'report.xml'], app)

  // The tests run in order: file one, then file two, against one server; the last reads the report the second wrote.
  it('the gate fails while a file has not run', async () => {
    // File one: a subscription and its Status, a failed first charge.
    const one = await file('file-1', `await sandbox.status({ subscription_id: await subscribe('60123456011') })\nawait subscribe('60123456201')`)
    expect(one.code, one.out).toBe(0)
    const first = await gate()
    expect(first.code).toBe(1)
    expect(first.stderr).toContain('demo: required outcome status.EXPIRED was never seen')
  }, 60_000)

  it('the gate passes once both files ran, writing a JUnit report', async () => {
    // File two: a renewal that succeeds and one that fails, each reconciled with Status.
    const two = await file(
      'file-2',
      `const ids = [await subscribe('60123456012'), await subscribe('60123456301')]
await sandbox.advance('P1M')
for (const id of ids) await sandbox.status({ subscription_id: id })`,
    )
    expect(two.code, two.out).toBe(0)
    const both = await gate()
    expect([both.code, both.stderr]).toEqual([0, ''])
    xml = readFileSync(join(app, 'report.xml'), 'utf8')
    expect(xml).toMatch(/<testsuites name="dcb coverage" tests="\d+" failures="0"/)
  }, 60_000)

  it("the report is the XML the installed library's coverageJUnit gives for the merged sessions", async () => {
    const inProcess = await packed.script(`import { readFileSync } from 'node:fs'
import { coverageJUnit, createClient, mergeCoverage } from 'dcb-sandbox'
const policy = JSON.parse(readFileSync('coverage-policy.json', 'utf8'))
const of = (session) => createClient({ baseUrl: '${url}', session }).coverage()
process.stdout.write(coverageJUnit(mergeCoverage(await of('file-1'), await of('file-2')), policy))`)
    expect(inProcess.code).toBe(0)
    expect(inProcess.stdout).toBe(xml)
  }, 60_000)
})
