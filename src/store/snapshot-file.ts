/**
 * A lowdb adapter for the snapshot that streams the JSON out record by record into a temp file,
 * yielding to the event loop between chunks, then fsyncs it, reads it back and renames it into place. Unlike
 * `JSONFile` it never builds the whole file as one string: compaction neither blocks requests for the
 * time of a full JSON.stringify nor doubles the memory of the state.
 */
import { createHash } from 'node:crypto'
import * as zlib from 'node:zlib'
import { readFile, open, rename, unlink } from 'node:fs/promises'
import type { Adapter } from 'lowdb'
import { StoreError } from './types.js'
import { describeError, syncFile, writeAll, type StoreIo } from './wal.js'

/** What a snapshot holds; `collections` values are iterables of [id, record] captured at one moment. */
export interface SnapshotData {
  format: 'dcb-sandbox/1'
  seq: number
  generation: number
  saved_at: string
  /**
   * The write-ahead log whose generations `generation` counts: `sessions`, the one of the sessions
   * folder (the default session's snapshot, the data file, says so); absent, the snapshot's own
   * (`DATAFILE.journal.G`: a default session of an earlier version's layout, or `dcb seed`'s).
   */
  log?: 'sessions'
  collections: Record<string, Record<string, unknown> | Iterable<[string, unknown]>>
}

const CHUNK = 1 << 20

/** A running checksum of the bytes written, to compare with the bytes read back. */
interface Checksum {
  update(bytes: Buffer): void
  value(): string
}

// zlib's crc32 (Node 20.15 and later) costs a fraction of sha1 over a large snapshot; it is there to
// catch bytes the disk did not keep, not an adversary. Older Nodes use sha1.
const crc32 = (zlib as { crc32?: (data: Buffer, value?: number) => number }).crc32
function checksum(): Checksum {
  if (crc32) {
    let crc = 0
    return { update: (bytes) => void (crc = crc32(bytes, crc)), value: () => String(crc) }
  }
  const digest = createHash('sha1')
  return { update: (bytes) => void digest.update(bytes), value: () => digest.digest('hex') }
}

export class StreamingSnapshotFile implements Adapter<SnapshotData | null> {
  constructor(
    private readonly path: string,
    private readonly sync = true,
    private readonly io?: StoreIo,
  ) {}

  async read(): Promise<SnapshotData | null> {
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw e
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (e) {
      // Name the line: "... in JSON at position N" -> line of N.
      const pos = /position (\d+)/.exec((e as Error).message)
      const line = pos ? text.slice(0, Number(pos[1])).split('\n').length : undefined
      throw new SyntaxError(`${line ? `line ${line}: ` : ''}${(e as Error).message}`)
    }
    // null, false, 0 or "": a file is there, and it is no snapshot (taken for none, it was overwritten).
    if (typeof parsed !== 'object' || parsed === null) throw new SyntaxError(`JSON ${JSON.stringify(parsed)}, not an object`)
    return parsed as SnapshotData
  }

  /**
   * Writes the snapshot to a temp file (every write checked), fsyncs it, reads it back whole (its
   * length and digest must be what was written) and only then renames it over the old one. Any
   * failure leaves the old snapshot in place, removes the temp file and throws.
   */
  async write(data: SnapshotData | null): Promise<void> {
    if (!data) return
    const tmp = `${this.path}.tmp`
    const digest = checksum()
    let length = 0
    try {
      const fh = await open(tmp, 'w')
      try {
        let buf = ''
        const flush = async () => {
          if (!buf) return
          const bytes = Buffer.from(buf, 'utf8')
          buf = ''
          digest.update(bytes)
          length += bytes.length
          await writeAll(fh, tmp, bytes, this.io)
        }
        const { collections, ...head } = data
        buf += JSON.stringify(head).slice(0, -1) + ',"collections":{'
        let firstCollection = true
        for (const [name, records] of Object.entries(collections)) {
          buf += `${firstCollection ? '' : ','}${JSON.stringify(name)}:{`
          firstCollection = false
          let first = true
          const entries = Symbol.iterator in records ? (records as Iterable<[string, unknown]>) : Object.entries(records)
          for (const [id, v] of entries) {
            buf += `${first ? '' : ','}${JSON.stringify(id)}:${JSON.stringify(v)}`
            first = false
            if (buf.length >= CHUNK) await flush()
          }
          buf += '}'
        }
        buf += '}}'
        await flush()
        if (this.sync) await syncFile(fh, tmp, this.io, true)
      } finally {
        await fh.close()
      }
      await readBack(tmp, length, digest.value())
      await rename(tmp, this.path)
    } catch (e) {
      await unlink(tmp).catch(() => {})
      throw new StoreError(`cannot write the snapshot ${this.path}: ${describeError(e)}`)
    }
  }
}

/** Reads a written file back in chunks: it must be exactly `length` bytes with this checksum. */
async function readBack(file: string, length: number, sum: string): Promise<void> {
  const digest = checksum()
  let read = 0
  const fh = await open(file, 'r')
  try {
    const chunk = Buffer.allocUnsafe(CHUNK)
    for (;;) {
      const { bytesRead } = await fh.read(chunk, 0, CHUNK, read)
      if (!bytesRead) break
      digest.update(chunk.subarray(0, bytesRead))
      read += bytesRead
    }
  } finally {
    await fh.close()
  }
  if (read !== length || digest.value() !== sum) throw new StoreError(`read back ${read} bytes of ${length}, not what was written`)
}
