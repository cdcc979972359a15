/**
 * A bound on the bytes of control answers in flight: written to their sockets but not yet taken by
 * the clients. A full request log answers tens of MiB; a hundred clients reading it at once, or
 * reading it slowly, would hold a hundred copies until each one is read, and take the process out of
 * memory. Past the bound a read is refused (503 `ANSWERS_BUSY`, naming the bound) until answers
 * in flight are read; a change is always answered (it was made).
 */
import type { ServerResponse } from 'node:http'
import { ENCODED_JSON, hasEncodedJson } from '../core/encoded.js'
import { SandboxError } from '../core/errors.js'
import { sendJson } from './respond.js'

/** The most bytes of control answers in flight at once (one answer larger than this alone still goes). */
export const MAX_ANSWER_BYTES_IN_FLIGHT = 64 * 2 ** 20

let inFlight = 0

/** Bytes of control answers written and not yet taken by their clients (for tests and health). */
export function answerBytesInFlight(): number {
  return inFlight
}

/** The size of the last answer to a read, by its call (`key`): what the same read will likely answer again. */
const lastSize = new Map<string, number>()
const LAST_SIZES = 256

/**
 * Refuses a read at once when answers in flight and what the same read answered last would pass the
 * bound: it is not even built (a full log's answer takes seconds to build).
 */
export function refuseReadIfFull(key: string, limit = MAX_ANSWER_BYTES_IN_FLIGHT): void {
  const expected = lastSize.get(key) ?? 0
  if (inFlight >= limit || (inFlight > 0 && inFlight + expected > limit)) throw busy(expected, limit)
}

function remember(key: string, bytes: number): void {
  lastSize.delete(key)
  lastSize.set(key, bytes)
  if (lastSize.size > LAST_SIZES) lastSize.delete(lastSize.keys().next().value!)
}

const busy = (bytes: number, limit: number) =>
  new SandboxError(
    'ANSWERS_BUSY',
    `answers not yet read by their clients hold ${mib(inFlight)} MiB${bytes ? ` and this one is ${mib(bytes)} MiB` : ''}: past the server's bound of ${mib(limit)} MiB of answers in flight; retry once they are read (or ask for fewer with limit)`,
  )

/**
 * Sends a control answer within the bound. `read`: a read's key (its session, path and query),
 * refused past the bound (throws ANSWERS_BUSY); a change's answer (undefined) always goes, counted.
 */
export function sendBounded(res: ServerResponse, result: unknown, read: string | undefined, limit = MAX_ANSWER_BYTES_IN_FLIGHT): void {
  const parts = hasEncodedJson(result) ? result[ENCODED_JSON]() : [Buffer.from(JSON.stringify(result))]
  let bytes = 0
  for (const p of parts) bytes += p.byteLength
  if (read !== undefined) remember(read, bytes)
  if (read !== undefined && inFlight > 0 && inFlight + bytes > limit) throw busy(bytes, limit)
  inFlight += bytes
  let done = false
  const release = () => {
    if (done) return
    done = true
    inFlight -= bytes
  }
  res.once('finish', release)
  res.once('close', release)
  sendJson(res, 200, { [ENCODED_JSON]: () => parts })
}

const mib = (n: number) => (n / 2 ** 20).toFixed(n < 2 ** 20 ? 2 : 0)
