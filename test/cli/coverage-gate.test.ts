/**
 * The scripting guide's gate on given outcomes ("Gating CI on coverage": `dcb coverage --merchant demo
 * --json` read by jq), run as written by bash with `dcb` on the PATH against a real server: it fails
 * naming the outcomes never seen (all of them when no traffic came), and passes once a suite exercised
 * every Verify outcome and every renewal, retry and carrier cancellation.
 */
import { spawn } from 'node:child_process'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type SandboxClient } from '../../src/index.js'
import { tempDir } from '../helpers.js'
import { BIN, serve, type Served } from './run.js'

const GUIDE = join(import.meta.dirname, '..', '..', 'docs', 'guides', 'scripting-and-ci.md')

/** The sh block of the guide's section "Gating CI on coverage". */
function recipe(): string {
  const section = readFileSync(GUIDE, 'utf8').split('## Gating CI on coverage')[1]!.split('\n## ')[0]!
  return /```sh\n([\s\S]*?)```/.exec(section)![1]!
}

const t = tempDir()
writeFileSync(join(t.dir, 'dcb'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
chmodSync(join(t.dir, 'dcb'), 0o755)

function bash(script: string, baseUrl: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd: t.dir,
      env: { ...process.env, NO_COLOR: '1', PATH: `${t.dir}:${process.env.PATH}`, DCB_BASE_URL: baseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Every Verify outcome, and renewals that succeed, fail, are retried and are cancelled by the carrier. */
async function suite(sandbox: SandboxClient, baseUrl: string): Promise<void> {
  let n = 0
  const subscribe = async (ending: string) => {
    const msisdn = `60123${String(++n).padStart(3, '0')}${ending}`
    const init = await sandbox.init({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
    const id = (init.envelope.payload as { verif_request_id: string }).verif_request_id
    return { id, otp: (await sandbox.otp(msisdn)).otp }
  }
  for (const ending of ['201', '202', '203', '204', '205', '206', '207', '208', '209', '210', '250', '003', '301', '302', '401']) {
    const { id, otp } = await subscribe(ending)
    await sandbox.verify({ verif_request_id: id, otp })
  }
  const locked = await subscribe('004')
  for (let i = 0; i < 4; i++) await sandbox.verify({ verif_request_id: locked.id, otp: locked.otp === '0000' ? '1111' : '0000' })
  // An answer lost to a reset and one a gateway replaced (the client rejects both; both were counted).
  for (const ending of ['611', '613']) {
    const { id, otp } = await subscribe(ending)
    await sandbox.verify({ verif_request_id: id, otp }).catch(() => {})
  }
  const used = await subscribe('005')
  for (let i = 0; i < 2; i++) await sandbox.verify({ verif_request_id: used.id, otp: used.otp })
  // A Verify whose body fails the schema: verify.BAD_REQUEST.
  await fetch(`${baseUrl}/subscriptions/verify`, { method: 'POST', headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }, body: '{}' })
  await sandbox.advance('P1M')
  await sandbox.advance('P2D')
}

describe('scripting guide: gating CI on given outcomes', () => {
  let server: Served
  beforeAll(async () => {
    server = await serve(['--in-memory', '--clock', '2026-01-31T00:00:00'])
  })
  afterAll(async () => {
    await server.stop()
    t.cleanup()
  })

  it('fails naming every outcome asked for when no traffic came, and passes once the suite exercised them all', async () => {
    const none = await bash(recipe(), server.url)
    expect(none.code).toBe(1)
    // One line per outcome required and never seen, every one the globs match.
    const lines = none.stderr.trim().split('\n')
    expect(lines[0]).toMatch(/^dcb: demo: required outcome verify\.SUCCESS was never seen; Verify /)
    for (const id of [
      'verify.INVALID_PIN',
      'verify.ERROR_500',
      'verify.BAD_REQUEST',
      'renewal.succeeded',
      'renewal.failed',
      'retry.succeeded',
      'retry.failed',
      'carrier.canceled',
    ])
      expect(lines.some((l) => l.startsWith(`demo: required outcome ${id} was never seen; `))).toBe(true)

    const sandbox = createClient({ baseUrl: server.url })
    await sandbox.verify({ verif_request_id: 'x', otp: '1' }) // verify.INVALID_PIN only
    const some = await bash(recipe(), server.url)
    expect(some.code).toBe(1)
    expect(some.stderr).not.toMatch(/INVALID_PIN/)

    await suite(sandbox, server.url)
    const all = await bash(recipe(), server.url)
    expect(all).toEqual({ code: 0, stdout: '', stderr: '' })
  }, 60_000)
})
