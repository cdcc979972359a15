/**
 * The sessions of a data file, as a host keeps them: every session, the default one too, in one
 * write-ahead log in `DATAFILE.sessions/` (`session-wal.ts`), each line naming its session, and
 * a snapshot per session (the default session's: the data file itself; the others': `NAME.json`).
 *
 * A data file of an earlier layout (its default session in a log of its own, `DATAFILE.journal.G`,
 * as `dcb seed` still writes it) is read by `FileStore` and moved into the sessions' log at the
 * start: its snapshot is written in this layout, then its own logs go.
 */
import { SandboxError } from '../core/errors.js'
import { State } from '../core/state.js'
import { FileStore, type FileStoreOptions } from './file.js'
import { SessionWal, type SessionStore } from './session-wal.js'
import { admitHere, WRITTEN_HERE, type Sessions } from './types.js'
import { existsSync, readFileSync } from 'node:fs'
import { generations, logPath } from './session-folder.js'
import { linesEnd } from './wal.js'

/** Folder of the sessions' write-ahead log and snapshots beside a data file: `sandbox.json` -> `sandbox.json.sessions/`. */
export function sessionsFolderOf(dataFile: string): string {
  return `${dataFile}.sessions`
}

/**
 * The sessions' write-ahead log file that holds lines no snapshot has yet (a server on the data file
 * ended without a clean stop), if any. `dcb seed`, which writes the earlier layout, refuses such a
 * data file: it would not see those lines of the default session.
 */
export function unfoldedLog(dataFile: string): string | undefined {
  const folder = sessionsFolderOf(dataFile)
  if (!existsSync(folder)) return undefined
  for (const gen of generations(folder)) {
    const file = logPath(folder, gen)
    if (linesEnd(readFileSync(file)) > 0) return file
  }
}

export function fileSessions(dataFile: string, opts: FileStoreOptions = {}): Sessions {
  // Takes the lock, makes the folder and reads the data file (and an earlier layout's logs).
  const file = new FileStore(dataFile, opts)
  const state = new State()
  const log = new SessionWal(sessionsFolderOf(file.path), { ...opts, dataFile: file.path })
  let first: SessionStore | undefined
  /** The data file is of the earlier layout: moved into the sessions' log once the server is bound. */
  let moving = false
  /** The named sessions as the start read them back, once the folder is ready for writes (every one is opened then). */
  let named: Promise<string[]> | undefined
  const ready = () => (named ??= log.open())
  return {
    kind: 'file',
    ...WRITTEN_HERE,
    async load() {
      await file.load(state)
      const { seq, saved, generation } = file.loaded()
      moving = file.found === 'own'
      // Moving, the snapshot is not one of this layout yet (none on disk for the sessions' log).
      log.seedDefault(state, seq, moving ? undefined : (saved ?? 0), file.found === 'sessions' ? generation : 0)
      try {
        await log.load()
      } catch (e) {
        // Damage in the sessions' files refuses the start: the data file is given back as found.
        await file.abandon()
        throw e
      }
      log.recovered.replayed += file.recovered.replayed
      log.recovered.tornBytes += file.recovered.tornBytes
      first = log.storeOf('default')
      const notes = [...file.recovered.notes, ...log.recovered.notes]
      if (moving)
        notes.push(
          `${file.path} is of an earlier layout: its default session moves into the write-ahead log of every session (${sessionsFolderOf(file.path)}); an earlier dcb cannot read it after this start`,
        )
      return notes
    },
    default() {
      if (!first) throw new Error('the data file is read by load() first')
      return { store: first, state }
    },
    async activate() {
      await log.activate()
      // Before anything is written: a copy of damage that cannot be made refuses the start, files as found.
      file.cutTails()
      // The earlier layout's logs go once their default session is in a snapshot of this one.
      if (moving) await log.compact()
      file.removeLogs()
      moving = false
    },
    async abandon() {
      await Promise.allSettled([log.abandon(), file.abandon()])
    },
    names: ready,
    async admit(name, max, open) {
      // Sessions are files named after them: on macOS and Windows (case-insensitive file systems)
      // `Alice` and `alice` would share one, and one session's data would overwrite the other's. A new
      // name that differs from a session's only in case is refused there, on every system.
      const lower = name.toLowerCase()
      for (const other of open)
        if (other.toLowerCase() === lower)
          return {
            made: false,
            refusal: new SandboxError(
              'BAD_REQUEST',
              `a session "${other}" exists: names that differ only in case share a data file (on macOS and Windows); use "${other}" or another name`,
            ),
          }
      return admitHere(max, open)
    },
    async open(name) {
      await ready()
      const made = await log.store(name)
      return { store: made, state: made.state }
    },
    // Every stored session is open in the host: one that is not is not stored.
    drop: async (name, here = false) => {
      if (!here) return false
      await log.drop(name)
      return true
    },
    discard: (name) => log.drop(name).then(() => true),
    countRequests: async (here) => here,
    failure: () => log.failure(),
    async close() {
      try {
        if (named) await named.catch(() => {})
        await log.close()
      } finally {
        file.release()
      }
    },
  }
}
