/**
 * A lowdb adapter for the snapshot that streams the JSON out record by record into a temp file,
 * yielding to the event loop between chunks, then fsyncs and renames it into place. Unlike
 * `JSONFile` it never builds the whole file as one string: compaction neither blocks requests for the
 * time of a full JSON.stringify nor doubles the memory of the state.
 */
import { readFile, open, rename } from 'node:fs/promises'
import type { Adapter } from 'lowdb'

/** What a snapshot holds; `collections` values are iterables of [id, record] captured at one moment. */
export interface SnapshotData {
  format: 'dcb-sandbox/1'
  seq: number
  generation: number
  saved_at: string
  collections: Record<string, Record<string, unknown> | Iterable<[string, unknown]>>
}

const CHUNK = 1 << 20

export class StreamingSnapshotFile implements Adapter<SnapshotData | null> {
  constructor(
    private readonly path: string,
    private readonly sync = true,
  ) {}

  async read(): Promise<SnapshotData | null> {
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw e
    }
    try {
      return JSON.parse(text) as SnapshotData
    } catch (e) {
      // Name the line: "... in JSON at position N" -> line of N.
      const pos = /position (\d+)/.exec((e as Error).message)
      const line = pos ? text.slice(0, Number(pos[1])).split('\n').length : undefined
      throw new SyntaxError(`${line ? `line ${line}: ` : ''}${(e as Error).message}`)
    }
  }

  async write(data: SnapshotData | null): Promise<void> {
    if (!data) return
    const tmp = `${this.path}.tmp`
    const fh = await open(tmp, 'w')
    try {
      let buf = ''
      const flush = async () => {
        if (!buf) return
        await fh.write(buf)
        buf = ''
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
      if (this.sync) await fh.sync()
    } finally {
      await fh.close()
    }
    await rename(tmp, this.path)
  }
}
