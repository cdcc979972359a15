import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClient, tempDir, writeJson, type Client } from '../helpers.js'
import { dcb } from './run.js'

// An `otp` step waiting for an OTP that never comes printed "dcb: no answer from http://127.0.0.1:7700 yet"
// after 2 s: in an in-process run (--clock, --fixtures), where there is no server at all, and against a
// server that was answering (the step waits on purpose, as `dcb otp --wait` does, quietly).
const tmp = tempDir()
let c: Client
let file: string
beforeAll(async () => {
  c = await startClient()
  file = writeJson(tmp.dir, 'no-otp.run.json', { steps: [{ otp: { msisdn: '60123456099', wait: 2.5 } }] })
})
afterAll(async () => {
  await c.close()
  tmp.cleanup()
})

describe('dcb run: an otp step that waits', () => {
  it('in process: says only that no OTP came, naming no server', async () => {
    const r = await dcb(['run', file, '--clock', '2026-01-31T09:00:00'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('dcb: NO_OTP: no OTP was sent to 60123456099 within 2.5 s\n')
  })

  it('against a server: waits quietly, as dcb otp --wait does', async () => {
    const r = await dcb(['run', file, '--base-url', c.url])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('dcb: NO_OTP: no OTP was sent to 60123456099 within 2.5 s\n')
  })
})
