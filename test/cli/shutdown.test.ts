/**
 * Shutdown through the real binary: SIGTERM with consoles watching several sessions (live streams of
 * the default session and of named ones) ends every stream cleanly, as the server's own close, not
 * by the cut of connections that linger, and the process exits 0.
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { serve, type Served } from './run.js'

/** Opens a live stream; resolves once its `hello` arrived, with a promise of how the stream ended. */
function stream(url: string, headers: Record<string, string> = {}): Promise<{ ended: Promise<'clean' | 'cut'> }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`${url} answered ${res.statusCode}`))
      let text = ''
      const ended = new Promise<'clean' | 'cut'>((done) => {
        // 'end' comes only with the whole response (the chunked stream's last chunk): the server ended it.
        res.on('end', () => done('clean'))
        res.on('aborted', () => done('cut'))
        res.on('error', () => done('cut'))
      })
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        text += d
        if (text.includes('event: hello')) resolve({ ended })
      })
    })
    req.on('error', reject)
  })
}

describe('dcb serve shutdown', () => {
  const tmp = tempDir()
  let server: Served | undefined
  afterEach(async () => {
    await server?.stop('SIGKILL')
  })

  it('SIGTERM with consoles open on several sessions ends every live stream, exiting 0', async () => {
    server = await serve(['--in-memory'])
    const streams = await Promise.all([
      stream(`${server.url}/_sandbox/events`),
      stream(`${server.url}/_sandbox/events?session=alpha`),
      stream(`${server.url}/_sandbox/events`, { 'x-dcb-session': 'beta' }),
    ])
    const code = server.stop('SIGTERM')
    expect(await Promise.all(streams.map((s) => s.ended))).toEqual(['clean', 'clean', 'clean'])
    expect(await code).toBe(0)
  }, 20_000)

  it('installs its signal handlers before it says it is ready: a SIGTERM the moment the URL is printed is a graceful close', async () => {
    const trace = join(tmp.dir, 'signals.trace')
    const data = join(tmp.dir, 'signals.json')
    server = await serve(['--data', data], { env: { DCB_TRACE_FILE: trace, NODE_OPTIONS: `--import=${join(import.meta.dirname, 'trace-signals.mjs')}` } })
    const order = readFileSync(trace, 'utf8').trim().split('\n')
    expect(order.indexOf('ready')).toBeGreaterThan(-1)
    expect(order.indexOf('handler SIGTERM')).toBeGreaterThan(-1)
    expect(order.indexOf('handler SIGTERM')).toBeLessThan(order.indexOf('ready'))
    expect(order.indexOf('handler SIGINT')).toBeLessThan(order.indexOf('ready'))
    expect(await server.stop('SIGTERM')).toBe(0)
    expect(server.output()).toContain('SIGTERM: shutting down')
    server = undefined
  })
})
