/**
 * The request log of a session another replica deleted, as the replica that still held it open
 * lists it (the delete's notice not there yet). The database numbers a session made anew from 1; the
 * replica kept the deleted session's entries and its numbering, so it went on listing entries of a
 * session that is not there, and dropped every entry of the new one numbered below them (its own
 * write that made the session anew among them). A server in process on the test PostgreSQL, the
 * delete's notice never sent.
 */
import { describe, expect, it } from 'vitest'
import type { RequestsAnswer } from '../../src/contract/index.js'
import { openStream } from '../sse.js'
import { KEY } from './replicas.js'
import { deleteUnheard } from './session-rows.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

describe('the request log of a session deleted by another replica', () => {
  const pg = usePostgres()
  const replicas = useReplicas()

  it('lists what the database holds of it: none once deleted, then the new one numbered from 1', async () => {
    const db = 'gone_journal_listed'
    const url = await pg.createDatabase(db)
    // No timer tick in the test: the host keeps the session open until a call finds it gone.
    const running = await replicas.inProcess({ port: 0, store: url, tickMs: 3_600_000 })
    const as = { 'x-dcb-session': 'again' }
    const init = (msisdn: string) =>
      fetch(`${running.url}/subscriptions/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': KEY, ...as },
        body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' }),
      })
    /** The request log's entries as this replica lists them: id and the request's MSISDN. */
    const listed = async () =>
      ((await (await fetch(`${running.url}/_sandbox/requests`, { headers: as })).json()) as RequestsAnswer).requests.map((r) => [r.id, r.msisdn])
    // The console's live stream of it too (a stream watches the session: the request log follows the database's notices).
    const stream = await openStream(`${running.url}/_sandbox/events`, as)
    await stream.event('hello')
    /** The entries the live stream sent after its `mark`-th event, once one of `msisdn` came: id and MSISDN, oldest first. */
    const streamed = async (mark: number, msisdn: string) => {
      // Each frame lists its entries newest first; frames come oldest first. So the entries in order
      // are each frame's reversed, one frame after another (two Inits may share a frame, or not).
      const sent = () =>
        stream.events.slice(mark).flatMap((e) => (e.event === 'requests' ? (e.data.requests as RequestsAnswer['requests']).slice().reverse() : []))
      await stream.next(() => sent().find((r) => r.msisdn === msisdn))
      return sent().map((r) => [r.id, r.msisdn])
    }
    expect((await init('60123456010')).status).toBe(200)
    expect((await init('60123456011')).status).toBe(200)
    expect(await listed()).toEqual([
      [2, '60123456011'],
      [1, '60123456010'],
    ])
    expect(await streamed(0, '60123456011')).toEqual([
      [1, '60123456010'],
      [2, '60123456011'],
    ])

    await deleteUnheard(pg, db, 'again')
    // A read finds it gone: nothing of it is listed.
    expect(await listed()).toEqual([])
    // A write makes it anew: its own entry is the new session's first, here and on the live stream.
    const mark = stream.events.length
    for (const msisdn of ['60123456012', '60123456013', '60123456014']) expect((await init(msisdn)).status).toBe(200)
    const made = [
      [3, '60123456014'],
      [2, '60123456013'],
      [1, '60123456012'],
    ]
    expect(await listed()).toEqual(made)
    expect(await streamed(mark, '60123456014')).toEqual(made.slice().reverse())
    stream.close()

    // Deleted again, and made anew by another replica, which logged a call of it (its first entry: an Init of another MSISDN).
    const [ours] = (await pg.query(`SELECT entry FROM dcb_requests WHERE session = 'again' AND id = 1`, [], db)).rows
    const theirs = JSON.stringify({ ...JSON.parse(ours.entry), msisdn: '60123456099' })
    await deleteUnheard(pg, db, 'again')
    await pg.query(`INSERT INTO dcb_sessions (name) VALUES ('again')`, [], db)
    await pg.query(`INSERT INTO dcb_journals (session, requests) VALUES ('again', 1)`, [], db)
    await pg.query(`INSERT INTO dcb_requests (session, id, entry) VALUES ('again', 1, $1)`, [theirs], db)
    expect(await listed()).toEqual([[1, '60123456099']])
    expect((await init('60123456015')).status).toBe(200)
    expect(await listed()).toEqual([
      [2, '60123456015'],
      [1, '60123456099'],
    ])
  }, 60_000)
})
