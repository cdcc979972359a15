/**
 * A data folder an earlier version wrote (the default session and named ones) opens with nothing lost,
 * and what the server writes after it is kept through a crash.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DEMO, tempDir } from '../helpers.js'
import { copyDataV1, DATA_V1, dumpSessions } from './data-dump.js'
import { serve } from './run.js'

const expected = (name: string) => JSON.parse(readFileSync(join(DATA_V1, `${name}.expected.json`), 'utf8'))

describe.each(['stopped', 'crashed'] as const)('a data folder of the earlier layout (%s)', (name) => {
  const tmp = tempDir()
  afterAll(() => tmp.cleanup())

  it('opens with every session as that version read it back, and again after a clean stop', async () => {
    const data = copyDataV1(name, tmp.dir)
    const first = await serve(['--data', data])
    expect(await dumpSessions(first.url)).toEqual(expected(name))
    expect(await first.stop('SIGTERM')).toBe(0)
    const second = await serve(['--data', data])
    expect(await dumpSessions(second.url)).toEqual(expected(name))
    expect(await second.stop('SIGTERM')).toBe(0)
  })

  it('keeps a write made after the upgrade through a crash', async () => {
    const dir = join(tmp.dir, 'crash')
    const data = copyDataV1(name, dir)
    const server = await serve(['--data', data])
    const init = await fetch(`${server.url}/subscriptions/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': DEMO, 'x-dcb-session': 'bob' },
      body: JSON.stringify({ msisdn: '60123000099', service_code: 'STREAMPLUS', country_code: 'my' }),
    }).then((r) => r.json())
    expect(init.status).toBe('SUCCESS')
    await server.stop('SIGKILL')
    const again = await serve(['--data', data])
    const after = (await dumpSessions(again.url)) as Record<string, { messages: { messages: { msisdn: string }[] } }>
    expect(after.bob!.messages.messages.map((m) => m.msisdn)).toContain('60123000099')
    const { bob, ...others } = after
    const { bob: _, ...othersBefore } = expected(name)
    expect(others).toEqual(othersBefore)
    expect(await again.stop('SIGTERM')).toBe(0)
  })
})
