/**
 * A data folder an earlier version wrote (the default session and named ones) opens with nothing lost,
 * and what the server writes after it is kept through a crash.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DEMO, tempDir } from '../helpers.js'
import { copyDataV1, DATA_V1, dumpSessions } from './data-dump.js'
import { serve } from './run.js'

const expected = (name: string) => JSON.parse(readFileSync(join(DATA_V1, `${name}.expected.json`), 'utf8'))

describe.each(['stopped', 'crashed'] as const)('a data folder of the earlier layout (%s)', (name) => {
  const tmp = tempDir()
  afterAll(() => tmp.cleanup())

  it('opens with every session as that version read it back, on the first start as after a clean stop', async () => {
    const data = copyDataV1(name, tmp.dir)
    const first = await serve(['--data', data])
    expect(await dumpSessions(first.url)).toEqual(expected(name))
    expect(await first.stop('SIGTERM')).toBe(0)
    // Said once, by the start that moved it; the data file's own write-ahead log files are gone.
    expect(first.output().match(/is of an earlier layout/g)).toEqual(['is of an earlier layout'])
    expect(readdirSync(tmp.dir).filter((f) => f.includes('.journal.'))).toEqual([])
    const second = await serve(['--data', data])
    expect(await dumpSessions(second.url)).toEqual(expected(name))
    expect(await second.stop('SIGTERM')).toBe(0)
    expect(second.output()).not.toMatch(/earlier layout/)
  })

  it('keeps writes made after the upgrade through a crash, in the default session as in a named one', async () => {
    const dir = join(tmp.dir, 'crash')
    const data = copyDataV1(name, dir)
    const server = await serve(['--data', data])
    const init = (session?: string) =>
      fetch(`${server.url}/subscriptions/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': DEMO, ...(session ? { 'x-dcb-session': session } : {}) },
        body: JSON.stringify({ msisdn: '60123000099', service_code: 'STREAMPLUS', country_code: 'my' }),
      }).then((r) => r.json())
    expect((await init()).status).toBe('SUCCESS')
    expect((await init('bob')).status).toBe('SUCCESS')
    await server.stop('SIGKILL')
    const again = await serve(['--data', data])
    type Dump = Record<string, { messages: { messages: { msisdn: string }[] } }>
    const after = (await dumpSessions(again.url)) as Dump
    const before = expected(name) as Dump
    for (const s of ['default', 'bob']) {
      const msisdns = after[s]!.messages.messages.map((m) => m.msisdn)
      expect(msisdns).toContain('60123000099')
      expect(msisdns.filter((m) => m !== '60123000099')).toEqual(before[s]!.messages.messages.map((m) => m.msisdn))
    }
    expect(after.alice).toEqual(before.alice)
    expect(await again.stop('SIGTERM')).toBe(0)
  })
})
