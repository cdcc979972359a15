import { readFileSync } from 'node:fs'

/**
 * A text file a user wrote (a fixture, run, rules or replay file), without the UTF-8 byte-order
 * mark some editors put first (Windows Notepad does): JSON.parse refuses it, naming a character
 * nobody can see. A file that starts with a UTF-16 byte-order mark is read as UTF-16: Windows
 * PowerShell 5 writes its `>` redirections so (`dcb logs --json --all > session.jsonl`), and read
 * as UTF-8 it is a JSON error about an unreadable character.
 */
export function readUserText(file: string): string {
  const bytes = readFileSync(file)
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.subarray(2).toString('utf16le')
  // Big-endian: swapped to little-endian, a last odd byte (a cut file) left out.
  if (bytes[0] === 0xfe && bytes[1] === 0xff)
    return Buffer.from(bytes.subarray(2, bytes.length - (bytes.length % 2)))
      .swap16()
      .toString('utf16le')
  return withoutBom(bytes.toString('utf8'))
}

export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}
