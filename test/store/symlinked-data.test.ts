/**
 * Two servers on one data file reached by two names (the file and a symbolic link to it), through
 * the binary: the second is refused by the lock, and one server through the link keeps its
 * write-ahead logs beside the file itself, so starting through either name finds every write.
 */
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { dcb, serve } from '../cli/run.js'
import { tempDir } from '../helpers.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const init = (url: string, msisdn: string) =>
  fetch(`${url}/subscriptions/init`, { method: 'POST', headers: H, body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' }) })
const messages = async (url: string, msisdn: string) =>
  ((await (await fetch(`${url}/_sandbox/sms?msisdn=${msisdn}`)).json()) as { messages: unknown[] }).messages.length

describe('a data file reached through a symbolic link', () => {
  it('a second server through the link is refused while the first runs on the file', async () => {
    const data = join(tmp.dir, 'real', 'sandbox.json')
    mkdirSync(join(tmp.dir, 'real'))
    mkdirSync(join(tmp.dir, 'other'))
    const first = await serve(['--data', data])
    try {
      const link = join(tmp.dir, 'other', 'data.json')
      symlinkSync(data, link)
      const second = await dcb(['serve', '--data', link, '--port', '0', '--quiet'])
      expect(second.code).toBe(1)
      expect(second.stderr.trim()).toMatch(/in use by another dcb server \(pid \d+\)/)
    } finally {
      expect(await first.stop('SIGTERM')).toBe(0)
    }
  })

  it('a server killed while running through the link: a start through the file itself finds its writes', async () => {
    const data = join(tmp.dir, 'real', 'sandbox.json')
    mkdirSync(join(tmp.dir, 'real'))
    mkdirSync(join(tmp.dir, 'other'))
    const made = await serve(['--data', data])
    expect(await made.stop('SIGTERM')).toBe(0)
    const link = join(tmp.dir, 'other', 'data.json')
    symlinkSync(data, link)
    const viaLink = await serve(['--data', link])
    expect((await init(viaLink.url, '60123456001')).status).toBe(200)
    await viaLink.stop('SIGKILL')
    expect(readdirSync(join(tmp.dir, 'other'))).toEqual(expect.not.arrayContaining([expect.stringMatching(/journal/)]))

    const direct = await serve(['--data', data])
    try {
      expect(await messages(direct.url, '60123456001')).toBe(1)
    } finally {
      expect(await direct.stop('SIGTERM')).toBe(0)
    }
  })
})
