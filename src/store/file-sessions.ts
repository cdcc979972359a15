/**
 * The sessions of a data file, as a host keeps them: the default session in the data file
 * (`file.ts`: its snapshot and write-ahead log) and the named ones beside it, in
 * `DATAFILE.sessions/` (`session-journal.ts`: one write-ahead log for all of them and a snapshot
 * per session).
 */
import { SandboxError } from '../core/errors.js'
import { State } from '../core/state.js'
import { FileStore, type FileStoreOptions } from './file.js'
import { SessionJournal } from './session-journal.js'
import { admitHere, type Sessions } from './types.js'

/** Folder of the named sessions beside a data file: `sandbox.json` -> `sandbox.json.sessions/`. */
export function sessionsFolderOf(dataFile: string): string {
  return `${dataFile}.sessions`
}

export function fileSessions(dataFile: string, opts: FileStoreOptions = {}): Sessions {
  const store = new FileStore(dataFile, opts)
  const state = new State()
  // Beside the file the data path names (through a link, the file it points to).
  const journal = new SessionJournal(sessionsFolderOf(store.path), opts)
  let loaded = false
  /** The named sessions as the start read them back, once the folder is ready for writes (every one is opened then). */
  let named: Promise<string[]> | undefined
  const ready = () => (named ??= journal.open())
  return {
    kind: 'file',
    shared: false,
    async load() {
      await store.load(state)
      loaded = true
      try {
        await journal.load()
      } catch (e) {
        // Damage in the sessions' files refuses the start: the data file is given back as found.
        await store.abandon()
        throw e
      }
      return [...store.recovered.notes, ...journal.recovered.notes]
    },
    default() {
      if (!loaded) throw new Error('the data file is read by load() first')
      return { store, state }
    },
    async activate() {
      // The named sessions' first: a refusal there leaves the default data file as it was too.
      await journal.activate()
      await store.activate()
    },
    async abandon() {
      await Promise.allSettled([journal.abandon(), store.abandon()])
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
      const made = await journal.store(name)
      return { store: made, state: made.state }
    },
    // Every stored session is open in the host: one that is not is not stored.
    drop: async (name, here = false) => {
      if (!here) return false
      await journal.drop(name)
      return true
    },
    discard: (name) => journal.drop(name).then(() => true),
    countRequests: async (here) => here,
    failure: () => store.failure() ?? journal.failure(),
    async close() {
      if (named) await named.catch(() => {})
      await journal.close()
    },
  }
}
