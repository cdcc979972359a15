import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs'

/**
 * The files dcb reads from a path a user gave, and how big each may be. A file past its bound is
 * refused before it is read: a link to /dev/zero, or a log given by mistake, would otherwise fill
 * the memory. A recording (`dcb logs --json --all`) holds request bodies, so it may be bigger.
 */
export const USER_FILES = {
  fixture: { what: 'a fixture file', maxBytes: 16 * 2 ** 20 },
  run: { what: 'a run file', maxBytes: 16 * 2 ** 20 },
  rules: { what: 'a rules file', maxBytes: 16 * 2 ** 20 },
  policy: { what: 'a policy file', maxBytes: 16 * 2 ** 20 },
  recording: { what: 'a recording', maxBytes: 256 * 2 ** 20 },
} as const

export type UserFileKind = keyof typeof USER_FILES

/**
 * Why a user's file was not read, as the words after its name (`no such file`, `is a FIFO, not a
 * regular file`); `code` is the system's error code, when there was one. It never holds the file's
 * content.
 */
export class UserFileError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

const MIB = 2 ** 20
/** A size in MiB, rounded up to a tenth: a file one byte over 16 MiB reads 16.1 MiB, not 16. */
const size = (bytes: number) => (bytes >= MIB ? `${Math.ceil((bytes / MIB) * 10) / 10} MiB` : `${bytes} bytes`)

/** What a path that is not a regular file is, in words. */
function notRegular(st: Stats): string | undefined {
  if (st.isFile()) return undefined
  const kind = st.isDirectory()
    ? 'a directory'
    : st.isFIFO()
      ? 'a FIFO (a named pipe)'
      : st.isCharacterDevice()
        ? 'a character device'
        : st.isBlockDevice()
          ? 'a block device'
          : st.isSocket()
            ? 'a socket'
            : 'not a file'
  return `is ${kind}, not a regular file`
}

/**
 * The bytes of a regular file, at most `maxBytes` of them. What is not a regular file (a FIFO, a
 * device, a directory) is refused by what it is and never read: stat first, then open without
 * blocking (a FIFO with no writer would hang an open) and look again at what was opened. At most
 * `maxBytes + 1` bytes are read, so a file that grows, or says it has no size (/proc), stops there.
 */
function readBounded(file: string, kind: UserFileKind): Buffer {
  const { what, maxBytes } = USER_FILES[kind]
  const fail = (e: unknown): never => {
    const code = (e as NodeJS.ErrnoException).code
    throw new UserFileError(code === 'ENOENT' ? 'no such file' : `cannot read (${code ?? (e as Error).message})`, code)
  }
  const tooBig = (bytes?: number) => new UserFileError(`is ${bytes === undefined ? '' : `${size(bytes)}, `}over the ${size(maxBytes)} ${what} may be`)
  let st: Stats
  try {
    st = statSync(file)
  } catch (e) {
    return fail(e)
  }
  const odd = notRegular(st)
  if (odd) throw new UserFileError(odd)
  if (st.size > maxBytes) throw tooBig(st.size)
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (e) {
    return fail(e)
  }
  try {
    // Swapped between the stat and the open: judged again on what is open.
    const again = notRegular(fstatSync(fd))
    if (again) throw new UserFileError(again)
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(maxBytes + 1 - total, Math.max(st.size + 1 - total, 64 * 1024)))
      const got = readSync(fd, chunk, 0, chunk.length, null)
      if (got === 0) break
      chunks.push(chunk.subarray(0, got))
      total += got
      if (total > maxBytes) throw tooBig()
    }
    return Buffer.concat(chunks, total)
  } catch (e) {
    if (e instanceof UserFileError) throw e
    return fail(e)
  } finally {
    closeSync(fd)
  }
}

/** The offset of the first byte that is not part of valid UTF-8 in `bytes`, or -1. */
export function invalidUtf8At(bytes: Uint8Array): number {
  const n = bytes.length
  for (let i = 0; i < n;) {
    const b = bytes[i]!
    if (b < 0x80) {
      i++
      continue
    }
    // The sequence's length and the range of its second byte (no overlong forms, no surrogates, nothing past U+10FFFF).
    const [len, lo, hi] =
      b >= 0xc2 && b <= 0xdf
        ? [2, 0x80, 0xbf]
        : b === 0xe0
          ? [3, 0xa0, 0xbf]
          : b === 0xed
            ? [3, 0x80, 0x9f]
            : b >= 0xe1 && b <= 0xef
              ? [3, 0x80, 0xbf]
              : b === 0xf0
                ? [4, 0x90, 0xbf]
                : b === 0xf4
                  ? [4, 0x80, 0x8f]
                  : b >= 0xf1 && b <= 0xf3
                    ? [4, 0x80, 0xbf]
                    : [0, 0, 0]
    if (!len) return i
    for (let k = 1; k < len; k++) {
      const c = bytes[i + k]
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i
    }
    i += len
  }
  return -1
}

/** The offset (in `bytes`) of the first UTF-16 code unit that is half of a surrogate pair alone, or -1. */
function loneSurrogateAt(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0xd800 || c > 0xdfff) continue
    if (c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++
    else return i * 2
  }
  return -1
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * A text file a user wrote (a fixture, run, rules, policy or replay file), bounded by its kind's size (see
 * USER_FILES) and a regular file, or a UserFileError saying why not. Without the UTF-8 byte-order
 * mark some editors put first (Windows Notepad does): JSON.parse refuses it, naming a character
 * nobody can see. A file that starts with a UTF-16 byte-order mark is read as UTF-16: Windows
 * PowerShell 5 writes its `>` redirections so (`dcb logs --json --all > session.jsonl`), and read
 * as UTF-8 it is a JSON error about an unreadable character. Bytes that are not valid UTF-8 (or
 * UTF-16) are refused naming their offset in the file: replaced in silence, they would change a
 * fixture's names or values without a word.
 */
export function readUserText(file: string, kind: UserFileKind): string {
  const bytes = readBounded(file, kind)
  const invalid = (offset: number, encoding: string) => new UserFileError(`is not valid ${encoding}: the byte at offset ${offset} (counting from 0)`)
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    const little = bytes[0] === 0xff
    // A last odd byte (a cut file) is left out; big-endian is swapped to little-endian.
    const units = Buffer.from(bytes.subarray(2, bytes.length - (bytes.length % 2)))
    const text = (little ? units : units.swap16()).toString('utf16le')
    const lone = loneSurrogateAt(text)
    if (lone >= 0) throw invalid(lone + 2, `UTF-16${little ? 'LE' : 'BE'}`)
    return text
  }
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  try {
    return utf8.decode(bytes.subarray(bom))
  } catch {
    throw invalid(bom + invalidUtf8At(bytes.subarray(bom)), 'UTF-8')
  }
}

export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}
