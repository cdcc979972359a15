import postgres from 'pg'
import { describe, expect, it } from 'vitest'
import type { CutProxy } from './cut-proxy.js'
import { control, merchant } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

// A turn's last query (its entry of the log, then COMMIT) whose connection is cut, or that outlasts the
// call timeout: the answer says what the database holds, and so does the replica afterwards.
const MSISDN = '60123456001'
const INIT = { msisdn: MSISDN, service_code: 'STREAMPLUS', country_code: 'my' }
/** The query of the Init's turn: its entry of the log (it holds the MSISDN) and the COMMIT. */
const initTurn = (query: string) => query.includes('INSERT INTO dcb_changes') && query.includes(MSISDN)

describe('a COMMIT whose connection is cut (PostgreSQL through a proxy) or that is slow', () => {
  const pg = usePostgres()
  const replicas = useReplicas()
  let proxy: CutProxy | undefined

  async function start(database: string): Promise<{ url: string; rows: () => Promise<number> }> {
    await pg.createDatabase(database)
    proxy = await replicas.proxy(pg.port)
    const [replica] = await replicas.start(proxy.url(database), 1)
    /** Entries of the log that hold the MSISDN, as the database has them. */
    const rows = async () => Number((await pg.query(`SELECT count(*) AS n FROM dcb_changes WHERE changes LIKE $1`, [`%${MSISDN}%`], database)).rows[0].n)
    return { url: replica!.url, rows }
  }

  it('its reply lost, the change committed: the call answers SUCCESS, the replica holding what was committed', async () => {
    const { url, rows } = await start('lost_reply')
    const cut = proxy!.cutAt(initTurn, 'after-reply')
    const init = await merchant(url, 'init', INIT)
    await cut
    expect(await rows()).toBe(1)
    expect(init.http).toBe(200)
    expect(init.body.status).toBe('SUCCESS')
    // The replica's state is the database's: the OTP is there and a Verify with it subscribes.
    const otp = await control(url, `/otp?msisdn=${MSISDN}`)
    expect(otp.http).toBe(200)
    const verify = await merchant(url, 'verify', { verif_request_id: init.body.payload.verif_request_id, otp: otp.body.otp })
    expect(verify.body.status).toBe('SUCCESS')
  })

  it('cut before the server got it: nothing committed, the call answers 500, the replica holding nothing of it', async () => {
    const { url, rows } = await start('lost_query')
    const cut = proxy!.cutAt(initTurn, 'before')
    const init = await merchant(url, 'init', INIT)
    await cut
    expect(await rows()).toBe(0)
    expect(init.http).toBe(500)
    expect(init.body).toMatchObject({ message: 'ERROR', status_code: 500 })
    expect((await control(url, `/otp?msisdn=${MSISDN}`)).http).toBe(404)
    // Nothing left half done: the same call again works.
    expect((await merchant(url, 'init', INIT)).body.status).toBe('SUCCESS')
    expect(await rows()).toBe(1)
  })

  it('its reply lost with the database out of reach: the answer says the outcome is not known, the replica showing what was committed once it is back', async () => {
    const { url, rows } = await start('lost_unknown')
    // From the cut on, nothing reaches the database (the replica cannot ask what became of its COMMIT).
    const cut = proxy!.cutAt(initTurn, 'after-reply', { everything: true })
    const init = await merchant(url, 'init', INIT)
    await cut
    expect(init.http).toBe(500)
    expect(init.reason).toMatch(/^the change may not have been stored \(.*whether its changes were committed is not known/)
    // It does not also claim that nothing was changed.
    expect(init.reason).not.toMatch(/nothing was changed/)
    expect(await rows()).toBe(1)
    proxy!.refuseNew = false
    const otp = await control(url, `/otp?msisdn=${MSISDN}`)
    expect(otp.http).toBe(200)
    expect(otp.body.msisdn).toBe(MSISDN)
  })

  it('its COMMIT slower than the call timeout (the log locked by another transaction): the answer is what the database holds once the lock is gone', async () => {
    const { url, rows } = await start('slow_commit')
    // Another transaction holds the log's table: the turn's INSERT waits for it past the call timeout (3 s),
    // and would be done, COMMIT and all, the moment the lock goes if nothing ended it.
    const locker = new postgres.Client({ connectionString: pg.url('slow_commit') })
    await locker.connect()
    let init: Awaited<ReturnType<typeof merchant>>
    try {
      await locker.query('BEGIN; LOCK TABLE dcb_changes IN EXCLUSIVE MODE')
      init = await merchant(url, 'init', INIT)
    } finally {
      await locker.query('COMMIT').catch(() => {})
      await locker.end()
    }
    // The table's lock once more: granted after every transaction that waited for it ended (the turn's, if alive).
    await pg.query('BEGIN; LOCK TABLE dcb_changes IN EXCLUSIVE MODE; COMMIT', undefined, 'slow_commit')
    if (init.http === 200) return expect(await rows()).toBe(1)
    expect(init.http).toBe(500)
    expect(await rows(), `answered 500 (${init.reason}), yet the database holds the change`).toBe(0)
    // Nothing left half done: the same call again works.
    expect((await merchant(url, 'init', INIT)).body.status).toBe('SUCCESS')
    expect(await rows()).toBe(1)
  }, 30_000)
})
