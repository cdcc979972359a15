/** Where fixture files are (`src/world/fixture-paths.ts`): a path given, or a folder's *.json files. */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FixtureError } from '../../src/world/default-world.js'
import { displayName, expandFixturePaths } from '../../src/world/fixture-paths.js'
import { tempFolderPerTest } from '../helpers.js'

const tmp = tempFolderPerTest()

function refusal(paths: string[]): string[] {
  try {
    expandFixturePaths(paths)
  } catch (e) {
    if (e instanceof FixtureError) return e.problems
    throw e
  }
  throw new Error('expandFixturePaths took the paths')
}

describe('expandFixturePaths', () => {
  it('gives a folder as its *.json files sorted by name', () => {
    for (const name of ['b.json', 'a.json', 'c.json']) writeFileSync(join(tmp.dir, name), '{}')
    expect(expandFixturePaths([tmp.dir])).toEqual(['a.json', 'b.json', 'c.json'].map((n) => join(tmp.dir, n)))
  })

  it('takes only the world files of a folder, skipping *.schema.json, *.run.json, others', () => {
    for (const name of ['world.json', 'world.schema.json', 'demo.run.json', 'notes.txt']) writeFileSync(join(tmp.dir, name), '{}')
    expect(expandFixturePaths([tmp.dir])).toEqual([join(tmp.dir, 'world.json')])
  })

  it('keeps files given by path in the order given, as absolute paths', () => {
    for (const name of ['b.json', 'a.txt']) writeFileSync(join(tmp.dir, name), '{}')
    const rel = relative(process.cwd(), join(tmp.dir, 'b.json'))
    expect(expandFixturePaths([rel, join(tmp.dir, 'a.txt')])).toEqual([join(tmp.dir, 'b.json'), join(tmp.dir, 'a.txt')])
  })

  it('refuses a folder with no fixture file by name', () => {
    mkdirSync(join(tmp.dir, 'empty'))
    writeFileSync(join(tmp.dir, 'empty', 'world.schema.json'), '{}')
    expect(refusal([join(tmp.dir, 'empty')])).toEqual([
      `${join(tmp.dir, 'empty')}: a folder with no fixture file (*.json; *.run.json and *.schema.json are skipped)`,
    ])
  })

  it('refuses a path that does not exist by name', () => {
    expect(refusal([join(tmp.dir, 'gone.json')])).toEqual([`${join(tmp.dir, 'gone.json')}: no such file or directory`])
  })
})

describe('displayName', () => {
  it('names a file under the working folder relative to it', () => {
    expect(displayName(join(process.cwd(), 'fixtures', 'world.json'))).toBe(join('fixtures', 'world.json'))
  })

  it('names a file outside the working folder by its absolute path', () => {
    expect(displayName(join(tmp.dir, 'world.json'))).toBe(join(tmp.dir, 'world.json'))
  })
})
