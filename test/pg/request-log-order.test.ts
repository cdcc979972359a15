import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { dcb } from '../cli/run.js'
import { control, merchant, until } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

// The shared request log is numbered as the replicas write their entries, after their answers: a
// replica whose write is late numbers a call after one that another replica answered later. A
// recording of it (`dcb logs --json --all`) replays in the order the calls were answered.
const MSISDN = '60123456001'
const SESSION = 'ticket'

describe('the request log of two replicas, one writing its entries late', () => {
  const pg = usePostgres()
  const replicas = useReplicas()
  let dir: string | undefined
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })

  it('a Verify on A logged after the Status B answered next: the recording replays Verify then Status, every answer as recorded', async () => {
    await pg.createDatabase('journal_order')
    const proxy = await replicas.proxy(pg.port)
    // A reaches the database through the proxy (its journal writes can be held there), B directly.
    const a = await replicas.serve(['--store', proxy.url('journal_order'), '--clock', '2026-01-31T09:00:00'])
    const b = await replicas.serve(['--store', pg.url('journal_order')])
    const headers = { 'X-DCB-Session': SESSION }
    const init = await merchant(a.url, 'init', { msisdn: MSISDN, service_code: 'STREAMPLUS', country_code: 'my' }, headers)
    expect(init.body.status).toBe('SUCCESS')
    const otp = await control(b.url, `/otp?msisdn=${MSISDN}`, undefined, headers)
    // A's request log entry of the Verify waits at the proxy until B has answered and logged the Status.
    const late = proxy.holdAt((query) => query.includes('dcb_requests') && query.includes('/subscriptions/verify'))
    const verify = await merchant(a.url, 'verify', { verif_request_id: init.body.payload.verif_request_id, otp: otp.body.otp }, headers)
    expect(verify.body.status).toBe('SUCCESS')
    await late.held
    const status = await merchant(b.url, 'status', { subscription_id: verify.body.payload.subscription_id }, headers)
    expect(status.body.status).toBe('SUCCESS')
    const paths = async () => ((await control(b.url, '/requests', undefined, headers)).body.requests as { path: string }[]).map((r) => r.path).reverse()
    await until('the Status in the request log', async () => (await paths()).includes('/subscriptions/status'))
    late.release()
    // Numbered as written: the Status before the Verify answered earlier.
    const written = await until('the Verify in the request log', async () => ((await paths()).length === 3 ? paths() : undefined))
    expect(written).toEqual(['/subscriptions/init', '/subscriptions/status', '/subscriptions/verify'])

    const env = { DCB_BASE_URL: b.url, DCB_SESSION: SESSION, DCB_API_KEY: undefined }
    const logs = await dcb(['logs', '--json', '--all'], { env })
    expect(logs.code, logs.stderr).toBe(0)
    dir = mkdtempSync(join(os.tmpdir(), 'dcb-order-'))
    const recording = join(dir, 'ticket.jsonl')
    writeFileSync(recording, logs.stdout)
    const replayed = await dcb(['replay', recording, '--json'], { env: { ...env, DCB_SESSION: 'replay' } })
    const report = JSON.parse(replayed.stdout)
    expect(report.answers.map((r: { path: string }) => r.path)).toEqual(['/subscriptions/init', '/subscriptions/verify', '/subscriptions/status'])
    expect(report.answers.filter((r: { same: boolean }) => !r.same)).toEqual([])
    expect(replayed.code).toBe(0)
  }, 60_000)
})
