import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { State, type Charge, type SubscriptionRecord } from '../../src/core/state.js'
import { Tx } from '../../src/core/tx.js'
import { FileStore } from '../../src/store/file.js'
import { startTimeOf } from '../../src/store/lock.js'
import { StoreError } from '../../src/store/types.js'
import { linesEnd } from '../../src/store/wal.js'
import { startClient, tempDir } from '../helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

/** Leaves the store as a killed server would: no snapshot, a lock naming a dead pid, its file closed by the OS. */
async function crash(store: FileStore, path: string): Promise<void> {
  ;(store as any).lock.held = false
  writeFileSync(`${path}.lock`, '999999999\n')
  await (store as any).wal.close()
}

/** As `crash`, for the sessions' write-ahead log (the default session's store is one view of it). */
async function crashLog(log: unknown, path: string): Promise<void> {
  writeFileSync(`${path}.lock`, '999999999\n')
  await (log as any).wal.close()
}

/** Adds text right after a write-ahead log's lines, where its next write would go (past them is space zeroed ahead of writes). */
function addToLines(file: string, text: string): void {
  const buf = readFileSync(file)
  writeFileSync(file, Buffer.concat([buf.subarray(0, linesEnd(buf)), Buffer.from(text)]))
}

/** A write-ahead log's entries (its lines end at the zeroed space). */
function journalLines(file: string): any[] {
  const buf = readFileSync(file)
  return buf
    .subarray(0, linesEnd(buf))
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
}

const put = (state: State, id: string, v: number) => {
  const tx = new Tx(state)
  tx.put('counters', id, v)
  return tx.changes
}

