/**
 * The `next:` line dcb init prints is pasted into a shell as it is: it must go to the server, session
 * and merchant the init went to. Run through the binary (as `dcb` on PATH) against a real server.
 */
import { execFile } from 'node:child_process'
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { BIN } from './run.js'

const TOKEN = `it's a "token" & more`
let c: Client
const tmp = tempDir()
beforeAll(async () => {
  c = await startClient({ adminToken: TOKEN })
  // `dcb` on PATH, as an installed package puts it.
  const shim = join(tmp.dir, 'dcb')
  writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`)
  chmodSync(shim, 0o755)
})
afterAll(async () => {
  await c.close()
  tmp.cleanup()
})

/** Runs a command line in sh with `dcb` on PATH; the environment points at no server (port 1), no session, no key. */
function shell(line: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    PATH: `${tmp.dir}:${process.env.PATH}`,
    NO_COLOR: '1',
    DCB_BASE_URL: 'http://127.0.0.1:1',
    DCB_SESSION: undefined,
    DCB_API_KEY: undefined,
    DCB_ADMIN_TOKEN: undefined,
  }
  return new Promise((resolve) =>
    execFile('/bin/sh', ['-c', line], { env }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
  )
}

const nextLine = (stdout: string) => /^ {2}next: (.*)$/m.exec(stdout)?.[1]

describe('dcb init: the next line', () => {
  it('keeps every connection flag quoted (--base-url, --session, --api-key to verify, --admin-token to otp), so pasted the verify succeeds in that session', async () => {
    const init = await shell(
      `dcb init --base-url ${c.url} --session hint-s1 --api-key sandbox-other-key --admin-token '${TOKEN.replaceAll("'", `'\\''`)}' --msisdn 60123456007 --service NEWSDAILY --country my`,
    )
    expect(init.stderr).toBe('')
    expect(init.code).toBe(0)
    const next = nextLine(init.stdout)!
    // Each command gets the credential it takes (verify the key, otp the admin token): the other it refuses.
    expect(next).toMatch(
      /^dcb verify --base-url \S+ --session hint-s1 --api-key sandbox-other-key --id \S+ --otp "\$\(dcb otp --base-url \S+ --session hint-s1 --admin-token '.*' 60123456007\)"$/,
    )
    const verify = await shell(next)
    expect(verify.stderr).toBe('')
    expect(verify.stdout).toMatch(/✔ SUCCESS verify/)
    expect(verify.code).toBe(0)
    // The subscription is the other merchant's, in session hint-s1, not in the default session.
    const inSession = await c.control('/subscriptions?msisdn=60123456007', undefined, { headers: { 'x-dcb-session': 'hint-s1' } })
    expect(inSession.body.subscriptions.map((s: { merchant: string; status: string }) => [s.merchant, s.status])).toEqual([['other', 'ACTIVE']])
    expect((await c.control('/subscriptions?msisdn=60123456007')).body.subscriptions).toEqual([])
  })

  it('with the server from the environment, the line carries no flag (the environment carries itself)', async () => {
    const init = await shell(`DCB_BASE_URL=${c.url} dcb init --msisdn 60123456008 --service STREAMPLUS --country my`)
    expect(init.code).toBe(0)
    const next = nextLine(init.stdout)!
    expect(next).toMatch(/^dcb verify --id \S+ --otp "\$\(dcb otp 60123456008\)"$/)
    const verify = await shell(`DCB_BASE_URL=${c.url}; export DCB_BASE_URL; ${next}`)
    expect(verify.stdout).toMatch(/✔ SUCCESS verify/)
    expect(verify.code).toBe(0)
  })
})
