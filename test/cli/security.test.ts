/**
 * Issue 14 through the real binary: fixture checks name the field (return_url, linear-time regex),
 * and a server that listens beyond loopback says what is exposed and how it is protected.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { dcb, serve } from './run.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const fixture = (name: string, world: unknown) => {
  const file = join(tmp.dir, name)
  writeFileSync(file, JSON.stringify(world))
  return file
}

describe('dcb fixtures validate', () => {
  it('refuses a return_url that is not http(s) or a /path, or that carries control characters, naming the field', async () => {
    for (const url of ['javascript:alert(1)', 'https://shop.example/back\r\nSet-Cookie: x=1', '//evil.example/back', 'data:text/html,hi']) {
      const file = fixture('svc.json', { services: [{ code: 'STREAMPLUS', merchant: 'demo', name: 'Stream Plus', period: 'P1M', return_url: url }] })
      const r = await dcb(['fixtures', 'validate', file])
      expect(r.code, url).toBe(1)
      expect(r.stderr).toMatch(/\$\.services\[0\]\.return_url: must be an http\(s\) URL or a path starting with "\/"/)
    }
    const ok = fixture('ok.json', {
      services: [{ code: 'STREAMPLUS', merchant: 'demo', name: 'Stream Plus', period: 'P1M', return_url: 'https://shop.example/back?x=1' }],
    })
    expect((await dcb(['fixtures', 'validate', ok])).code).toBe(0)
  })

  it('refuses a rule regex RE2 cannot run in linear time (a backreference, lookaround), naming the field', async () => {
    const file = fixture('rule.json', { rules: [{ id: 'r', match: { regex: '^(\\d)\\1+$' }, step: 'init', effect: { error: 'BARRED' } }] })
    const r = await dcb(['fixtures', 'validate', file])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/\$\.rules\[0\]\.match\.regex: not a regular expression the sandbox runs \(RE2 syntax/)
  })
})

describe('rule regexes run in linear time', () => {
  it('a catastrophic pattern does not stall the server (a backtracking engine would take minutes here)', async () => {
    const s = await serve(['--in-memory'])
    try {
      const H = { 'content-type': 'application/json', 'api-key': 'sandbox-demo-key' }
      const rule = { id: 'slow', match: { regex: '^(\\d*\\d*\\d*\\d*)*5$' }, step: 'init', effect: { error: 'BARRED' } }
      expect((await fetch(`${s.url}/_sandbox/rules`, { method: 'POST', headers: H, body: JSON.stringify(rule) })).status).toBe(200)
      // A hang detector, not a speed measure: the answer must come at all.
      const r = await fetch(`${s.url}/subscriptions/init`, {
        method: 'POST',
        headers: H,
        body: '{"msisdn":"60123456001","service_code":"STREAMPLUS","country_code":"my"}',
        signal: AbortSignal.timeout(15_000),
      })
      expect((await r.json()).status).toBe('SUCCESS')
      expect((await fetch(`${s.url}/_sandbox/health`, { signal: AbortSignal.timeout(15_000) })).status).toBe(200)
    } finally {
      await s.stop('SIGKILL')
    }
  }, 40_000)
})

describe('dcb serve beyond loopback', () => {
  it('warns on --host 0.0.0.0, naming what is exposed, how it is protected', async () => {
    const s = await serve(['--in-memory', '--host', '0.0.0.0'])
    try {
      expect(s.output()).toContain('dcb: warning: listening on 0.0.0.0, not loopback')
      expect(s.output()).toContain('the merchant API (API keys and each merchant')
      expect(s.output()).toContain('not the control API or console (loopback only: no --admin-token given)')
    } finally {
      await s.stop()
    }
  })

  it('refuses an empty --host (Node would listen on every interface)', async () => {
    const empty = await dcb(['serve', '--in-memory', '--port', '0', '--host', ''])
    expect(empty.code).toBe(2)
    expect(empty.stderr).toBe('dcb: --host needs an address, e.g. 127.0.0.1 or 0.0.0.0 (it was empty)\n')
  })

  it('refuses an --allow-host that is no host name', async () => {
    for (const bad of ['', '*', 'a b', '*.example.test']) {
      const r = await dcb(['serve', '--in-memory', '--port', '0', '--allow-host', bad])
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(`dcb: --allow-host ${JSON.stringify(bad)} is not a host name (one name per --allow-host, no wildcards)\n`)
    }
  })

  it('refuses an empty --admin-token (it opened nothing, while --lan said the control API needs it)', async () => {
    const flag = await dcb(['serve', '--in-memory', '--port', '0', '--admin-token', ''])
    expect(flag.stderr).toBe('dcb: --admin-token needs a token (it was empty); leave it out to keep the control API to loopback\n')
    expect(flag.code).toBe(2)
  })

  it('takes an empty DCB_ADMIN_TOKEN as no token', async () => {
    // As if unset: --lan --quiet then needs one (a made-up token would not be printed).
    const env = await dcb(['serve', '--in-memory', '--port', '0', '--lan', '--quiet'], { env: { DCB_ADMIN_TOKEN: '' } })
    expect(env.stderr).toBe('dcb: --lan --quiet needs --admin-token (or DCB_ADMIN_TOKEN): a made-up token would not be printed\n')
    expect(env.code).toBe(2)
  })

  it('refuses a --trust-proxy with an empty entry (it would trust nothing without a word)', async () => {
    for (const bad of ['', '10.0.0.1,,', ' , loopback']) {
      const r = await dcb(['serve', '--in-memory', '--port', '0', '--trust-proxy', bad])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain(`dcb: --trust-proxy ${JSON.stringify(bad)} has an empty entry`)
    }
  })

  it('says nothing of the kind on loopback', async () => {
    const s = await serve(['--in-memory'])
    try {
      expect(s.output()).not.toContain('warning')
    } finally {
      await s.stop()
    }
  })
})
