/**
 * Waiting on what the code does instead of on the wall clock. A test asserts the delay the sandbox
 * scheduled and what it does before and after that delay passes, never how long a call took.
 */
import type { ChildProcess } from 'node:child_process'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { resolve, sep } from 'node:path'
import { vi } from 'vitest'

const SRC = resolve(import.meta.dirname, '..', 'src') + sep

export interface FakeTimers {
  /** The delay (ms) of the next timer the sandbox's own code schedules (src/, not fetch's). */
  next(): Promise<number>
  /** Lets `ms` of fake time pass, running the timers that fall due. */
  advance(ms: number): Promise<void>
}

/**
 * Runs `body` with setTimeout and clearTimeout faked for the in-process sandbox: a delayed answer
 * (5NN endings, delay rules), an OTP long poll or a live-stream batch waits until the test lets its
 * time pass. Sockets, Node's own timeouts and Date keep running; fetch's timers are faked too, so
 * advance only by the delays under test.
 */
export async function withFakeTimers<T>(body: (t: FakeTimers) => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  const fake = globalThis.setTimeout
  const delays: number[] = []
  const waiting: ((ms: number) => void)[] = []
  let taken = 0
  globalThis.setTimeout = function (this: unknown, fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) {
    if (new Error().stack?.includes(SRC)) {
      delays.push(ms ?? 0)
      if (waiting.length) {
        taken++
        waiting.shift()!(ms ?? 0)
      }
    }
    return fake(fn, ms, ...args)
  } as typeof setTimeout
  const t: FakeTimers = {
    next: () => (taken < delays.length ? Promise.resolve(delays[taken++]!) : new Promise((r) => waiting.push(r))),
    advance: async (ms) => void (await vi.advanceTimersByTimeAsync(ms)),
  }
  try {
    return await body(t)
  } finally {
    globalThis.setTimeout = fake
    vi.useRealTimers()
  }
}

/**
 * The server's side of the next request to a path: resolves with its response once the server
 * received it. Listeners added to it run before the sandbox's own (added later, while it handles the
 * request); a promise resolved from one settles after all of them ran.
 */
export function nextRequest(server: Server, path: string | RegExp): Promise<{ req: IncomingMessage; res: ServerResponse }> {
  return new Promise((resolve) => {
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const url = req.url ?? ''
      if (typeof path === 'string' ? url.split('?')[0] !== path : !path.test(url)) return
      server.off('request', onRequest)
      resolve({ req, res })
    }
    server.on('request', onRequest)
  })
}

/** Resolves once the server ended its answer to `res`, or its client went away: after the sandbox's own 'close' listeners ran. */
export const closed = (res: ServerResponse) => new Promise<void>((resolve) => (res.closed ? resolve() : res.once('close', () => resolve())))

/**
 * Resolves once the server has sent the first bytes (the `hello`) of the next live stream
 * (`GET /_sandbox/events`): the stream's client is registered and sees every change after this.
 */
export async function nextLiveStream(server: Server): Promise<void> {
  const { res } = await nextRequest(server, '/_sandbox/events')
  if (res.headersSent) return
  await new Promise<void>((resolve) => {
    const write = res.write
    res.write = function (this: ServerResponse, ...args: unknown[]) {
      res.write = write
      const written = (write as (...a: unknown[]) => boolean).apply(this, args)
      resolve()
      return written
    } as typeof res.write
  })
}

/**
 * Resolves once `output()` (what a child process wrote so far) has `times` lines showing `text`,
 * looking again at each chunk the child writes; rejects, with the output, when the child's
 * output ends first. No deadline of its own: a line that never comes is the test's timeout.
 */
export function outputShows(child: ChildProcess, output: () => string, text: string | RegExp, times = 1): Promise<void> {
  const seen = () =>
    output()
      .split('\n')
      .filter((l) => (typeof text === 'string' ? l.includes(text) : text.test(l))).length >= times
  return new Promise((resolve, reject) => {
    let closed = false
    const check = () => {
      if (seen()) finish()
      else if (closed) finish(new Error(`ended before showing ${text}:\n${output()}`))
    }
    const onClose = () => {
      closed = true
      check()
    }
    const finish = (err?: Error) => {
      child.stdout?.off('data', check)
      child.stderr?.off('data', check)
      child.off('close', onClose)
      if (err) reject(err)
      else resolve()
    }
    // Added after the listeners that collect the output, so each chunk is in `output()` when looked at.
    child.stdout?.on('data', check)
    child.stderr?.on('data', check)
    child.on('close', onClose)
    closed = child.exitCode !== null && !child.stdout?.readable && !child.stderr?.readable
    check()
  })
}
