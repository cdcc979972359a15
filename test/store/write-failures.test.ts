/**
 * Issue 21, the write path: a call whose changes cannot be made durable answers a server error
 * and changes nothing; health says so while writes fail; writing resumes by itself; snapshots
 * replace the old ones only when whole; every acknowledged write survives. Real server over
 * loopback, real files; failures injected at the store's write and fsync calls (the StoreIo seam).
 */
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { linesEnd, type StoreIo } from '../../src/store/wal.js'

/** Faults to inject: a predicate on the file name for writes, fsyncs, short writes; `hits` counts them. */
function faults() {
  const f = {
    write: null as ((file: string) => boolean) | null,
    sync: null as ((file: string) => boolean) | null,
    short: null as ((file: string) => boolean) | null,
    hits: 0,
    /** Resolves at the next fault injected. */
    next: Promise.resolve(),
    io: {} as StoreIo,
  }
  let hit = () => {}
  const arm = () => (f.next = new Promise<void>((r) => (hit = r)))
  arm()
  const fire = () => {
    f.hits++
    hit()
    arm()
  }
  f.io = {
    beforeWrite(file, bytes) {
      if (f.write?.(file)) {
        fire()
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
      }
      if (f.short?.(file)) {
        fire()
        return Math.floor(bytes / 2)
      }
    },
    beforeSync(file) {
      if (f.sync?.(file)) {
        fire()
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
      }
    },
  }
  return f
}

