/**
 * Issue 21 through the real binary on a real filesystem that fills up: a small tmpfs (CI runs as
 * root). Writes that cannot be made durable answer a server error and leave no trace, health says
 * so and recovers once space is freed, and a SIGTERM on a full disk keeps the write-ahead logs (said on
 * stderr, non-zero exit) so that the next start finds every acknowledged write.
 */
import { execFileSync } from 'node:child_process'
import { closeSync, cpSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dcb, serve, type Served } from './run.js'

const KEY = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
let dir: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dcb-full-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir])
})
const servers: Served[] = []
afterAll(async () => {
  // A server a failed assertion left running would keep the filesystem busy.
  for (const s of servers) await s.stop('SIGKILL')
  execFileSync('umount', [dir])
  rmSync(dir, { recursive: true, force: true })
})

/** Fills the filesystem: a file grown until the next byte does not fit. */
function fillUp(file: string): void {
  const fd = openSync(file, 'a')
  try {
    for (const size of [65536, 4096, 1])
      for (;;) {
        try {
          writeSync(fd, Buffer.alloc(size))
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break
          throw e
        }
      }
  } finally {
    closeSync(fd)
  }
}

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, { method: 'POST', headers: { ...KEY, ...headers }, body: JSON.stringify(body) })
  return { status: res.status, reason: res.headers.get('x-dcb-reason'), body: (await res.json()) as any }
}

