import type { IncomingMessage } from 'node:http'
import { SandboxError } from '../core/errors.js'
import { inProcessBody } from './inprocess.js'
import { encodingReason } from './reason.js'

export const BODY_LIMIT = 64 * 1024

export type BodyResult = { ok: true; text: string } | { ok: false; reason: 'too_large' | 'aborted' } | { ok: false; reason: 'encoded'; encoding: string }

/**
 * Reads a request body (not compressed) up to `limit` bytes and calls `done` (synchronously from the stream's end
 * event, so a handler can answer in the same tick; at once for an in-process request). A declared or actual size over the limit stops
 * the read at once (the caller answers 413 and closes the connection): nothing more is buffered.
 */
export function readBodyThen(req: IncomingMessage, done: (r: BodyResult) => void, limit = BODY_LIMIT): void {
  // A compressed body (gzip, …) is not read as text: it would be refused as JSON that does not parse,
  // pointing at a byte of the compressed data. The caller says what was sent instead.
  const encoding = req.headers['content-encoding']
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return done({ ok: false, reason: 'encoded', encoding })
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) return done({ ok: false, reason: 'too_large' })
  // In-process (sandbox.fetch, msw): the body is in memory already, with the same limit.
  const inMemory = inProcessBody(req)
  if (inMemory) return done(inMemory.bytes > limit ? { ok: false, reason: 'too_large' } : { ok: true, text: inMemory.text })
  const chunks: Buffer[] = []
  let size = 0
  let finished = false
  const finish = (r: BodyResult, ended = false) => {
    if (finished) return
    finished = true
    // After 'end' no data comes and the listeners go with the request: taking them off costs per call.
    if (!ended) {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
    }
    done(r)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > limit) {
      req.pause()
      return finish({ ok: false, reason: 'too_large' })
    }
    chunks.push(chunk)
  }
  const onEnd = () => finish({ ok: true, text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8') }, true)
  const onError = () => finish({ ok: false, reason: 'aborted' })
  req.on('data', onData)
  req.on('end', onEnd)
  // A client gone mid-body: 'error' (ECONNRESET, "aborted") on every supported Node; 'aborted' is deprecated.
  req.on('error', onError)
}

export function readBody(req: IncomingMessage, limit = BODY_LIMIT): Promise<BodyResult> {
  return new Promise((resolve) => readBodyThen(req, resolve, limit))
}

/**
 * The body of a control call or the console's sign-in as JSON (parsed once): {} when empty (a POST
 * that takes nothing sends nothing). One that cannot be read throws the SandboxError saying why:
 * PAYLOAD_TOO_LARGE (the rest is not read: the connection closes after the answer), BAD_REQUEST for
 * a compressed or broken-off body and for text that is not JSON (`expected`, e.g.
 * `{"token": "<admin token>"}`, says what to send instead).
 */
export async function readJsonBody(req: IncomingMessage, expected?: string): Promise<unknown> {
  const r = await readBody(req)
  if (!r.ok) {
    if (r.reason === 'too_large') throw new SandboxError('PAYLOAD_TOO_LARGE', `the body is larger than ${BODY_LIMIT / 1024} KiB`)
    throw new SandboxError('BAD_REQUEST', r.reason === 'encoded' ? encodingReason(r.encoding) : 'the body could not be read')
  }
  if (!r.text.trim()) return {}
  const data = parseJson(r.text)
  if (data === undefined) throw new SandboxError('BAD_REQUEST', `the body is not valid JSON${expected ? `; send ${expected}` : ''}`)
  return data
}

/** Parses JSON; undefined when the text is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** `application/json`, with or without parameters such as `charset=utf-8`. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false
  // What nearly every client sends: no parsing.
  if (header === 'application/json') return true
  const type = header.split(';')[0]!.trim().toLowerCase()
  return type === 'application/json'
}
