/**
 * Verification requests and SMS messages are capped, the oldest dropped first. When the write of
 * calls that dropped some fails (a full disk), they come back in their places: memory and a restart
 * (which replays the write-ahead log in order) agree on which record is the oldest, and so on what the next
 * call drops.
 */
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Engine } from '../../src/core/engine.js'
import type { State } from '../../src/core/state.js'
import { StoreError } from '../../src/store/types.js'
import { tempDir } from '../helpers.js'
import { faults, openFile } from './faulty-store.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

/** The capped maps' order (a snapshot's, and so a restart's) and the record each drops next. */
const order = (state: State) => ({
  verifs: [...state.verifs.keys()],
  sms: [...state.sms.keys()],
  oldest: [state.oldest('verifs'), state.oldest('sms')],
})

/** An Init (a verification request and its OTP message), as the merchant calls it. */
function init(engine: Engine, msisdn: string) {
  const merchant = engine.authenticate('sandbox-demo-key')!
  return engine.init(merchant, { msisdn, service_code: 'STREAMPLUS', country_code: 'my' }, { baseUrl: '' })
}

describe('calls that dropped the oldest capped records, whose write failed', () => {
  it('put them back in their places: the next call drops the same record in memory as after a restart', async () => {
    const f = faults()
    const dir = join(tmp.dir, 'order')
    const s = await openFile(dir, f.io, 'never')
    try {
      const [engine] = s.engines({ maxVerifications: 4, maxSms: 4 })
      for (let k = 0; k < 6; k++) expect((await init(engine!, `6012345600${k}`)).code).toBe('SUCCESS')
      const before = order(s.states[0]!)
      // Two calls written together, each dropping the oldest request and message: the write fails, both are taken back.
      f.arm('throw')
      const failed = [init(engine!, '60123456010'), init(engine!, '60123456011')]
      for (const call of failed) await expect(call).rejects.toThrow(StoreError)
      expect(order(s.states[0]!)).toEqual(before)
      // The next call drops the oldest, written to the write-ahead log; a restart replays it to the same state, in the same order.
      expect((await init(engine!, '60123456012')).code).toBe('SUCCESS')
      const after = order(s.states[0]!)
      expect(after.verifs).toEqual([...before.verifs.slice(1), expect.any(String)])
      await s.crash()
      const again = await openFile(dir, f.io, 'never')
      expect(order(again.states[0]!)).toEqual(after)
      await again.close()
    } finally {
      await s.close().catch(() => {})
    }
  })
})
