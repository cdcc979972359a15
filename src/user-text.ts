import { readFileSync } from 'node:fs'

/**
 * A text file a user wrote (a fixture, run, rules or replay file), without the UTF-8 byte-order
 * mark some editors put first (Windows Notepad does): JSON.parse refuses it, naming a character
 * nobody can see.
 */
export function readUserText(file: string): string {
  return withoutBom(readFileSync(file, 'utf8'))
}

export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}
