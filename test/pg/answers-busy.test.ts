/**
 * Issue 43 on the shared store: control answers in flight (written, not yet read by their clients)
 * are bounded on a replica of `dcb serve --store` as on a data file (test/cli/read-bounds.test.ts).
 * Clients that read the full request log, which another replica filled, and leave the answers unread
 * reach the bound; the next read is refused 503 `ANSWERS_BUSY` naming it, and the replica serves on.
 * Real binaries on loopback.
 */
import { describe, expect, it } from 'vitest'
import { control, merchant, until } from './replicas.js'
import { fill, heldRead } from '../slow-clients.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

const FULL_LOG = '/_sandbox/requests?limit=500'

describe('control answers in flight on a replica of the shared store', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it('a read past 64 MiB of answers in flight is refused 503 ANSWERS_BUSY naming the bound, until they are read', async () => {
    const db = 'answers_busy'
    const url = await pg.createDatabase(db)
    const [a, b] = await replicas.start(url, 2)
    // The log filled through B: A answers it from the database.
    await fill(b!.url, 500)
    await until('500 request log entries in the database', async () => (await pg.query('SELECT count(*)::int AS n FROM dcb_requests', [], db)).rows[0].n >= 500)
    const size = (await (await fetch(`${a!.url}${FULL_LOG}`)).arrayBuffer()).byteLength
    expect(size).toBeGreaterThan(20 * 2 ** 20)
    // Reads left unread, one after another, until one is refused: three answers of this size pass 64 MiB.
    const held: Awaited<ReturnType<typeof heldRead>>[] = []
    while (held.length < 10 && !held.some((h) => h.status === 503)) held.push(await heldRead(a!.url, FULL_LOG))
    const refused = held.filter((h) => h.status === 503)
    const answered = held.filter((h) => h.status === 200)
    expect(refused).toHaveLength(1)
    expect(answered.length).toBeGreaterThan(0)
    expect(answered.length * size).toBeLessThanOrEqual(64 * 2 ** 20 + size)
    const body = JSON.parse(await refused[0]!.rest())
    expect(body.error).toBe('ANSWERS_BUSY')
    expect(body.message).toMatch(/past the server's bound of 64 MiB of answers in flight; retry once they are read/)
    for (const h of answered) expect(Buffer.byteLength(await h.rest())).toBe(size)
    // Once read, a read is answered again, and so is a merchant call.
    expect((await fetch(`${a!.url}${FULL_LOG}`)).status).toBe(200)
    const init = await merchant(a!.url, 'init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    expect(init.body.status).toBe('SUCCESS')
    expect((await control(a!.url, '/health')).http).toBe(200)
  }, 120_000)
})
