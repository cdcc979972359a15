/**
 * Issue 43 through the real binary: reads of the control API are bounded, so that many clients
 * reading a full request log at once cannot take the server out of memory. Memory is the server
 * process's own, read from /proc (its peak resident size, VmHWM).
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { fill, heldRead, stalledStream, witness } from '../slow-clients.js'
import { serve, type Served } from './run.js'

/** The server's peak and current resident size, MiB (Linux /proc). */
const memory = (s: Served) => {
  const status = readFileSync(`/proc/${s.child.pid}/status`, 'utf8')
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1])
  return { peak: kib('VmHWM') / 1024, now: kib('VmRSS') / 1024 }
}

describe('reads of the request log', () => {
  it('a limit above the cap is refused by name', async () => {
    const s = await serve(['--in-memory'])
    try {
      const r = await fetch(`${s.url}/_sandbox/requests?limit=1000001`)
      expect(r.status).toBe(400)
      expect((await r.json()).message).toBe('limit: expected a whole number from 1 to 1000000 (the most --request-log-size keeps)')
      const subs = await fetch(`${s.url}/_sandbox/subscriptions?limit=100001`)
      expect(subs.status).toBe(400)
      expect((await subs.json()).message).toBe('limit: expected a whole number from 1 to 100000')
      expect((await fetch(`${s.url}/_sandbox/requests?limit=1000000`)).status).toBe(200)
    } finally {
      await s.stop()
    }
  })

  it('60 clients reading a full log at once and not reading the answers keep memory bounded: each is answered, or refused 503 naming the bound', async () => {
    const s = await serve(['--in-memory'])
    try {
      await fill(s.url, 500)
      const size = (await (await fetch(`${s.url}/_sandbox/requests?limit=500`)).arrayBuffer()).byteLength
      expect(size).toBeGreaterThan(25 * 2 ** 20)
      const before = memory(s)
      const held = await Promise.all(Array.from({ length: 60 }, () => heldRead(s.url, '/_sandbox/requests?limit=500')))
      // Every client has its status, the 200s holding their answers unread.
      const during = memory(s)
      const refused = held.filter((h) => h.status === 503)
      for (const h of refused) {
        const body = JSON.parse(await h.rest())
        expect(body.error).toBe('ANSWERS_BUSY')
        expect(body.message).toMatch(/past the server's bound of 64 MiB of answers in flight; retry once they are read/)
      }
      const answered = held.filter((h) => h.status === 200)
      expect(answered.length).toBeGreaterThan(0)
      expect(answered.length + refused.length).toBe(60)
      for (const h of answered) expect(Buffer.byteLength(await h.rest())).toBe(size)
      // Unbounded, 60 answers of 25 MiB were held at once (1.5 GiB and more); the bound keeps two or three.
      expect(during.peak - before.peak).toBeLessThan(500)
      // Once read, a read is answered again.
      expect((await fetch(`${s.url}/_sandbox/requests?limit=500`)).status).toBe(200)
    } finally {
      await s.stop('SIGKILL')
    }
  }, 120_000)
})

/** Whether `ok()` came to hold within `ms`, looked at every 100 ms. */
async function returned(ok: () => boolean, ms: number): Promise<boolean> {
  // wall-clock: resident size has no event to wait on; the server gives memory back once it falls idle
  for (const end = Date.now() + ms; !ok(); await new Promise((r) => setTimeout(r, 100))) if (Date.now() > end) return false
  return true
}

describe('the live stream', () => {
  it('cuts clients that never read once they hold 1 MiB unread; a third round of them takes no more memory than the second, and memory comes back once they leave', async () => {
    const s = await serve(['--in-memory'])
    try {
      // The request log full first (its 32 MiB of bodies): what grows after is the streams'.
      await fill(s.url, 700, 60)
      const before = memory(s)
      /**
       * 300 streams that stop reading, then 25 batches of 20 calls of 60 KiB (30 MiB of frames to
       * each, past what the sockets' buffers take), then the streams read to their end. Each batch
       * goes out before the next 20 calls: calls made faster would be skipped in one batch, not sent.
       */
      const round = async () => {
        const clients = await Promise.all(Array.from({ length: 300 }, () => stalledStream(s.url)))
        const reader = await witness(s.url)
        for (let calls = 20; calls <= 500; calls += 20) {
          await fill(s.url, 20, 60)
          await reader.until(calls)
        }
        reader.close()
        const during = memory(s)
        // Each stream the server cut ends once what it was sent is read; one it kept would stay open.
        for (const c of clients) c.resume()
        await Promise.all(clients.map((c) => c.ended))
        expect((await fetch(`${s.url}/_sandbox/health`)).status).toBe(200)
        return during
      }
      const first = await round()
      // 300 streams of 1 MiB unread each, were they copies; one copy of the frames, shared.
      expect(first.peak - before.peak).toBeLessThan(256)
      // What a round's streams held is given back, not kept: once the heap and the allocator have
      // grown to a round's size (two rounds), a third takes no more. A server that kept each cut
      // stream's frames would grow by a round's worth every time. (Resident size alone need not fall
      // between rounds: the allocator may keep freed pages for the next.)
      const second = await round()
      const third = await round()
      expect(third.peak - second.peak).toBeLessThan(32)
      expect(third.now - second.now).toBeLessThan(32)
      // Once they have left, resident size comes back within 32 MiB of where it was before the first
      // round (the server gives freed memory back when it falls idle: looked at until it has, or 20 s).
      const back = await returned(() => memory(s).now - before.now < 32, 20_000)
      expect(memory(s).now - before.now, `RSS ${memory(s).now} MiB after, ${before.now} MiB before`).toBeLessThan(32)
      expect(back).toBe(true)
    } finally {
      await s.stop('SIGKILL')
    }
  }, 180_000)
})
