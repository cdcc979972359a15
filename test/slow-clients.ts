/**
 * Clients of a server that stop reading, on raw sockets, for the tests of the bounds on what the
 * server holds for them (test/cli/read-bounds.test.ts on one server, test/pg on replicas): a control
 * read whose answer stays unread, a live stream that never reads, and a live stream that reads all.
 */
import { connect, type Socket } from 'node:net'

/** A raw socket to the server at `base`, sending `GET path`. */
function open(base: string, path: string): Socket {
  const u = new URL(base)
  const socket = connect(Number(u.port), u.hostname)
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
  return socket
}

/**
 * A GET that answers the status once the headers are in, and stops reading there (the answer stays
 * in the server's hands); `rest` reads the body to its end.
 */
export function heldRead(base: string, path: string): Promise<{ status: number; rest: () => Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = open(base, path)
    let got: Buffer = Buffer.alloc(0)
    const onData = (d: Buffer) => {
      got = Buffer.concat([got, d])
      const end = got.indexOf('\r\n\r\n')
      if (end < 0) return
      socket.off('data', onData)
      socket.pause()
      const head = got.subarray(0, end).toString()
      const length = Number(/content-length: (\d+)/i.exec(head)![1])
      const chunks: Buffer[] = [got.subarray(end + 4)]
      let have = chunks[0]!.length
      resolve({
        status: Number(head.split(' ')[1]),
        rest: () =>
          new Promise((done) => {
            const finish = () => (socket.destroy(), done(Buffer.concat(chunks).toString()))
            if (have >= length) return finish()
            socket.on('data', (c: Buffer) => {
              chunks.push(c)
              have += c.length
              if (have >= length) finish()
            })
            socket.resume()
          }),
      })
    }
    socket.on('data', onData)
    socket.on('error', reject)
  })
}

/**
 * A live stream that reads its first frame (`hello`), then nothing. `drain(enough)` reads again,
 * to the stream's end or until `enough` bytes in all came (a stream the server kept goes on): it
 * answers the bytes read and whether the server had ended the stream. `resume()` reads on to the end,
 * keeping nothing; `ended` resolves once the socket closed.
 */
export function stalledStream(
  base: string,
): Promise<{ drain: (enough: number) => Promise<{ bytes: number; ended: boolean }>; resume: () => void; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = open(base, '/_sandbox/events')
    const ended = new Promise<void>((done) => socket.once('close', () => done()))
    let bytes = 0
    let got = ''
    const onData = (d: Buffer) => {
      bytes += d.length
      got += d
      if (!got.includes('event: hello')) return
      socket.off('data', onData)
      socket.pause()
      resolve({
        ended,
        resume: () => void socket.on('data', () => {}).resume(),
        drain: (enough) =>
          new Promise((done) => {
            socket.once('close', () => done({ bytes, ended: true }))
            socket.on('data', (c: Buffer) => {
              bytes += c.length
              if (bytes >= enough) {
                socket.destroy()
                done({ bytes, ended: false })
              }
            })
            socket.resume()
          }),
      })
    }
    socket.on('data', onData)
    socket.on('error', reject)
  })
}

/**
 * A live stream that reads everything: `until(n)` waits until its `requests` frames have counted `n`
 * new request-log entries (sent or skipped), that is until the batch holding the `n`th went out;
 * `bytes` is what it read so far.
 */
export function witness(base: string): Promise<{ until: (n: number) => Promise<void>; bytes: () => number; close: () => void }> {
  return new Promise((resolve, reject) => {
    const socket = open(base, '/_sandbox/events')
    let text = ''
    let bytes = 0
    let counted = 0
    let waiting: { n: number; done: () => void } | null = null
    socket.setEncoding('utf8')
    socket.on('data', (d: string) => {
      bytes += Buffer.byteLength(d)
      text += d
      let end: number
      while ((end = text.indexOf('\n\n')) >= 0) {
        const frame = text.slice(0, end)
        text = text.slice(end + 2)
        if (frame.includes('event: hello')) resolve({ until, bytes: () => bytes, close: () => socket.destroy() })
        const data = /^event: requests\ndata: (.*)$/m.exec(frame)?.[1]
        if (data) {
          const { requests, skipped } = JSON.parse(data) as { requests: unknown[]; skipped: number }
          counted += requests.length + skipped
        }
        if (waiting && counted >= waiting.n) {
          const { done } = waiting
          waiting = null
          done()
        }
      }
    })
    socket.on('error', reject)
    const until = (n: number) => new Promise<void>((done) => (counted >= n ? done() : (waiting = { n, done })))
  })
}

/** Fills a session's request log: `n` merchant calls of about `kib` KiB each (refused by the schema, logged with their bodies). */
export async function fill(base: string, n: number, kib = 30): Promise<void> {
  const body = JSON.stringify({ msisdn: '6'.repeat(kib * 1000), service_code: 'STREAMPLUS', country_code: 'my' })
  const one = () =>
    fetch(`${base}/subscriptions/init`, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': 'sandbox-demo-key' }, body }).then((r) =>
      r.arrayBuffer(),
    )
  for (let i = 0; i < n; i += 25) await Promise.all(Array.from({ length: Math.min(25, n - i) }, one))
}
