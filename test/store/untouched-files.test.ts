/**
 * Files a server has no reason to write stay as they were, through the binary: a server started and
 * stopped without a write leaves the snapshot alone (bytes and mtime).
 */
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { serve } from '../cli/run.js'
import { tempDir } from '../helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const INIT = '{"msisdn":"60123456001","service_code":"STREAMPLUS","country_code":"my"}'

/** The bytes of a file and its mtime to the nanosecond. */
const fileState = (file: string) => ({ bytes: readFileSync(file).toString('base64'), mtime: statSync(file, { bigint: true }).mtimeNs })

describe('shutdown writes a snapshot only of what changed', () => {
  it('a server started and stopped without a write leaves the snapshot byte-identical, its mtime unchanged', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const first = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    expect((await fetch(`${first.url}/subscriptions/init`, { method: 'POST', headers: H, body: INIT })).status).toBe(200)
    expect(await first.stop('SIGTERM')).toBe(0)
    const before = fileState(data)

    const second = await serve(['--data', data])
    // Reads only: a Status of nothing, the health.
    expect((await fetch(`${second.url}/_sandbox/health`)).status).toBe(200)
    expect((await fetch(`${second.url}/_sandbox/subscriptions`)).status).toBe(200)
    expect(await second.stop('SIGTERM')).toBe(0)
    expect(fileState(data)).toEqual(before)
  })

  it('a write after the restart is in the snapshot written at shutdown', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const first = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    expect(await first.stop('SIGTERM')).toBe(0)
    const before = fileState(data)

    const second = await serve(['--data', data])
    expect((await fetch(`${second.url}/subscriptions/init`, { method: 'POST', headers: H, body: INIT })).status).toBe(200)
    expect(await second.stop('SIGTERM')).toBe(0)
    expect(fileState(data).bytes).not.toBe(before.bytes)
    expect(Object.keys(JSON.parse(readFileSync(data, 'utf8')).collections.verifs)).toHaveLength(1)
  })
})
