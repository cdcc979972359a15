/**
 * Issue 43 on the shared store: a live stream (`/_sandbox/events`) of a replica of `dcb serve
 * --store` whose client stops reading is cut once it holds over 1 MiB unread (the next batch finds
 * it so), as on a data file (test/cli/read-bounds.test.ts). Here the frames are of calls another
 * replica answered, reaching this one through the database. Real binaries on loopback.
 */
import { describe, expect, it } from 'vitest'
import { liveStream, merchant } from './replicas.js'
import { fill, stalledStream, witness } from '../slow-clients.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

describe('the live stream of a replica of the shared store', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it('cuts only the clients that never read, once they hold 1 MiB unread', async () => {
    const url = await pg.createDatabase('live_stream_bound')
    const [a, b] = await replicas.start(url, 2)
    const stalled = await Promise.all(Array.from({ length: 5 }, () => stalledStream(a!.url)))
    const reader = await witness(a!.url)
    /**
     * 25 batches of 20 calls of 60 KiB through B (30 MiB of frames to each of A's streams, past what
     * the sockets' buffers take). Each batch goes out on A before the next 20 calls: calls made
     * faster would be skipped in one batch, not sent.
     */
    for (let calls = 20; calls <= 500; calls += 20) {
      await fill(b!.url, 20, 60)
      await reader.until(calls)
    }
    const sent = reader.bytes()
    reader.close()
    expect(sent).toBeGreaterThan(25 * 2 ** 20)
    // Each stream the server cut ends once what it was sent is read; one it kept goes on to all it was sent.
    const drained = await Promise.all(stalled.map((s) => s.drain(sent)))
    for (const d of drained) {
      expect(d.ended).toBe(true)
      expect(d.bytes).toBeLessThan(sent / 2)
    }
    // The replica serves on: a merchant call, and a new stream gets its hello and the next batch.
    const stream = await liveStream(a!.url)
    try {
      await stream.event('hello')
      const init = await merchant(b!.url, 'init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
      expect(init.body.status).toBe('SUCCESS')
      expect((await stream.event('requests')).requests.map((e: { msisdn: string }) => e.msisdn)).toEqual(['60123456001'])
      const own = await merchant(a!.url, 'init', { msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' })
      expect(own.body.status).toBe('SUCCESS')
    } finally {
      stream.close()
    }
  }, 120_000)
})