describe('FileStore', () => {
  it('brings back every acknowledged change after a restart (write-ahead log replay, no clean close)', async () => {
    const path = join(tmp.dir, 'db.json')
    const s1 = new FileStore(path)
    const st1 = new State()
    await s1.open(st1)
    await Promise.all(Array.from({ length: 50 }, (_, i) => s1.append(put(st1, `k${i}`, i))))
    await crash(s1, path)
    const st2 = new State()
    const s2 = new FileStore(path)
    await s2.open(st2)
    expect(st2.counters.size).toBe(50)
    expect(st2.counters.get('k49')).toBe(49)
    expect(s2.recovered.replayed).toBe(50)
    await s2.close()
  })

  it('ignores a torn last line and keeps appending on a clean line', async () => {
    const path = join(tmp.dir, 'db.json')
    const s1 = new FileStore(path)
    const st1 = new State()
    await s1.open(st1)
    await s1.append(put(st1, 'a', 1))
    await s1.append(put(st1, 'b', 2))
    await crash(s1, path)
    addToLines(`${path}.journal.0`, '{"s":3,"ch":[{"c":"counters","id":"c","v":')
    const st2 = new State()
    const s2 = new FileStore(path)
    await s2.open(st2)
    expect([...st2.counters.keys()]).toEqual(['a', 'b'])
    expect(s2.recovered.tornBytes).toBeGreaterThan(0)
    await s2.append(put(st2, 'd', 4))
    await crash(s2, path)
    const st3 = new State()
    const s3 = new FileStore(path)
    await s3.open(st3)
    expect([...st3.counters.keys()]).toEqual(['a', 'b', 'd'])
    await s3.close()
  })

  it('writes into space zeroed ahead; after a crash that space is no torn line, and a write cut short inside it is cut', async () => {
    const path = join(tmp.dir, 'db.json')
    const journal = `${path}.journal.0`
    const s1 = new FileStore(path)
    const st1 = new State()
    await s1.open(st1)
    await s1.append(put(st1, 'a', 1))
    await s1.append(put(st1, 'b', 2))
    const lines = linesEnd(readFileSync(journal))
    expect(lines).toBe((s1 as any).wal.bytes)
    expect(statSync(journal).size).toBeGreaterThanOrEqual(lines + 2 ** 19) // zeroed ahead of the next writes
    await crash(s1, path)
    const st2 = new State()
    const s2 = new FileStore(path)
    await s2.open(st2)
    expect([...st2.counters.keys()]).toEqual(['a', 'b'])
    expect(s2.recovered.tornBytes).toBe(0)
    expect(s2.recovered.notes).toEqual([])
    await s2.append(put(st2, 'c', 3))
    await crash(s2, path)
    // A write cut short inside the zeroed space: its first page never reached the disk, a later one did.
    const buf = readFileSync(journal)
    const tail = '"c":"counters","id":"d","v":4}]}\n{"s":5,"ch":[]}\n'
    buf.write(tail, linesEnd(buf) + 4096)
    writeFileSync(journal, buf)
    const st3 = new State()
    const s3 = new FileStore(path)
    await s3.open(st3)
    expect([...st3.counters.keys()]).toEqual(['a', 'b', 'c'])
    expect(s3.recovered.tornBytes).toBe(4096 + tail.length)
    expect(s3.recovered.notes.join('\n')).toMatch(/dropped the torn last line .*a write cut short by a crash/)
    // Past a run of zeros: what was cut is kept beside the write-ahead log, zeros and all.
    const good = linesEnd(buf)
    expect(readFileSync(`${journal}.cut-${good}`)).toEqual(buf.subarray(good, good + 4096 + tail.length))
    await s3.append(put(st3, 'e', 5))
    await crash(s3, path)
    const st4 = new State()
    const s4 = new FileStore(path)
    await s4.open(st4)
    expect([...st4.counters.keys()]).toEqual(['a', 'b', 'c', 'e'])
    await s4.close()
  })

  it('refuses to start, naming the line, when damage is followed by complete lines (nothing is cut)', async () => {
    const path = join(tmp.dir, 'db.json')
    const s1 = new FileStore(path)
    const st1 = new State()
    await s1.open(st1)
    await s1.append(put(st1, 'a', 1))
    await crash(s1, path)
    addToLines(`${path}.journal.0`, 'garbage\n{"s":3,"ch":[]}\n')
    const before = readFileSync(`${path}.journal.0`, 'utf8')
    await expect(new FileStore(path).open(new State())).rejects.toThrow(/damaged at line 2/)
    expect(readFileSync(`${path}.journal.0`, 'utf8')).toBe(before)
    expect(existsSync(`${path}.lock`)).toBe(false)
  })

  it('compacts into a lowdb snapshot on close and loads it back', async () => {
    const path = join(tmp.dir, 'db.json')
    const s1 = new FileStore(path)
    const st1 = new State()
    await s1.open(st1)
    for (let i = 0; i < 10; i++) await s1.append(put(st1, `k${i}`, i))
    await s1.close()
    const snap = JSON.parse(readFileSync(path, 'utf8'))
    expect(snap.format).toBe('dcb-sandbox/1')
    expect(Object.keys(snap.collections.counters)).toHaveLength(10)
    expect(existsSync(`${path}.lock`)).toBe(false)
    expect(readdirSync(tmp.dir).filter((n) => n.includes('.journal.'))).toEqual(['db.json.journal.1'])
    const st2 = new State()
    const s2 = new FileStore(path)
    await s2.open(st2)
    expect(st2.counters.get('k9')).toBe(9)
    await s2.close()
  })

  it('compacts again only once the write-ahead log passes the snapshot size too, before and after a restart', async () => {
    const path = join(tmp.dir, 'db.json')
    const generation = (s: FileStore) => s.info().generation as number
    /** Appends until the write-ahead log holds `bytes` or a compaction starts a generation; answers the most the log held before. */
    const fill = async (s: FileStore, st: State, bytes: number) => {
      const gen = generation(s)
      let most = 0
      for (let i = 0; (s.info().journal_bytes as number) < bytes && generation(s) === gen; i++) {
        await s.append(put(st, `filler-${i % 50}`, i))
        most = Math.max(most, s.info().journal_bytes as number)
        await (s as any).compaction.running
      }
      return most
    }
    const s1 = new FileStore(path, { compactBytes: 2000 })
    const st1 = new State()
    await s1.open(st1)
    // A snapshot of about 30 KB, far past compactBytes.
    for (let i = 0; i < 300; i++) await s1.append(put(st1, `a-counter-with-a-long-name-${i}`.padEnd(90, '-'), i))
    await (s1 as any).compaction.running
    await s1.compact()
    const size = statSync(path).size
    expect(size).toBeGreaterThan(20_000)
    const gen = generation(s1)
    // Past compactBytes, short of the snapshot's size: no compaction.
    await fill(s1, st1, size - 1000)
    expect(generation(s1)).toBe(gen)
    // Then one, once the write-ahead log passed the snapshot's size.
    expect(await fill(s1, st1, Infinity)).toBeGreaterThanOrEqual(size)
    expect(generation(s1)).toBe(gen + 1)
    await s1.close()
    // A store opened on that data file takes the threshold from the snapshot it loads.
    const s2 = new FileStore(path, { compactBytes: 2000 })
    const st2 = new State()
    await s2.open(st2)
    const gen2 = generation(s2)
    await fill(s2, st2, statSync(path).size - 1000)
    expect(generation(s2)).toBe(gen2)
    await s2.close()
    expect(st2.counters.size).toBe(350)
  })

  it('keeps appending while it compacts, and loses nothing', async () => {
    const path = join(tmp.dir, 'db.json')
    const s1 = new FileStore(path, { compactBytes: 2000 })
    const st1 = new State()
    await s1.open(st1)
    const writes: Promise<void>[] = []
    for (let i = 0; i < 300; i++) {
      writes.push(s1.append(put(st1, `k${i}`, i)))
      if (i % 50 === 0) await new Promise((r) => setImmediate(r))
    }
    await Promise.all(writes)
    await s1.compact()
    await crash(s1, path)
    const st2 = new State()
    const s2 = new FileStore(path)
    await s2.open(st2)
    expect(st2.counters.size).toBe(300)
    await s2.close()
  })

  it("takes over a lock whose pid another process has now (another start time), and keeps refusing the owner's", async () => {
    const path = join(tmp.dir, 'db.json')
    // A live process that is not the lock's owner: the pid a crashed server had, reused.
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { stdio: 'ignore' })
    try {
      const started = startTimeOf(child.pid!)
      expect(started).toMatch(/^\d+$/)
      // Its own start time: the owner runs, the lock holds.
      writeFileSync(`${path}.lock`, `${child.pid} ${started}\n`)
      await expect(new FileStore(path).open(new State())).rejects.toThrow(`in use by another dcb server (pid ${child.pid})`)
      // Another start time: a stranger with the owner's pid, the lock is stale.
      writeFileSync(`${path}.lock`, `${child.pid} ${Number(started) + 1}\n`)
      const s = new FileStore(path)
      await s.open(new State())
      expect(readFileSync(`${path}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} ${startTimeOf(process.pid)} host=.* token=[0-9a-f]{16}\n$`))
      await s.close()
      expect(existsSync(`${path}.lock`)).toBe(false)
    } finally {
      child.kill()
    }
  })

  it('refuses a data file held by a live process, naming its pid', async () => {
    const path = join(tmp.dir, 'db.json')
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { stdio: 'ignore' })
    try {
      writeFileSync(`${path}.lock`, `${child.pid}\n`)
      const s = new FileStore(path)
      await expect(s.open(new State())).rejects.toThrow(new RegExp(`in use by another dcb server \\(pid ${child.pid}\\)`))
      await expect(s.open(new State())).rejects.toBeInstanceOf(StoreError)
    } finally {
      child.kill()
    }
  })

  it('takes over a stale lock left by a process that is gone', async () => {
    const path = join(tmp.dir, 'db.json')
    writeFileSync(`${path}.lock`, '999999999\n')
    const s = new FileStore(path)
    await s.open(new State())
    expect(readFileSync(`${path}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} ${startTimeOf(process.pid)} host=.* token=[0-9a-f]{16}\n$`))
    await s.close()
  })

  it('refuses a data file that is not a dcb snapshot with a clear error', async () => {
    const path = join(tmp.dir, 'db.json')
    writeFileSync(path, '{"hello":')
    await expect(new FileStore(path).open(new State())).rejects.toThrow(/is not a dcb snapshot/)
    writeFileSync(path, '{"hello":1}')
    await expect(new FileStore(path).open(new State())).rejects.toThrow(/is not a dcb snapshot/)
  })
})