async function subscribe(url: string, msisdn: string, headers: Record<string, string> = {}): Promise<string> {
  const init = await post(url, '/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, headers)
  const otp = (await (await fetch(`${url}/_sandbox/otp?msisdn=${msisdn}`, { headers })).json()) as any
  const verify = await post(url, '/subscriptions/verify', { verif_request_id: init.body.payload.verif_request_id, otp: otp.otp }, headers)
  expect(verify.body.status).toBe('SUCCESS')
  return verify.body.payload.subscription_id
}

describe('dcb serve on a disk that fills up', () => {
  it('answers 500 and keeps nothing of a call it cannot store; health 503, then 200 once space is freed; a SIGTERM on a full disk keeps the write-ahead logs and the next start finds every acknowledged write', async () => {
    const data = join(dir, 'sandbox.json')
    const filler = join(dir, 'filler')
    const s = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    servers.push(s)
    const acknowledged = [await subscribe(s.url, '60123456001'), await subscribe(s.url, '60123456002')]
    const inSession = await subscribe(s.url, '60123456003', { 'x-dcb-session': 'team-a' })

    fillUp(filler)
    // The write-ahead log's last page may still take a line or two: write until one does not fit.
    let refused: Awaited<ReturnType<typeof post>> | undefined
    let msisdn = ''
    for (let i = 10; i < 99 && !refused; i++) {
      msisdn = `601234560${i}`
      const init = await post(s.url, '/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
      if (init.status !== 200) refused = init
    }
    expect(refused?.status).toBe(500)
    expect(refused?.body.message).toBe('ERROR')
    // ENOSPC, or the short write a full disk gives first (part of the line fitted): a failed write either way.
    expect(refused?.reason).toMatch(/could not be stored .*(ENOSPC|short write)/)
    const sms = (await (await fetch(`${s.url}/_sandbox/sms?msisdn=${msisdn}`)).json()) as any
    expect(sms.messages).toEqual([])
    const health = await fetch(`${s.url}/_sandbox/health`)
    expect(health.status).toBe(503)
    expect(await health.json()).toEqual({ ok: false, store: expect.stringMatching(/ENOSPC|short write/) })

    rmSync(filler)
    acknowledged.push(await subscribe(s.url, '60123456099'))
    expect((await fetch(`${s.url}/_sandbox/health`)).status).toBe(200)

    fillUp(filler)
    const code = await s.stop('SIGTERM')
    expect(code).not.toBe(0)
    expect(s.output()).toMatch(/dcb: shutdown failed: .*(ENOSPC|short write).*the write-ahead logs are kept/)

    rmSync(filler)
    const again = await serve(['--data', data])
    servers.push(again)
    try {
      for (const id of acknowledged) expect((await post(again.url, '/subscriptions/status', { subscription_id: id })).body.payload.status).toBe('ACTIVE')
      const named = await post(again.url, '/subscriptions/status', { subscription_id: inSession }, { 'x-dcb-session': 'team-a' })
      expect(named.body.payload.status).toBe('ACTIVE')
      expect((await (await fetch(`${again.url}/_sandbox/sms?msisdn=${msisdn}`)).json()) as any).toEqual({ msisdn, messages: [] })
    } finally {
      expect(await again.stop('SIGTERM')).toBe(0)
    }
  })
})

// The write-ahead log is zeroed 1 MiB ahead of its writes: on a disk that fills up, writes go on into that
// space, then the zeroing fails (given back) and the write-ahead log grows by its writes, which fail in turn.
describe('dcb serve on a disk that fills up after the write-ahead log was zeroed ahead', () => {
  let roomy: string
  beforeAll(() => {
    roomy = mkdtempSync(join(tmpdir(), 'dcb-zeroed-'))
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', roomy])
  })
  afterAll(async () => {
    for (const s of servers) await s.stop('SIGKILL')
    execFileSync('umount', [roomy])
    rmSync(roomy, { recursive: true, force: true })
  })

  it('writes into the zeroed space while the disk is full, then answers 500; once space is freed it writes again, and after a SIGKILL every acknowledged write is there', async () => {
    const data = join(roomy, 'sandbox.json')
    const s = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    servers.push(s)
    const acknowledged = [await subscribe(s.url, '60123456001')]
    expect(statSync(`${data}.sessions/journal.0`).size).toBe(2 ** 20)
    fillUp(join(roomy, 'filler'))
    let inits = 0
    let refused: Awaited<ReturnType<typeof post>> | undefined
    for (let i = 0; i < 5000 && !refused; i++) {
      const init = await post(s.url, '/subscriptions/init', {
        msisdn: `6012${String(i).padStart(5, '0')}0${String(i % 100).padStart(2, '0')}`,
        service_code: 'STREAMPLUS',
        country_code: 'my',
      })
      if (init.status === 200) inits++
      else refused = init
    }
    // Hundreds of Inits fit in the space zeroed ahead (each line about a kilobyte).
    expect(inits).toBeGreaterThan(300)
    expect(refused?.status).toBe(500)
    expect(refused?.reason).toMatch(/could not be stored .*(ENOSPC|short write)/)
    expect((await fetch(`${s.url}/_sandbox/health`)).status).toBe(503)
    rmSync(join(roomy, 'filler'))
    acknowledged.push(await subscribe(s.url, '60123456002'))
    expect((await fetch(`${s.url}/_sandbox/health`)).status).toBe(200)
    await s.stop('SIGKILL')
    const again = await serve(['--data', data])
    servers.push(again)
    try {
      const health = (await (await fetch(`${again.url}/_sandbox/health`)).json()) as any
      // Both OTP flows' verifications and every Init acknowledged, nothing of the refused one.
      expect(health.sizes.verifications).toBe(inits + 2)
      expect(health.store.recovered.tornBytes).toBe(0)
      for (const id of acknowledged) expect((await post(again.url, '/subscriptions/status', { subscription_id: id })).body.payload.status).toBe('ACTIVE')
    } finally {
      expect(await again.stop('SIGTERM')).toBe(0)
    }
  })
})

describe('dcb seed on a disk that fills up', () => {
  it('stops at the batch that does not fit with one line naming the error and what is kept; a start from those files finds exactly that', async () => {
    // Its own small filesystem: room for a batch of 10,000 subscriptions, not for the next.
    const small = mkdtempSync(join(tmpdir(), 'dcb-seed-full-'))
    const copy = mkdtempSync(join(tmpdir(), 'dcb-seed-copy-'))
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=12m', 'tmpfs', small])
    try {
      const data = join(small, 's.json')
      const r = await dcb(['seed', '--subscriptions', '100000', '--data', data], { timeoutMs: 60_000 })
      expect(r.code).toBe(1)
      const m = /^dcb: cannot seed: (.+); the (\d+) of 100000 subscriptions written before it are kept in (.+) \((\d+) in all\)\n$/.exec(r.stderr)
      expect(m, r.stderr).not.toBeNull()
      expect(m![1]).toMatch(/ENOSPC|no space|short write/i)
      expect(m![3]).toBe(data)
      expect(m![4]).toBe(m![2])
      expect(Number(m![2]) % 10_000).toBe(0)
      expect(Number(m![2])).toBeLessThan(100_000)
      // What it says is kept is on disk: the files, read elsewhere (this disk has no room for a server's lock).
      for (const f of readdirSync(small)) cpSync(join(small, f), join(copy, f), { recursive: true })
      const s = await serve(['--data', join(copy, 's.json')])
      servers.push(s)
      const sessions = (await (await fetch(`${s.url}/_sandbox/sessions`)).json()) as any
      expect(sessions.sessions.find((x: any) => x.name === 'default').subscriptions).toBe(Number(m![2]))
      expect(await s.stop('SIGTERM')).toBe(0)
    } finally {
      execFileSync('umount', [small])
      rmSync(small, { recursive: true, force: true })
      rmSync(copy, { recursive: true, force: true })
    }
  })
})
