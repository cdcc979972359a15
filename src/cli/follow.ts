/**
 * `dcb logs --follow`: follows the live stream (`GET /_sandbox/events`) and prints each new request log
 * entry, oldest first. A batch that left entries out (`skipped`), a reconnection and the start are
 * filled from `GET /_sandbox/requests?since=`, so no entry is lost or printed twice. A server that
 * goes away is waited for (a progress line on stderr); Ctrl-C ends it with exit 0.
 */
import { SandboxError, type DcbClient } from '../client/index.js'
import { CliError, EXIT } from './errors.js'

type Entry = Record<string, any> & { id: number }

/** How long to wait between attempts to reach a server that went away, and between progress lines. */
const RETRY_MS = 1000
const PROGRESS_EVERY_MS = 5000

export async function follow(c: DcbClient, opts: { msisdn?: string; last: number; print: (e: Entry) => void }): Promise<void> {
  let last = opts.last
  const about = (e: Entry) => opts.msisdn === undefined || e.msisdn === opts.msisdn
  const show = (entries: Entry[]) => {
    for (const e of [...entries].sort((a, b) => a.id - b.id)) if (e.id > last && about(e)) opts.print(e)
  }
  /** Prints what the request log holds after `last` up to `upTo` (the stream said there is more than it sent). */
  const fetchSkipped = async (upTo: number) => {
    if (upTo <= last) return
    // The request log answers the newest `limit` entries after `last`: entries added since the stream said
    // `upTo` take places in that answer, so ask again with room for them until none is left out.
    let limit = upTo - last
    let entries: Entry[]
    for (;;) {
      const r = await c.requests({ since: last, limit, ...(opts.msisdn ? { msisdn: opts.msisdn } : {}) })
      entries = r.requests as Entry[]
      const newer = entries.filter((e) => e.id > upTo).length
      if (entries.length < limit || !newer) break
      limit += newer
    }
    show(entries.filter((e) => e.id <= upTo))
    last = upTo
  }

  let stopped = false
  let stream: ReturnType<DcbClient['events']> | undefined
  let wake: (() => void) | undefined
  let retry: NodeJS.Timeout | undefined
  const stop = () => {
    stopped = true
    stream?.close()
    clearTimeout(retry)
    wake?.()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)

  let lostAt = 0
  let lastNote = 0
  const note = (text: string) => process.stderr.write(`dcb: ${text}\n`)
  try {
    while (!stopped) {
      // Events are handled one after another: a gap is filled before anything newer is printed.
      let queue = Promise.resolve()
      const handle = async (event: string, data: any) => {
        if (event === 'hello') {
          if (lostAt) note(`reconnected to ${c.baseUrl} after ${Math.round((Date.now() - lostAt) / 1000)} s`)
          lostAt = 0
          const newest = Number(data.next_request_id) - 1
          // A request log that starts below what was printed is a new one (the server restarted): follow it from its start.
          if (newest < last) {
            note(`${c.baseUrl} started a new request log; following it from its first entry`)
            last = 0
          }
          await fetchSkipped(newest)
        } else if (event === 'requests') {
          const entries = data.requests as Entry[]
          const newest = entries.reduce((n, e) => Math.max(n, e.id), 0)
          if (data.skipped > 0) await fetchSkipped(newest)
          else {
            show(entries)
            last = Math.max(last, newest)
          }
        }
      }
      stream = c.events((event, data) => {
        queue = queue.then(() => handle(event, data)).catch(() => stream?.close())
      })
      if (stopped) stream.close()
      try {
        await stream.done
        await queue
      } catch (e) {
        if (e instanceof SandboxError) throw new CliError(`${e.code}: ${e.message}`, EXIT.FAIL)
        if (!lostAt) throw new CliError((e as Error).message, EXIT.UNREACHABLE)
      }
      if (stopped) break
      const now = Date.now()
      if (!lostAt) {
        lostAt = lastNote = now
        note(`lost the stream from ${c.baseUrl}; reconnecting (Ctrl-C to stop)…`)
      } else if (now - lastNote >= PROGRESS_EVERY_MS) {
        lastNote = now
        note(`still reconnecting to ${c.baseUrl} (${Math.round((now - lostAt) / 1000)} s)…`)
      }
      await new Promise<void>((resolve) => {
        wake = resolve
        retry = setTimeout(resolve, RETRY_MS)
      })
    }
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}
