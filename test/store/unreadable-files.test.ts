/**
 * Files in the data folder that cannot be read as what their name says (a folder named like a
 * journal, a file where the sessions folder goes) refuse the start by name, through the binary,
 * not as an unexpected error; nothing on disk changes and no lock is left.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { dcb } from '../cli/run.js'
import { tempDir } from '../helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

async function refuses(pattern: RegExp): Promise<void> {
  const before = readdirSync(tmp.dir, { recursive: true }).sort()
  const r = await dcb(['serve', '--data', join(tmp.dir, 'sandbox.json'), '--port', '0', '--quiet'])
  expect(r.code).toBe(1)
  const lines = r.stderr.trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(pattern)
  expect(lines[0]).not.toMatch(/unexpected error/)
  expect(readdirSync(tmp.dir, { recursive: true }).sort()).toEqual(before)
}

describe('unreadable store files refuse the start by name', () => {
  it('a folder named like a journal of the data file', async () => {
    mkdirSync(join(tmp.dir, 'sandbox.json.journal.3'))
    await refuses(/cannot read the journal .*sandbox\.json\.journal\.3 \(EISDIR/)
  })

  it('a folder named like the sessions journal', async () => {
    mkdirSync(join(tmp.dir, 'sandbox.json.sessions', 'journal.2'), { recursive: true })
    await refuses(/cannot read the sessions journal .*sandbox\.json\.sessions\/journal\.2 \(EISDIR/)
  })

  it('a file where the sessions folder goes', async () => {
    writeFileSync(join(tmp.dir, 'sandbox.json.sessions'), 'not a folder\n')
    await refuses(/cannot read the sessions folder .*sandbox\.json\.sessions \(ENOTDIR/)
  })
})
