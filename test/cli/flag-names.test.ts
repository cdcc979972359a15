/**
 * A refused option of dcb serve or dcb run names flags only: the library's option names (clockRunning,
 * replaceWorld, clock) are startSandbox's and createSandbox's words, not the command line's. Through the binary.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir, writeJson } from '../helpers.js'
import { dcb } from './run.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())
const env = { DCB_STORE: undefined, DCB_ADMIN_TOKEN: undefined }
/** A word such as clockRunning or replaceWorld: an option's name in the library, not a flag. */
const LIBRARY_NAME = /\b[a-z]+[A-Z][A-Za-z]*\b/

describe('refused options name flags only', () => {
  it('dcb serve --clock-running without --clock', async () => {
    const r = await dcb(['serve', '--in-memory', '--port', '0', '--clock-running'], { env })
    expect([r.code, r.stderr]).toEqual([2, 'dcb: --clock-running goes with --clock: the time the clock runs from\n'])
  })

  it('dcb run --clock that is not a time, before the file is read', async () => {
    const r = await dcb(['run', 'no-such.run.json', '--clock', 'soon'], { env })
    expect([r.code, r.stderr]).toEqual([2, 'dcb: --clock "soon" is not a time: use ISO-8601, e.g. 2026-01-31T00:00:00\n'])
  })

  it('every other pair of serve options refused together, a bad value of one too', async () => {
    const file = writeJson(tmp.dir, 'one.run.json', { steps: [{ otp: '60123456001' }] })
    const refused = [
      ['serve', '--port', '0', '--replace-world'],
      ['serve', '--port', '0', '--in-memory', '--store', 'postgres://u:p@127.0.0.1:1/db'],
      ['serve', '--port', '0', '--store', 'mysql://u:p@127.0.0.1:1/db'],
      ['serve', '--port', '0', '--in-memory', '--data', `${tmp.dir}/x.json`],
      ['serve', '--port', '0', '--in-memory', '--clock', '2026-01-31T00:00:00.1234'],
      ['run', file, '--clock', '2026-02-30T00:00:00'],
      ['run', file, '--fixtures', `${tmp.dir}/none.json`, '--timeout', '3'],
    ]
    for (const args of refused) {
      const r = await dcb(args, { env })
      expect([args, r.code]).toEqual([args, 2])
      expect(r.stderr).toMatch(/^dcb: --/)
      expect([args, r.stderr.match(LIBRARY_NAME)?.[0]]).toEqual([args, undefined])
    }
  })
})
