/**
 * `dcb logs -f` and the live stream on a replica of a shared store: the request log is the database's, so
 * the stream's hello names the database's next request id (not what the replica happened to read),
 * and a follower that reconnects to a restarted replica neither says the request log is new nor prints
 * old entries again.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN } from '../cli/run.js'
import { outputShows } from '../wait.js'
import { liveStream, merchant, until } from './replicas.js'
import { usePostgres } from './use-postgres.js'
import { useReplicas } from './use-replicas.js'

const init = (base: string, msisdn: string) => merchant(base, 'init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })

describe('following the request log of a replica', () => {
  const pg = usePostgres()
  const replicas = useReplicas()
  const followers = new Set<ChildProcess>()
  afterEach(() => {
    for (const f of followers) f.kill('SIGKILL')
    followers.clear()
  })

  /** Waits until the database holds `n` request log entries (a replica writes its own just after answering). */
  const logged = (url: string, n: number) =>
    until(
      `${n} request log entries in the database`,
      async () => Number((await pg.query('SELECT count(*) AS n FROM dcb_requests', [], new URL(url).pathname.slice(1))).rows[0].n) >= n,
    )

  /** Two replicas on database `db`, three Inits through A in the database's request log: the replicas. */
  async function threeLogged(db: string) {
    const url = await pg.createDatabase(db)
    const [a, b] = await replicas.start(url, 2)
    for (const m of ['60123456011', '60123456012', '60123456013']) expect((await init(a!.url, m)).body.status).toBe('SUCCESS')
    await logged(url, 3)
    return { a: a!, b: b! }
  }

  it("the stream's hello names the shared request log's next id on a replica that never read it", async () => {
    const { b } = await threeLogged('follow_hello')
    const stream = await liveStream(b.url)
    try {
      expect((await stream.event('hello')).next_request_id).toBe(4)
    } finally {
      stream.close()
    }
  })

  it("the stream's first batch on a replica that never read the request log carries only new entries", async () => {
    const { a, b } = await threeLogged('follow_first_batch')
    const stream = await liveStream(b.url)
    try {
      await stream.event('hello')
      await init(a.url, '60123456014')
      const batch = await stream.event('requests')
      expect(batch.requests.map((e: { id: number; msisdn: string }) => [e.id, e.msisdn])).toEqual([[4, '60123456014']])
      expect(batch.skipped).toBe(0)
    } finally {
      stream.close()
    }
  })

  it('dcb logs -f across a restart of the replica it follows: no "new request log", every entry printed once', async () => {
    const url = await pg.createDatabase('follow_restart')
    let [a, b] = await replicas.start(url, 2)
    for (const m of ['60123456011', '60123456012', '60123456013']) await init(a!.url, m)
    await logged(url, 3)
    const child = spawn(process.execPath, [BIN, 'logs', '-f', '--base-url', b!.url], {
      env: { ...process.env, DCB_BASE_URL: undefined, DCB_SESSION: undefined, NO_COLOR: '1', FORCE_COLOR: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    followers.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (d) => (stdout += d))
    child.stderr!.on('data', (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const shows = (text: string | RegExp, on: 'stdout' | 'stderr' = 'stdout') =>
      outputShows(child, () => (on === 'stdout' ? stdout : stderr), text).catch((e: Error) => {
        throw new Error(`${e.message}\nstdout: ${stdout}\nstderr: ${stderr}`)
      })
    // The request log so far, then an entry made after it started.
    await shows('60123456013')
    await init(a!.url, '60123456014')
    await shows('60123456014')
    // B restarts on its port; the follower waits for it and reconnects.
    const port = new URL(b!.url).port
    await b!.stop()
    await shows(/lost the stream from /, 'stderr')
    b = await replicas.serve(['--store', url, '--port', port])
    await shows(/reconnected to /, 'stderr')
    await init(a!.url, '60123456015')
    await shows('60123456015')
    expect(stderr).not.toMatch(/new request log/)
    for (const m of ['60123456011', '60123456012', '60123456013', '60123456014', '60123456015'])
      expect(
        stdout.split('\n').filter((l) => l.includes(m)),
        m,
      ).toHaveLength(1)
    child.kill('SIGINT')
    expect(await exited).toBe(0)
  }, 60_000)
})
