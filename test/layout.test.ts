import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = resolve(import.meta.dirname, '../src')
const TEST = import.meta.dirname
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

  it('has a test folder for every folder of src/, of the same name (test/ mirrors src/)', () => {
    const folders = (dir: string) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [e.name] : []))
    const src = folders(SRC)
    expect(src.length).toBeGreaterThan(5)
    // A folder counts once it holds a test, not when it is only there.
    const tested = new Set(folders(TEST).filter((name) => readdirSync(join(TEST, name)).some((f) => f.endsWith('.test.ts'))))
    expect(src.filter((name) => !tested.has(name))).toEqual([])
  })
})
