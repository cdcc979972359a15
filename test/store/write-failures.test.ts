/**
 * Issue 21, the write path: a call whose changes cannot be made durable answers a server error
 * and changes nothing; health says so while writes fail; writing resumes by itself; snapshots
 * replace the old ones only when whole; every acknowledged write survives. Real server over
 * loopback, real files; failures injected at the store's write and fsync calls (the StoreIo seam).
 */
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
  // A data file of its own for each flow.
  const data = () => join(tmp.dir, `sandbox-${n}.json`)
  const start = () => startClient({ data: data(), clock: '2026-01-31T00:00:00', storeIo: f.io })
  const fresh = async () => {
    n++
    f = faults()
    c = await start()
  }
  const close = () => c.close().catch(() => {})

  describe('a Verify that fails durably, then writing works again', () => {
    // One server through the failure and the recovery: the tests run in order.
    let kept: string
    let init: Awaited<ReturnType<Client['api']>>
    let otp: string
    let verify: Awaited<ReturnType<Client['api']>>
    let again: Awaited<ReturnType<Client['api']>>
    beforeAll(async () => {
      await fresh()
      kept = await c.subscribe('60123456001')
      init = await c.api('/subscriptions/init', INIT('60123456002'))
      otp = (await c.control('/otp?msisdn=60123456002')).body.otp
      f.write = journal
      verify = await c.api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp })
    })
    afterAll(close)

    it('answers 500 with the reason', () => {
      expect(verify.status).toBe(500)
      expect(verify.body.message).toBe('ERROR')
      expect(verify.headers.get('x-dcb-reason')).toContain('could not be stored')
      expect(verify.headers.get('x-dcb-reason')).toContain('ENOSPC')
    })

    it('lists no subscription for it', async () => {
      expect((await c.control('/subscriptions?msisdn=60123456002')).body.subscriptions).toEqual([])
    })

    it('makes health answer 503 naming the error', async () => {
      const health = await c.control('/health')
      expect(health.status).toBe(503)
      expect(health.body).toEqual({ ok: false, store: expect.stringContaining('ENOSPC') })
    })

    it('leaves reads answering', async () => {
      expect((await c.api('/subscriptions/status', { subscription_id: kept })).body.payload.status).toBe('ACTIVE')
    })

    it('left no trace: the same verification succeeds once space is freed', async () => {
      f.write = null
      again = await c.api('/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp })
      expect(again.body.status).toBe('SUCCESS')
    })

    it('makes health answer 200 once writing works', async () => {
      expect((await c.control('/health')).status).toBe(200)
    })

    it('leaves a restart every acknowledged subscription, no other', async () => {
      await c.close()
      c = await start()
      const subs = (await c.control('/subscriptions')).body.subscriptions.map((s: any) => s.subscription_id).sort()
      expect(subs).toEqual([kept, again.body.payload.subscription_id].sort())
    })
  })

  describe('a session delete that cannot be written', () => {
    // One server through the refusal and the retry: the tests run in order.
    const A = { 'x-dcb-session': 'kept' }
    let init: Awaited<ReturnType<Client['api']>>
    let refused: Awaited<ReturnType<Client['control']>>
    beforeAll(async () => {
      await fresh()
      init = await c.api('/subscriptions/init', INIT('60123456040'), { headers: A })
      expect(init.body.status).toBe('SUCCESS')
      f.write = journal
      refused = await c.control('/sessions/kept', undefined, { method: 'DELETE' })
      f.write = null
    })
    afterAll(close)

    it('answers 503 STORE_UNAVAILABLE', () => {
      expect(refused).toMatchObject({ status: 503, body: { error: 'STORE_UNAVAILABLE', message: expect.stringContaining('ENOSPC') } })
    })

    it('keeps the session listed', async () => {
      expect((await c.control('/sessions')).body.sessions.map((s: any) => s.name)).toContain('kept')
    })

    it('keeps the session usable', async () => {
      expect((await c.control('/otp?msisdn=60123456040', undefined, { headers: A })).body.verif_request_id).toBe(init.body.payload.verif_request_id)
    })

    it('goes through once writing works', async () => {
      expect((await c.control('/sessions/kept', undefined, { method: 'DELETE' })).body).toEqual({ deleted: 'kept' })
    })
  })

  describe('a clock move whose fsync fails', () => {
    // One server through the failed move and the next one: the tests run in order.
    let id: string
    let before: any
    let sub: any
    let moved: Awaited<ReturnType<Client['control']>>
    beforeAll(async () => {
      await fresh()
      id = await c.subscribe('60123456003')
      before = (await c.control('/clock')).body
      sub = (await c.control(`/subscriptions/${id}`)).body
      f.sync = journal
      moved = await c.control('/clock/advance', { by: 'P2M' })
    })
    afterAll(close)

    it('answers 503 STORE_UNAVAILABLE', () => {
      expect(moved.status).toBe(503)
      expect(moved.body).toEqual({ error: 'STORE_UNAVAILABLE', message: expect.stringContaining('EIO') })
    })

    it('leaves the clock where it was', async () => {
      expect((await c.control('/clock')).body.now).toBe(before.now)
    })

    it('leaves every subscription as it was, with no renewal sent', async () => {
      expect((await c.control(`/subscriptions/${id}`)).body).toEqual(sub)
      expect((await c.control('/sms?msisdn=60123456003')).body.messages.filter((m: any) => m.kind === 'renewal')).toEqual([])
    })

    it('is followed by a move that renews once writing works', async () => {
      f.sync = null
      const ok = await c.control('/clock/advance', { by: 'P1M' })
      expect(ok.status).toBe(200)
      expect(ok.body.events.map((e: any) => e.type)).toEqual(['renewed'])
    })
  })

  describe('a consent approval that cannot be written', () => {
    // One server through the refused approval and the retry: the tests run in order.
    let approve: () => Promise<Response>
    let refused: Response
    beforeAll(async () => {
      await fresh()
      const init = await c.api('/subscriptions/init', { msisdn: '359881234060', service_code: 'STREAMPLUS', country_code: 'bg' })
      const consent = init.body.payload.redirect_url as string
      expect(consent).toContain('/consent/')
      approve = () =>
        fetch(consent, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=approve' })
      f.write = journal
      refused = await approve()
    })
    afterAll(close)

    it('answers the page 503 "Not saved", naming the error', async () => {
      expect(refused.status).toBe(503)
      const page = await refused.text()
      expect(page).toContain('Not saved')
      expect(page).toContain('ENOSPC')
      expect(page).toContain('nothing was changed')
    })

    it('subscribes nobody', async () => {
      expect((await c.control('/subscriptions?msisdn=359881234060')).body.subscriptions).toEqual([])
    })

    it('is approved again once writing works', async () => {
      f.write = null
      const approved = await approve()
      expect(approved.status).toBe(303)
      expect(new URL(approved.headers.get('location')!, c.url).searchParams.get('status')).toBe('SUCCESS')
      expect((await c.control('/subscriptions?msisdn=359881234060')).body.subscriptions.map((s: any) => s.status)).toEqual(['ACTIVE'])
    })
  })

  describe('a write whose fsync fails', () => {
    beforeAll(fresh)
    afterAll(close)

    it('is cut from the write-ahead log before the call answers: a crash right after replays none of it', async () => {
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
  })

  describe('a failed group write', () => {
    // One server through the failed group, a write after it and a restart: the tests run in order.
    const failed = ['60123456005', '60123456006', '60123456007', '60123456008']
    let answers: Awaited<ReturnType<Client['api']>>[]
    let ok: string
    beforeAll(async () => {
      await fresh()
      await c.subscribe('60123456004')
      f.short = journal
      answers = await Promise.all(failed.map((m) => c.api('/subscriptions/init', INIT(m))))
    })
    afterAll(close)

    it('fails every transaction it holds or that queued behind it', () => {
      expect(answers.map((a) => a.status)).toEqual([500, 500, 500, 500])
    })

    it('leaves no trace of the transactions it failed', async () => {
      for (const m of failed) expect((await c.control(`/sms?msisdn=${m}`)).body.messages).toEqual([])
    })

    it('leaves no torn or half line in the write-ahead log', async () => {
      f.short = null
      ok = await c.subscribe('60123456009')
      await c.close()
      // Every line complete and parsed: the half write was cut back before the next one.
      const logs = (readdirSync(tmp.dir, { recursive: true }) as string[]).filter((name) => name.startsWith(`sandbox-${n}.json`) && journal(name))
      expect(logs.length).toBeGreaterThan(0)
      for (const file of logs) {
        const text = readFileSync(join(tmp.dir, file), 'utf8')
        if (text) expect(text.endsWith('\n')).toBe(true)
        for (const line of text.split('\n').filter(Boolean)) JSON.parse(line)
      }
    })

    it('leaves a restart nothing to recover from', async () => {
      c = await start()
      expect(c.sandbox.recoveryNotes).toEqual([])
    })

    it('leaves a restart the write made after it', async () => {
      expect((await c.api('/subscriptions/status', { subscription_id: ok })).body.status).toBe('SUCCESS')
    })

    it('leaves a restart none of the writes it failed', async () => {
      expect((await c.control('/sms?msisdn=60123456005')).body.messages).toEqual([])
    })
  })

  describe('a session write whose fsync fails', () => {
    // One server through the failure and the recovery: the tests run in order.
    const S = { 'x-dcb-session': 'blue' }
    let failed: Awaited<ReturnType<Client['api']>>
    beforeAll(async () => {
      await fresh()
      expect((await c.api('/subscriptions/init', INIT('60123456010'), { headers: S })).body.status).toBe('SUCCESS')
      f.sync = (file) => file.includes('.sessions')
      failed = await c.api('/subscriptions/init', INIT('60123456011'), { headers: S })
    })
    afterAll(close)

    it('answers 500', () => {
      expect(failed.status).toBe(500)
    })

    it('changes nothing in the session', async () => {
      expect((await c.control('/sms?msisdn=60123456011', undefined, { headers: S })).body.messages).toEqual([])
    })

    it('makes health answer 503', async () => {
      expect((await c.control('/health')).status).toBe(503)
    })

    it('makes no session whose first record fails', async () => {
      const made = await c.control('/clock', undefined, { headers: { 'x-dcb-session': 'green' } })
      expect(made.status).toBe(503)
      expect(made.body.error).toBe('STORE_UNAVAILABLE')
      expect((await c.control('/sessions')).body.sessions.map((s: any) => s.name)).toEqual(['default', 'blue'])
    })

    it('is followed by a session write that succeeds once writing works', async () => {
      f.sync = null
      expect((await c.api('/subscriptions/init', INIT('60123456011'), { headers: S })).body.status).toBe('SUCCESS')
    })

    it('makes health answer 200 once writing works', async () => {
      expect((await c.control('/health')).status).toBe(200)
    })
  })
})

describe('snapshots', () => {
  const tmp = tempDir()
  let c: Client
  const close = () => c.close().catch(() => {})

  describe('a failed session snapshot', () => {
    afterAll(close)

    it('is not marked saved: its data outlives a later compaction, then a restart', async () => {
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
  })

  describe('a snapshot cut short at shutdown', () => {
    // One data file through the failed shutdown and the next start: the tests run in order.
    const f = faults()
    const data = join(tmp.dir, 'short.json')
    let ids: string[]
    let named: Awaited<ReturnType<Client['api']>>
    beforeAll(async () => {
      c = await startClient({ data, storeIo: f.io })
      ids = [await c.subscribe('60123456030'), await c.subscribe('60123456031')]
      named = await c.api('/subscriptions/init', INIT('60123456032'), { headers: { 'x-dcb-session': 'kept' } })
      f.short = (file) => file.endsWith('.tmp')
    })
    afterAll(close)

    it('fails the shutdown, saying the write-ahead logs are kept', async () => {
      await expect(c.close()).rejects.toThrow(/write-ahead logs are kept/)
      expect(f.hits).toBeGreaterThan(0)
    })

    it('is not taken: no snapshot, no temp file is left', () => {
      // The old snapshot (none yet) was not replaced by a cut-off one.
      expect(readdirSync(tmp.dir).filter((n) => n.startsWith('short.json') && !journal(n) && !n.endsWith('.sessions'))).toEqual([])
    })

    it('leaves the next start to recover every acknowledged write from the write-ahead log', async () => {
      c = await startClient({ data })
      for (const id of ids) expect((await c.api('/subscriptions/status', { subscription_id: id })).body.payload.status).toBe('ACTIVE')
      const otp = await c.control('/otp?msisdn=60123456032', undefined, { headers: { 'x-dcb-session': 'kept' } })
      expect(otp.body.verif_request_id).toBe(named.body.payload.verif_request_id)
    })
  })

  describe('a snapshot whose bytes the disk did not keep (read back different)', () => {
    // One data file through the failed shutdown and the next start: the tests run in order.
    const data = join(tmp.dir, 'flipped.json')
    let ids: string[]
    beforeAll(async () => {
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
      ids = [await c.subscribe('60123456040'), await c.subscribe('60123456041')]
    })
    afterAll(close)

    it('fails the shutdown, saying the snapshot is not what was written', async () => {
      await expect(c.close()).rejects.toThrow(/not what was written/)
    })

    it('is not taken: no snapshot, no temp file is left', () => {
      expect(readdirSync(tmp.dir).filter((n) => n.startsWith('flipped.json') && !journal(n) && !n.endsWith('.sessions'))).toEqual([])
    })

    it('leaves the next start to recover every write from the write-ahead log', async () => {
      c = await startClient({ data })
      for (const id of ids) expect((await c.api('/subscriptions/status', { subscription_id: id })).body.payload.status).toBe('ACTIVE')
    })
  })
})