const INIT = (msisdn: string) => ({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
const journal = (file: string) => /\.journal\.\d+$|journal\.\d+$/.test(file)

describe('a write that cannot be made durable', () => {
  const tmp = tempDir()
  let c: Client
  let f: ReturnType<typeof faults>
  let n = 0
  // A data file of its own for each test.
  const data = () => join(tmp.dir, `sandbox-${n}.json`)
  const start = () => startClient({ data: data(), clock: '2026-01-31T00:00:00', storeIo: f.io })
  beforeEach(async () => {
    n++
    f = faults()
    c = await start()
  })
  afterEach(() => c.close().catch(() => {}))

  it('a Verify that fails durably answers 500 with the reason, and Status and the lists show no subscription; health 503, then 200 once writing works', async () => {
    const kept = await c.subscribe('60123456001')
    const init = await c.api('/subscriptions/init', INIT('60123456002'))
    const otp = (await c.control('/otp?msisdn=60123456002')).body.otp
    f.write = journal
    const verify = await c.api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp })
    expect(verify.status).toBe(500)
    expect(verify.body.message).toBe('ERROR')
    expect(verify.headers.get('x-dcb-reason')).toContain('could not be stored')
    expect(verify.headers.get('x-dcb-reason')).toContain('ENOSPC')
    expect((await c.control('/subscriptions?msisdn=60123456002')).body.subscriptions).toEqual([])
    const health = await c.control('/health')
    expect(health.status).toBe(503)
    expect(health.body).toEqual({ ok: false, store: expect.stringContaining('ENOSPC') })
    // Reads keep answering.
    expect((await c.api('/subscriptions/status', { subscription_id: kept })).body.payload.status).toBe('ACTIVE')
    // Space freed: the next write succeeds (the same verification again: the failed one left no trace), health is 200.
    f.write = null
    const again = await c.api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp })
    expect(again.body.status).toBe('SUCCESS')
    expect((await c.control('/health')).status).toBe(200)
    await c.close()
    c = await start()
    const subs = (await c.control('/subscriptions')).body.subscriptions.map((s: any) => s.subscription_id).sort()
    expect(subs).toEqual([kept, again.body.payload.subscription_id].sort())
  })

  it('a session delete that cannot be written answers 503 STORE_UNAVAILABLE and keeps the session, listed and usable', async () => {
    const A = { 'x-dcb-session': 'kept' }
    const init = await c.api('/subscriptions/init', INIT('60123456040'), { headers: A })
    expect(init.body.status).toBe('SUCCESS')
    f.write = journal
    const refused = await c.control('/sessions/kept', undefined, { method: 'DELETE' })
    expect(refused).toMatchObject({ status: 503, body: { error: 'STORE_UNAVAILABLE', message: expect.stringContaining('ENOSPC') } })
    f.write = null
    expect((await c.control('/sessions')).body.sessions.map((s: any) => s.name)).toContain('kept')
    expect((await c.control('/otp?msisdn=60123456040', undefined, { headers: A })).body.verif_request_id).toBe(init.body.payload.verif_request_id)
    // Writing works again: the delete goes through.
    expect((await c.control('/sessions/kept', undefined, { method: 'DELETE' })).body).toEqual({ deleted: 'kept' })
  })

  it('a clock move whose fsync fails answers 503 STORE_UNAVAILABLE and leaves the clock and every subscription as they were', async () => {
    const id = await c.subscribe('60123456003')
    const before = (await c.control('/clock')).body
    const sub = (await c.control(`/subscriptions/${id}`)).body
    f.sync = journal
    const moved = await c.control('/clock/advance', { by: 'P2M' })
    expect(moved.status).toBe(503)
    expect(moved.body).toEqual({ error: 'STORE_UNAVAILABLE', message: expect.stringContaining('EIO') })
    expect((await c.control('/clock')).body.now).toBe(before.now)
    expect((await c.control(`/subscriptions/${id}`)).body).toEqual(sub)
    expect((await c.control('/sms?msisdn=60123456003')).body.messages.filter((m: any) => m.kind === 'renewal')).toEqual([])
    f.sync = null
    const ok = await c.control('/clock/advance', { by: 'P1M' })
    expect(ok.status).toBe(200)
    expect(ok.body.events.map((e: any) => e.type)).toEqual(['renewed'])
  })

  it('a consent approval that cannot be written answers the page 503 "Not saved" and subscribes nobody; approved again once writing works', async () => {
    const init = await c.api('/subscriptions/init', { msisdn: '359881234060', service_code: 'STREAMPLUS', country_code: 'bg' })
    const consent = init.body.payload.redirect_url as string
    expect(consent).toContain('/consent/')
    const approve = () =>
      fetch(consent, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=approve' })
    f.write = journal
    const refused = await approve()
    expect(refused.status).toBe(503)
    const page = await refused.text()
    expect(page).toContain('Not saved')
    expect(page).toContain('ENOSPC')
    expect(page).toContain('nothing was changed')
    expect((await c.control('/subscriptions?msisdn=359881234060')).body.subscriptions).toEqual([])
    f.write = null
    const approved = await approve()
    expect(approved.status).toBe(303)
    expect(new URL(approved.headers.get('location')!, c.url).searchParams.get('status')).toBe('SUCCESS')
    expect((await c.control('/subscriptions?msisdn=359881234060')).body.subscriptions.map((s: any) => s.status)).toEqual(['ACTIVE'])
  })

  it('a write whose fsync fails is cut from the write-ahead log before the call answers: a crash right after replays none of it', async () => {
    await c.subscribe('60123456004')
    f.sync = journal
    expect((await c.api('/subscriptions/init', INIT('60123456010'))).status).toBe(500)
    // No write since: what a restart would replay is in the write-ahead logs' lines as they are now.
    // Every session's lines, the default one's too, are in the write-ahead log of the sessions folder.
    const lines = (readdirSync(tmp.dir, { recursive: true }) as string[])
      .filter((name) => name.startsWith(`sandbox-${n}.json`) && journal(name))
      .map((name) => readFileSync(join(tmp.dir, name)))
      .map((buf) => buf.subarray(0, linesEnd(buf)).toString('utf8'))
      .join('')
    expect(lines).toContain('60123456004')
    expect(lines).not.toContain('60123456010')
    f.sync = null
  })

  it('a failed group fails every transaction in it and queued behind it; none leaves a trace; the write-ahead log has no torn or half line after', async () => {
    await c.subscribe('60123456004')
    f.short = journal
    const answers = await Promise.all(['60123456005', '60123456006', '60123456007', '60123456008'].map((m) => c.api('/subscriptions/init', INIT(m))))
    expect(answers.map((a) => a.status)).toEqual([500, 500, 500, 500])
    for (const m of ['60123456005', '60123456006', '60123456007', '60123456008']) expect((await c.control(`/sms?msisdn=${m}`)).body.messages).toEqual([])
    f.short = null
    const ok = await c.subscribe('60123456009')
    await c.close()
    // Every line complete and parsed: the half write was cut back before the next one.
    const logs = (readdirSync(tmp.dir, { recursive: true }) as string[]).filter((name) => name.startsWith(`sandbox-${n}.json`) && journal(name))
    expect(logs.length).toBeGreaterThan(0)
    for (const file of logs) {
      const text = readFileSync(join(tmp.dir, file), 'utf8')
      if (text) expect(text.endsWith('\n')).toBe(true)
      for (const line of text.split('\n').filter(Boolean)) JSON.parse(line)
    }
    c = await start()
    expect(c.sandbox.recoveryNotes).toEqual([])
    expect((await c.api('/subscriptions/status', { subscription_id: ok })).body.status).toBe('SUCCESS')
    expect((await c.control('/sms?msisdn=60123456005')).body.messages).toEqual([])
  })

  it('in a session too: a failed write answers 500 and changes nothing; a session whose first record fails is not made', async () => {
    const S = { 'x-dcb-session': 'blue' }
    expect((await c.api('/subscriptions/init', INIT('60123456010'), { headers: S })).body.status).toBe('SUCCESS')
    f.sync = (file) => file.includes('.sessions')
    const failed = await c.api('/subscriptions/init', INIT('60123456011'), { headers: S })
    expect(failed.status).toBe(500)
    expect((await c.control('/sms?msisdn=60123456011', undefined, { headers: S })).body.messages).toEqual([])
    expect((await c.control('/health')).status).toBe(503)
    const made = await c.control('/clock', undefined, { headers: { 'x-dcb-session': 'green' } })
    expect(made.status).toBe(503)
    expect(made.body.error).toBe('STORE_UNAVAILABLE')
    expect((await c.control('/sessions')).body.sessions.map((s: any) => s.name)).toEqual(['default', 'blue'])
    f.sync = null
    expect((await c.api('/subscriptions/init', INIT('60123456011'), { headers: S })).body.status).toBe('SUCCESS')
    expect((await c.control('/health')).status).toBe(200)
  })
})

