/**
 * The files dcb reads from a path a user gave (fixture, run, rules and replay files) are regular
 * files within their bound: a FIFO, a device (a link to /dev/zero), a directory or a file past the
 * bound is refused by name at once, never read; bytes that are not UTF-8 are refused with their
 * offset; JSON nested past 64 levels is refused by its depth. One line, a non-zero exit, through the
 * binary.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir, useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const tmp = tempDir()
afterAll(() => tmp.cleanup())
const at = (name: string) => join(tmp.dir, name)
const MIB = 2 ** 20

const fifo = at('pipe.json')
execFileSync('mkfifo', [fifo])
const zero = at('zero.json')
symlinkSync('/dev/zero', zero)
// Sparse: 20 GiB on the file system's word, no block written.
const huge = at('huge.json')
writeFileSync(huge, '')
truncateSync(huge, 20 * 1024 * MIB)
const folderAsFile = at('folder')
mkdirSync(join(folderAsFile, 'inner.json'), { recursive: true })
writeFileSync(join(folderAsFile, 'ok.json'), '{}')
const offline = { DCB_BASE_URL: 'http://127.0.0.1:9', DCB_SESSION: undefined, DCB_ADMIN_TOKEN: undefined }

describe('a path that is not a regular file', () => {
  it('is refused by what it is, at once, by every command that reads a file a user gave (fixtures validate, run --fixtures, run, replay, rules add)', async () => {
    const cases: [string[], number, string][] = [
      [['fixtures', 'validate', fifo], 1, `${fifo}: is a FIFO (a named pipe), not a regular file\ndcb: 1 problem found\n`],
      [['fixtures', 'validate', zero], 1, `${zero}: is a character device, not a regular file\ndcb: 1 problem found\n`],
      // A folder's *.json that is a folder itself.
      [['fixtures', 'validate', folderAsFile], 1, `${join(folderAsFile, 'inner.json')}: is a directory, not a regular file\ndcb: 1 problem found\n`],
      [['run', fifo], 2, `dcb: ${fifo}: is a FIFO (a named pipe), not a regular file\n`],
      [['run', zero], 2, `dcb: ${zero}: is a character device, not a regular file\n`],
      [['run', tmp.dir], 2, `dcb: ${tmp.dir}: is a directory, not a regular file\n`],
      [['replay', fifo], 2, `dcb: ${fifo}: is a FIFO (a named pipe), not a regular file\n`],
      [['replay', zero], 2, `dcb: ${zero}: is a character device, not a regular file\n`],
      [['rules', 'add', fifo], 2, `dcb: ${fifo}: is a FIFO (a named pipe), not a regular file\n`],
    ]
    for (const [args, code, stderr] of cases) {
      const r = await dcb(args, { env: offline, timeoutMs: 10_000 })
      expect([args, r.code, r.stderr]).toEqual([args, code, stderr])
    }
    const run = at('one.run.json')
    writeFileSync(run, JSON.stringify({ steps: [{ clock: { advance: 'P1D' } }] }))
    const r = await dcb(['run', run, '--fixtures', zero], { env: offline, timeoutMs: 10_000 })
    expect([r.code, r.stdout, r.stderr]).toEqual([1, '', `dcb: fixture error: ${zero}: is a character device, not a regular file\n`])
  })

  it('dcb serve --fixtures refuses a FIFO or a link to /dev/zero by name without starting', async () => {
    for (const f of [fifo, zero]) {
      const r = await dcb(['serve', '--port', '0', '--in-memory', '--fixtures', f], { timeoutMs: 10_000 })
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(new RegExp(`^dcb: fixture error: ${f}: is a (FIFO \\(a named pipe\\)|character device), not a regular file\\n$`))
      expect(r.stdout).not.toMatch(/listening/)
    }
  })
})

describe('a file past its bound', () => {
  it('is refused by its size before it is read, against the bound of its kind (16 MiB for a fixture, run or rules file, 256 MiB for a recording)', async () => {
    const cases: [string[], number, string][] = [
      [['fixtures', 'validate', huge], 1, `${huge}: is 20480 MiB, over the 16 MiB a fixture file may be\ndcb: 1 problem found\n`],
      [['run', huge], 2, `dcb: ${huge}: is 20480 MiB, over the 16 MiB a run file may be\n`],
      [['rules', 'add', huge], 2, `dcb: ${huge}: is 20480 MiB, over the 16 MiB a rules file may be\n`],
      [['replay', huge], 2, `dcb: ${huge}: is 20480 MiB, over the 256 MiB a recording may be\n`],
    ]
    for (const [args, code, stderr] of cases) {
      const r = await dcb(args, { env: offline, timeoutMs: 10_000 })
      expect([args, r.code, r.stderr]).toEqual([args, code, stderr])
    }
  })

  it('a fixture of exactly 16 MiB loads', async () => {
    const exact = at('exact.json')
    writeFileSync(exact, '{}' + ' '.repeat(16 * MIB - 2))
    const ok = await dcb(['fixtures', 'validate', exact])
    expect([ok.code, ok.stderr]).toEqual([0, ''])
  })

  it('a fixture one byte over 16 MiB is refused by its size', async () => {
    const exact = at('exact.json')
    writeFileSync(exact, '{}' + ' '.repeat(16 * MIB - 1))
    const over = await dcb(['fixtures', 'validate', exact])
    expect([over.code, over.stderr]).toEqual([1, `${exact}: is 16.1 MiB, over the 16 MiB a fixture file may be\ndcb: 1 problem found\n`])
  })
})

describe('bytes that are not UTF-8', () => {
  const prefix = Buffer.from('{"services": [{"code": "STREAMPLUS", "name": "Caf')
  const suffix = Buffer.from('"}]}')

  it('are refused naming the file with the offset of the first one (a byte-order mark counted), not replaced', async () => {
    const latin1 = at('latin1.json')
    writeFileSync(latin1, Buffer.concat([prefix, Buffer.from([0xe9]), suffix]))
    const v = await dcb(['fixtures', 'validate', latin1])
    expect([v.code, v.stderr]).toEqual([1, `${latin1}: is not valid UTF-8: the byte at offset ${prefix.length} (counting from 0)\ndcb: 1 problem found\n`])
    // The same name in UTF-8 is taken.
    writeFileSync(latin1, Buffer.concat([prefix, Buffer.from('é'), suffix]))
    expect((await dcb(['fixtures', 'validate', latin1])).code).toBe(0)
    // After a byte-order mark: the offset is the file's.
    const run = at('bad.run.json')
    const steps = Buffer.from('{"steps": [{"mo": {"msisdn": "60123456001", "short_code": "2000", "text": "SUB ')
    writeFileSync(run, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), steps, Buffer.from([0xe2, 0x82]), Buffer.from('"}}]}')]))
    const r = await dcb(['run', run, '--clock', '2026-01-31T00:00:00'])
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `dcb: ${run}: is not valid UTF-8: the byte at offset ${3 + steps.length} (counting from 0)\n`])
  })

  it('UTF-16 with half a surrogate pair is refused with its offset too', async () => {
    const f = at('utf16.json')
    const units = Buffer.from('{"services": [{"code": "STREAMPLUS", "name": "x', 'utf16le')
    writeFileSync(f, Buffer.concat([Buffer.from([0xff, 0xfe]), units, Buffer.from([0x00, 0xd8]), Buffer.from('"}]}', 'utf16le')]))
    const v = await dcb(['fixtures', 'validate', f])
    expect([v.code, v.stderr]).toEqual([
      1,
      `${f}: is not valid UTF-16LE: the byte at offset ${2 + units.length} (counting from 0)\n` + 'dcb: 1 problem found\n',
    ])
  })
})

describe('JSON nested past 64 levels', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n)
  /** The column of the `n`th array or object opened (the texts here have no bracket in a string). */
  const opener = (text: string, n: number) => [...text].findIndex((ch) => (ch === '[' || ch === '{') && --n === 0) + 1

  it('a run file 20,000 deep is refused by its depth before the sandbox is reset', async () => {
    const id = await c.subscribe('60123456021')
    const run = at('deep.run.json')
    const text = `{"steps": [{"rule": ${'{"a": '.repeat(20_000)}1${'}'.repeat(20_000)}}]}`
    writeFileSync(run, text)
    const r = await dcb(['run', run], { env: { ...offline, DCB_BASE_URL: c.url } })
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      '',
      `dcb: ${run}: nested deeper than 64 levels of arrays and objects (at line 1, column ${opener(text, 65)})\n`,
    ])
    expect((await c.control(`/subscriptions/${id}`)).status).toBe(200)
  })

  // The file, its steps, the step and the body: 3 levels around the body's.
  const body = (levels: number) => '{"a": '.repeat(levels) + '1' + '}'.repeat(levels)
  const where = (text: string, levels: number) => `nested deeper than ${levels} levels of arrays and objects (at line 1, column ${opener(text, levels + 1)})`

  it('a run file 64 levels deep runs', async () => {
    const run = at('levels.run.json')
    writeFileSync(run, `{"steps": [{"init": ${body(61)}}]}`)
    const ok = await dcb(['run', run, '--clock', '2026-01-31T00:00:00'])
    expect([ok.code, ok.stderr]).toEqual([0, ''])
  })

  it('a run file 65 levels deep is refused by its depth', async () => {
    const run = at('levels.run.json')
    const tooDeep = `{"steps": [{"init": ${body(62)}}]}`
    writeFileSync(run, tooDeep)
    const over = await dcb(['run', run, '--clock', '2026-01-31T00:00:00'])
    expect([over.code, over.stderr]).toEqual([2, `dcb: ${run}: ${where(tooDeep, 64)}\n`])
  })

  it('a fixture or rules file past 64 levels is refused by its depth', async () => {
    const fixture = at('deep.json')
    const rulesText = `{"rules": ${deep(20_000)}}`
    writeFileSync(fixture, rulesText)
    const v = await dcb(['fixtures', 'validate', fixture])
    expect([v.code, v.stderr]).toEqual([1, `${fixture}: ${where(rulesText, 64)}\ndcb: 1 problem found\n`])
    const rules = await dcb(['rules', 'add', fixture], { env: offline })
    expect([rules.code, rules.stderr]).toEqual([2, `dcb: ${fixture}: ${where(rulesText, 64)}\n`])
  })

  it('a recording is refused past 128 levels, since it may hold bodies the request log kept 64 deep', async () => {
    const recording = at('deep.jsonl')
    const line = `{"path": "/subscriptions/init", "sandbox_time": "2026-01-31T00:00:00", "request": ${deep(128)}}`
    writeFileSync(recording, `${line.replace(deep(128), deep(127))}\n${line}\n`)
    const replay = await dcb(['replay', recording], { env: offline })
    expect([replay.code, replay.stderr]).toEqual([
      2,
      `dcb: ${recording}: line 2 is not JSON (column ${opener(line, 129)}: nested deeper than 128 levels of arrays and objects)\n`,
    ])
  })
})