describe('server restart durability', () => {
  it('a restarted server on the same file answers Status for every subscription, and keeps the clock', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const a = await startClient({ data })
    const ids = [await a.subscribe('60123456001'), await a.subscribe('447700900001', 'STREAMPLUS', 'gb')]
    await a.control('/clock/advance', { by: 'P3D' })
    const clockBefore = (await a.control('/clock')).body.now
    const before = await Promise.all(ids.map((id) => a.api('/subscriptions/status', { subscription_id: id })))
    await a.close()
    const b = await startClient({ data })
    try {
      for (const [i, id] of ids.entries()) {
        const r = await b.api('/subscriptions/status', { subscription_id: id })
        expect(r.body).toEqual(before[i]!.body)
      }
      const clockAfter = (await b.control('/clock')).body.now
      expect(clockAfter >= clockBefore).toBe(true)
      expect((await b.control('/sms?msisdn=60123456001')).body.messages.length).toBe(2)
    } finally {
      await b.close()
    }
  })
})

describe('charge history in the write-ahead log', () => {
  const charge = (at: number, kind: Charge['kind'] = 'renewal'): Charge => ({ at, kind, outcome: 'SUCCESS', amount: '9.90', currency: 'MYR' })
  const sub = (charges: Charge[], charge_count: number): SubscriptionRecord => ({
    id: 'sub-1',
    merchant: 'demo',
    service: 'STREAMPLUS',
    country: 'my',
    carrier: 'c',
    msisdn: '60123456001',
    language: 'en',
    flow: 'otp',
    status: 'ACTIVE',
    subscribed_at: 0,
    anchor_at: 0,
    periods: charge_count,
    expiry_at: charge_count * 1000,
    canceled_at: null,
    cancel_reason: null,
    retries: 0,
    next_retry_at: null,
    carrier_cancel_at: null,
    charges,
    charge_count,
  })

  it('writes only the charges a change adds to the write-ahead log, and a replay rebuilds the whole history', async () => {
    const path = join(tmp.dir, 'db.json')
    const s1 = new FileStore(path)
    const st1 = new State()
    await s1.open(st1)
    let tx = new Tx(st1)
    const first = sub(
      Array.from({ length: 30 }, (_, i) => charge(i * 1000, i ? 'renewal' : 'first')),
      40,
    )
    tx.put('subs', first.id, first)
    expect(tx.changes[0]).not.toHaveProperty('add') // a new record: whole
    await s1.append(tx.changes)
    // Two renewals, the history kept to its last 30.
    tx = new Tx(st1)
    const next = { ...first, charges: [...first.charges.slice(2), charge(30_000), charge(31_000)], charge_count: 42 }
    tx.put('subs', next.id, next)
    const [ch] = tx.changes as any[]
    expect(ch.add).toEqual([charge(30_000), charge(31_000)])
    expect(ch.keep).toBe(30)
    expect(JSON.stringify(ch).length).toBeLessThan(JSON.stringify(next).length / 3)
    await s1.append(tx.changes)
    // A change that is no append to the history (rebuilt charges): the whole record.
    tx = new Tx(st1)
    const rebuilt = { ...next, charges: next.charges.map((c) => ({ ...c })), charge_count: 43 }
    tx.put('subs', rebuilt.id, rebuilt)
    expect(tx.changes[0]).not.toHaveProperty('add')
    expect(tx.changes[0]).toMatchObject({ merge: true, v: { charges: rebuilt.charges, charge_count: 43 } })
    await s1.append(tx.changes)
    // A cancellation: no charge added, none written (only the field that changed).
    tx = new Tx(st1)
    const canceled = { ...rebuilt, status: 'CANCELED' as const }
    tx.put('subs', canceled.id, canceled)
    expect(tx.changes[0]).toEqual({ c: 'subs', id: canceled.id, v: { status: 'CANCELED' }, merge: true })
    await s1.append(tx.changes)
    await crash(s1, path)
    const st2 = new State()
    const s2 = new FileStore(path)
    await s2.open(st2)
    try {
      expect(st2.subs.get('sub-1')).toEqual(canceled)
    } finally {
      await s2.close()
    }
  })

  it('a verification a Verify changes is written as the fields that changed; a restart rebuilds it whole', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const a = await startClient({ data })
    let verification: unknown
    let subscription: unknown
    let subscriptionId = ''
    try {
      const id = (subscriptionId = await a.subscribe('60123456001'))
      subscription = (await a.control(`/subscriptions/${id}`)).body
      // The default session's lines are in the write-ahead log of every session.
      const [, verify] = journalLines(`${data}.sessions/journal.0`)
      const change = verify.ch.find((c: any) => c.c === 'verifs')
      expect(change).toEqual({
        c: 'verifs',
        id: change.id,
        v: { attempts: 1, state: 'used', subscription_id: id, result: 'SUCCESS' },
        merge: true,
      })
      verification = a.sandbox.engine.state.verifs.get(change.id)
      expect(verification).toMatchObject({ msisdn: '60123456001', otp: expect.any(String), state: 'used' })
      await crashLog((a.sandbox.store as any).log, data)
    } finally {
      await a.close().catch(() => {})
    }
    const b = await startClient({ data })
    try {
      const v = verification as { id: string }
      expect(b.sandbox.engine.state.verifs.get(v.id)).toEqual(verification)
      // The record whole again; the request log is not kept across a restart, so its entries leave the timeline.
      const withoutRequests = (sub: any) => ({ ...sub, timeline: sub.timeline.filter((e: any) => e.type !== 'request') })
      expect(withoutRequests((await b.control(`/subscriptions/${subscriptionId}`)).body)).toEqual(withoutRequests(subscription))
    } finally {
      await b.close()
    }
  })

  it('a field dropped or set to undefined writes the whole record (JSON cannot say that a field is gone)', async () => {
    const st = new State()
    const verif = { id: 'v1', msisdn: '60123456001', state: 'pending', attempts: 0, locked_out: true } as any
    let tx = new Tx(st)
    tx.put('verifs', 'v1', verif)
    tx = new Tx(st)
    const { locked_out: _, ...dropped } = { ...verif, attempts: 1 }
    tx.put('verifs', 'v1', dropped)
    expect(tx.changes).toEqual([{ c: 'verifs', id: 'v1', v: dropped }])
    tx = new Tx(st)
    tx.put('verifs', 'v1', { ...dropped, state: undefined })
    expect(tx.changes).toEqual([{ c: 'verifs', id: 'v1', v: { ...dropped, state: undefined } }])
    // Changed twice in one transaction: one delta against the record as it was before it.
    tx = new Tx(st)
    tx.put('verifs', 'v1', { ...dropped, state: undefined, attempts: 2 })
    tx.put('verifs', 'v1', { ...dropped, state: 'used', attempts: 3 })
    expect(tx.changes).toEqual([{ c: 'verifs', id: 'v1', v: { state: 'used', attempts: 3 }, merge: true }])
  })

  it('a renewal of a long-lived subscription writes one charge, not its history once more', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const a = await startClient({ data, clock: '2026-01-31T09:00:00', chargesPerSubscription: 30 })
    const journal = async () => (await a.control('/health')).body.store.journal_bytes as number
    try {
      const id = await a.subscribe('60123456001', 'QUICKTEST')
      await a.control('/clock/advance', { by: 'P2D' }) // 48 hourly renewals: the history is cut to 30
      const before = await journal()
      await a.control('/clock/advance', { by: 'PT1H' })
      // The record's fields and one charge (its 30 charges would be some 2.5 KB more).
      expect((await journal()) - before).toBeLessThan(1200)
      const h = (await a.control(`/subscriptions/${id}`)).body
      expect(h.charges).toHaveLength(30)
      expect(h.charge_count).toBe(50)
    } finally {
      await a.close()
    }
  })
})