describe('snapshots', () => {
  const tmp = tempDir()
  let c: Client
  afterEach(() => c.close().catch(() => {}))

  it('a failed session snapshot is not marked saved: a later compaction and a restart keep its data', async () => {
    const f = faults()
    const data = join(tmp.dir, 'snap.json')
    // Every write starts a compaction: each one snapshots every session changed since its last snapshot.
    c = await startClient({ data, compactBytes: 1, storeIo: f.io })
    const A = { 'x-dcb-session': 'alpha' }
    const B = { 'x-dcb-session': 'beta' }
    f.write = (file) => file.endsWith('alpha.json.tmp')
    const inA = await c.api('/subscriptions/init', INIT('60123456020'), { headers: A })
    expect(inA.body.status).toBe('SUCCESS')
    await f.next
    f.write = null
    // A later compaction (beta's write), then a shutdown: alpha's data must still be on disk.
    expect((await c.api('/subscriptions/init', INIT('60123456021'), { headers: B })).body.status).toBe('SUCCESS')
    await c.close()
    c = await startClient({ data })
    const otp = await c.control('/otp?msisdn=60123456020', undefined, { headers: A })
    expect(otp.body.verif_request_id).toBe(inA.body.payload.verif_request_id)
  })

  it('a snapshot cut short at shutdown is not taken: the write-ahead log stays and the next start recovers every acknowledged write', async () => {
    const f = faults()
    const data = join(tmp.dir, 'short.json')
    c = await startClient({ data, storeIo: f.io })
    const ids = [await c.subscribe('60123456030'), await c.subscribe('60123456031')]
    const named = await c.api('/subscriptions/init', INIT('60123456032'), { headers: { 'x-dcb-session': 'kept' } })
    f.short = (file) => file.endsWith('.tmp')
    await expect(c.close()).rejects.toThrow(/write-ahead logs are kept/)
    expect(f.hits).toBeGreaterThan(0)
    // The old snapshot (none yet) was not replaced by a cut-off one; no temp file stays.
    expect(readdirSync(tmp.dir).filter((n) => n.startsWith('short.json') && !journal(n) && !n.endsWith('.sessions'))).toEqual([])
    c = await startClient({ data })
    for (const id of ids) expect((await c.api('/subscriptions/status', { subscription_id: id })).body.payload.status).toBe('ACTIVE')
    const otp = await c.control('/otp?msisdn=60123456032', undefined, { headers: { 'x-dcb-session': 'kept' } })
    expect(otp.body.verif_request_id).toBe(named.body.payload.verif_request_id)
  })

  it('a snapshot whose bytes the disk did not keep (read back different) is not taken: the write-ahead log stays and the next start recovers every write', async () => {
    const data = join(tmp.dir, 'flipped.json')
    const io: StoreIo = {
      // Between the writes and the fsync, one byte of the temp file changes: its length stays, its bytes do not.
      beforeSync(file) {
        if (!file.endsWith('flipped.json.tmp')) return
        const fd = openSync(file, 'r+')
        try {
          writeSync(fd, Buffer.from('~'), 0, 1, 5)
        } finally {
          closeSync(fd)
        }
      },
    }
    c = await startClient({ data, storeIo: io })
    const ids = [await c.subscribe('60123456040'), await c.subscribe('60123456041')]
    await expect(c.close()).rejects.toThrow(/not what was written/)
    expect(readdirSync(tmp.dir).filter((n) => n.startsWith('flipped.json') && !journal(n) && !n.endsWith('.sessions'))).toEqual([])
    c = await startClient({ data })
    for (const id of ids) expect((await c.api('/subscriptions/status', { subscription_id: id })).body.payload.status).toBe('ACTIVE')
  })
})
