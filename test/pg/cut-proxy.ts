/**
 * A TCP proxy in front of the test PostgreSQL that cuts a connection at a query of our choosing:
 * before the server gets it (nothing of it is done), or after the server answered it (done, but the
 * reply never reaches dcb: a COMMIT whose reply is lost). It can also refuse new connections (the
 * database out of reach for a while).
 *
 *   const proxy = await cutProxy(pg.port)
 *   const cut = proxy.cutAt((query) => query.includes('INSERT INTO dcb_changes'), 'after-reply')
 *   ... a call through dcb ...
 *   await cut   // resolves once the connection was cut
 *
 * Or hold what one connection sends from a query on, until released (a slow link, one replica's
 * writes late):
 *
 *   const hold = proxy.holdAt((query) => query.includes('INSERT INTO dcb_requests'))
 *   await hold.held   // that query reached the proxy and waits there
 *   hold.release()    // it goes on to the server, with what the connection sent after it
 *
 * Or go silent, as a network cut does (no reset, no close: what is sent is lost): one way
 * (`to-server`: what dcb sends is lost; `to-client`: the server's replies are) or `both`, from now or
 * from a query on. New connections then get nowhere (accepted, never passed on). `heal()` ends the
 * cut: the connections it cut are closed (as TCP gives up on them), new ones work.
 *
 *   proxy.silenceAt((query) => query.includes('INSERT INTO dcb_changes'), 'both')
 */
import { createServer, connect, type Socket } from 'node:net'

/** The end of a PostgreSQL reply: ReadyForQuery ('Z', length 5). */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5])

export interface CutProxy {
  readonly port: number
  /** The URL of database `name` through the proxy. */
  url(name: string): string
  /**
   * Cuts the next connection that sends a query matching `match` (the chunk that holds its start):
   * `before` the server gets it, or `after-reply` once the server has answered it (the reply dropped).
   * With `everything`, every other connection goes with it and new ones are refused (`refuseNew`).
   * Resolves once cut.
   */
  cutAt(match: (chunk: string) => boolean, when: 'before' | 'after-reply', opts?: { everything?: boolean }): Promise<void>
  /** Holds the query matching `match` and what its connection sends after it, until `release()`. */
  holdAt(match: (chunk: string) => boolean): { held: Promise<void>; release(): void }
  /** Whether new connections are refused (the ones open stay). */
  refuseNew: boolean
  /** Goes silent `way` now (every connection, and new ones get nowhere). */
  silence(way: Way): void
  /**
   * Goes silent `way` once a connection sends a query matching `match` (the chunk that holds its
   * start: lost with `to-server` or `both`; with `to-client` the server gets it, its reply is lost).
   * Resolves once silent.
   */
  silenceAt(match: (chunk: string) => boolean, way: Way): Promise<void>
  /** Ends the cut: the connections it cut are closed, new ones pass again. */
  heal(): void
  close(): Promise<void>
}

export type Way = 'to-server' | 'to-client' | 'both'

export async function cutProxy(pgPort: number, user = 'postgres', password = 'password'): Promise<CutProxy> {
  let armed: { match: (chunk: string) => boolean; when: 'before' | 'after-reply'; everything: boolean; done: () => void } | null = null
  let holding: { match: (chunk: string) => boolean; held: () => void; released: Promise<void> } | null = null
  let silentAt: { match: (chunk: string) => boolean; way: Way; done: () => void } | null = null
  /** The cut now: which ways are silent (null: none). */
  let silent: { toServer: boolean; toClient: boolean } | null = null
  /** The connections the cut caught, closed at `heal()`. */
  const cutOff = new Set<Socket>()
  const goSilent = (way: Way) => {
    silent = { toServer: way !== 'to-client', toClient: way !== 'to-server' }
    for (const s of sockets) cutOff.add(s)
  }
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    if (proxy.refuseNew) return void client.destroy()
    if (silent) {
      // A cut network: the connection never reaches the server, nothing comes back.
      sockets.add(client)
      cutOff.add(client)
      client.on('close', () => sockets.delete(client))
      client.on('error', () => {})
      return
    }
    const upstream = connect(pgPort, '127.0.0.1')
    /** The cut of this connection (it stays cut after a heal, until closed). */
    const way = () => (cutOff.has(client) ? silent : null)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => {})
    }
    const cut = (hit: NonNullable<typeof armed>) => {
      client.destroy()
      upstream.destroy()
      if (hit.everything) {
        proxy.refuseNew = true
        for (const s of sockets) s.destroy()
      }
      hit.done()
    }
    let dropReplies: NonNullable<typeof armed> | null = null
    /** What this connection sent since a held query, sent on at its release. */
    let held: Buffer[] | null = null
    client.on('data', (chunk) => {
      if (way()?.toServer) return
      if (held) return void held.push(chunk)
      if (silentAt && silentAt.match(chunk.toString('latin1'))) {
        const hit = silentAt
        silentAt = null
        goSilent(hit.way)
        hit.done()
        if (silent!.toServer) return
      }
      if (holding && holding.match(chunk.toString('latin1'))) {
        const hold = holding
        holding = null
        const queue = (held = [chunk])
        hold.held()
        void hold.released.then(() => {
          held = null
          for (const c of queue) upstream.write(c)
        })
        return
      }
      const hit = armed && armed.match(chunk.toString('latin1')) ? armed : null
      if (hit) {
        armed = null
        if (hit.when === 'before') return cut(hit)
        dropReplies = hit
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      if (way()?.toClient) return
      if (!dropReplies) return void client.write(chunk)
      // The server answered the query to its end: the reply is lost with the connection.
      if (chunk.includes(READY_FOR_QUERY)) cut(dropReplies)
    })
    // A close is lost across a cut too: the other end never hears of it.
    client.on('close', () => way()?.toServer || upstream.destroy())
    upstream.on('close', () => way()?.toClient || client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const proxy: CutProxy = {
    port,
    url: (name) => `postgres://${user}:${password}@127.0.0.1:${port}/${name}`,
    cutAt: (match, when, opts = {}) => new Promise<void>((resolve) => (armed = { match, when, everything: opts.everything ?? false, done: resolve })),
    holdAt: (match) => {
      let release!: () => void
      const released = new Promise<void>((resolve) => (release = resolve))
      const held = new Promise<void>((resolve) => (holding = { match, held: resolve, released }))
      return { held, release }
    },
    refuseNew: false,
    silence: goSilent,
    silenceAt: (match, way) => new Promise<void>((resolve) => (silentAt = { match, way, done: resolve })),
    heal: () => {
      silent = null
      for (const s of cutOff) s.destroy()
      cutOff.clear()
    },
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  return proxy
}
