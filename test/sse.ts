/** Reading a server-sent event stream in tests (the console's `/_sandbox/events`), waiting on what it brings. */

/** An open event stream: the events and comments read so far, and a wait for one that matches. */
export async function openStream(url: string, headers: Record<string, string> = {}) {
  const ctrl = new AbortController()
  const res = await fetch(url, { headers, signal: ctrl.signal })
  const events: { event: string; data: any }[] = []
  const comments: string[] = []
  /** Woken by every block read and by the end of the stream. */
  const waiters: (() => void)[] = []
  let done = false
  const wake = () => {
    for (const w of waiters.splice(0)) w()
  }
  /** How the stream ended: `end` when the server ended it, `cut` when the connection broke or the client aborted. */
  const ended = new Promise<'end' | 'cut'>((resolve) => {
    if (!res.ok) return resolve('end')
    void (async () => {
      const decoder = new TextDecoder()
      let buf = ''
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true })
          let end
          while ((end = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, end)
            buf = buf.slice(end + 2)
            let event = 'message'
            let data = ''
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line)
              else if (line.startsWith('event: ')) event = line.slice(7)
              else if (line.startsWith('data: ')) data += line.slice(6)
            }
            if (data) events.push({ event, data: JSON.parse(data) })
            wake()
          }
        }
        resolve('end')
      } catch {
        resolve('cut')
      } finally {
        done = true
        wake()
      }
    })()
  })
  /** Waits until `find` answers something, looking again at each block the stream brings. */
  const next = async <T>(find: () => T | undefined): Promise<T> => {
    for (;;) {
      const got = find()
      if (got !== undefined) return got
      if (done) throw new Error(`the stream ended before such an event; have ${JSON.stringify(events.map((e) => e.event))}`)
      await new Promise<void>((r) => waiters.push(r))
    }
  }
  const event = (name: string, match: (data: any) => boolean = () => true) => next(() => events.find((e) => e.event === name && match(e.data))?.data)
  return { res, events, comments, event, next, ended, close: () => ctrl.abort() }
}
