import { describe, expect, it } from 'vitest'
import type { Served } from '../cli/run.js'
import { merchant, until } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

// Health asks the database with a write: a replica that can reach the database but not write to it
// (here, the database made read-only) answers 503, and 200 again once it can.
describe('health of a replica that cannot write', () => {
  const db = usePostgres()
  const replicas = useReplicas()

  /** New connections of `name` read-only (`on`) or not; its open ones are ended, so the replica's next ones take it. */
  async function readOnly(name: string, on: boolean) {
    await db.query(on ? `ALTER DATABASE ${name} SET default_transaction_read_only = on` : `ALTER DATABASE ${name} RESET default_transaction_read_only`)
    await db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name])
  }

  const health = async (base: string) => {
    const res = await fetch(`${base}/_sandbox/health`)
    return { http: res.status, body: (await res.json()) as { ok?: boolean; store?: unknown } }
  }

  it('answers 503 naming the database while it is read-only, 200 once it is writable again', async () => {
    const url = await db.createDatabase('readonly')
    const [a] = (await replicas.start(url, 1)) as [Served]
    expect((await health(a.url)).http).toBe(200)
    await readOnly('readonly', true)
    const refused = await until('health 503 on a read-only database', async () => {
      const h = await health(a.url)
      // The first may name the connections just ended; then the database read-only.
      return h.http === 503 && /read-only/.test(String(h.body.store)) && h
    })
    expect(refused.body).toMatchObject({ ok: false })
    expect(refused.body.store).toMatch(/^the database at 127\.0\.0\.1:\d+\/readonly cannot be used: .*read-only transaction/)
    const init = await merchant(a.url, 'init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
    expect(init.http).toBe(500)
    expect(init.reason).toMatch(/read-only transaction/)

    await readOnly('readonly', false)
    await until('health 200 once writable', async () => (await health(a.url)).http === 200)
    expect((await merchant(a.url, 'init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })).body.status).toBe('SUCCESS')
  }, 60_000)
})
