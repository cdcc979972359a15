import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = resolve(import.meta.dirname, '../src')
/** Files a person can hold in their head: split a file by concern before it passes this. */
const MAX_LINES = 450

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))
}

describe('source layout', () => {
  it(`keeps every file under src/ at ${MAX_LINES} lines or fewer`, () => {
    const all = files(SRC)
    expect(all.length).toBeGreaterThan(20)
    const long = all
      .map((f) => ({ file: relative(SRC, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`)
    expect(long).toEqual([])
  })
})
