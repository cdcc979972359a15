/** How the stores read their files at start-up: only regular files, and a refusal that names the file. */
import { readdirSync, readFileSync, statSync, type Stats } from 'node:fs'
import { StoreError } from './types.js'
import { describeError } from './wal.js'

/** A file read whole at start-up; one that cannot be read (a folder, EIO) refuses the start by name. */
export function readOrRefuse(file: string, what: string): Buffer {
  // A FIFO would hang the start and a device (a link to /dev/zero) would never end: refused unread.
  const found = statSync(file, { throwIfNoEntry: false })
  if (found && !found.isFile() && !found.isDirectory())
    throw new StoreError(`cannot read ${what} ${file} (it is ${fileKind(found)}, not a regular file); nothing was changed: move it away`)
  try {
    return readFileSync(file)
  } catch (e) {
    throw new StoreError(`cannot read ${what} ${file} (${describeError(e)}); nothing was changed: move it away or repair it`)
  }
}

/** What a path that is not a regular file is, in words. */
export function fileKind(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  if (st.isSocket()) return 'a socket'
  return st.isDirectory() ? 'a folder' : 'not a file'
}

/** The names in a store's folder at start-up; a folder that cannot be read (a file in its place) refuses the start by name. */
export function listOrRefuse(dir: string, what: string): string[] {
  try {
    return readdirSync(dir)
  } catch (e) {
    throw new StoreError(`cannot read ${what} ${dir} (${describeError(e)}); nothing was changed: move it away`)
  }
}

/** A file's size (0: none, or it cannot be read). */
export function sizeOf(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}
