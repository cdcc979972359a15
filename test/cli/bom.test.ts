/**
 * Files saved with a UTF-8 byte-order mark first (Windows Notepad does), or in UTF-16 with its mark
 * (Windows PowerShell 5's `>` does): dcb reads them as the JSON they are, through the real binary.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { dcb } from './run.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const BOM = '\ufeff'
const writeWithBom = (name: string, doc: unknown): string => {
  const f = join(tmp.dir, name)
  writeFileSync(f, BOM + JSON.stringify(doc, null, 2))
  return f
}

describe('a JSON file that starts with a byte-order mark', () => {
  const bomFixture = () => writeWithBom('gamers.json', { services: [{ code: 'STREAMPLUS', name: 'Stream Plus (BOM)' }] })

  it('is a fixture file like any other to dcb fixtures validate', async () => {
    const v = await dcb(['fixtures', 'validate', bomFixture()])
    expect(v.stderr).toBe('')
    expect(v.code).toBe(0)
  })

  it('is a fixture file like any other to a run with --fixtures', async () => {
    const fixture = bomFixture()
    const run = writeWithBom('bom.run.json', {
      steps: [{ init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } }, { expect: { 'init.status': 'SUCCESS' } }],
    })
    const r = await dcb(['run', run, '--fixtures', fixture])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('1 expectation passed')
  })
})

describe('a JSON file in UTF-16 with its byte-order mark', () => {
  it('little-endian (PowerShell 5 `>`) and big-endian: fixtures validate and run read them as JSON', async () => {
    const utf16 = (name: string, doc: unknown, bigEndian = false): string => {
      const f = join(tmp.dir, name)
      const bytes = Buffer.from(BOM + JSON.stringify(doc, null, 2), 'utf16le')
      writeFileSync(f, bigEndian ? bytes.swap16() : bytes)
      return f
    }
    const fixture = utf16('ps.json', { services: [{ code: 'STREAMPLUS', name: 'Stream Plus (UTF-16)' }] })
    const v = await dcb(['fixtures', 'validate', fixture])
    expect([v.code, v.stderr]).toEqual([0, ''])
    const run = utf16(
      'ps.run.json',
      { steps: [{ init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } }, { expect: { 'init.status': 'SUCCESS' } }] },
      true,
    )
    const r = await dcb(['run', run, '--fixtures', fixture])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toContain('1 expectation passed')
  })
})
