import { renameSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { dcb, serve } from '../cli/run.js'

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
const S = (name: string) => ({ 'x-dcb-session': name })

/** Init + OTP + verify in a session; answers the verify envelope. */
async function subscribe(url: string, msisdn: string, session?: string): Promise<any> {
  const h = session ? { ...H, ...S(session) } : H
  const init = await (
    await fetch(`${url}/subscriptions/init`, { method: 'POST', headers: h, body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' }) })
  ).json()
  if (init.status !== 'SUCCESS') return init
  const otp = await (await fetch(`${url}/_sandbox/otp?msisdn=${msisdn}`, { headers: session ? S(session) : {} })).json()
  return (
    await fetch(`${url}/subscriptions/verify`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ verif_request_id: init.payload.verif_request_id, otp: otp.otp }),
    })
  ).json()
}

/** A DELETE whose path is sent as written (fetch resolves . and .., even encoded, before sending). */
function rawDelete(base: string, path: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(base, { method: 'DELETE', path }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('sessions (X-DCB-Session)', () => {
  let c: Client
  beforeEach(async () => {
    c = await startClient({ clock: '2026-01-31T00:00:00', maxSessions: 3 })
  })
  afterEach(() => c.close())

  describe('isolate subscriptions, inboxes, clock, runtime rules and request log; the world is shared', () => {
    const onlyB = () => c.control('/rules', { id: 'only-b', match: { msisdn: '60123456012' }, step: 'init', effect: { error: 'BARRED' } }, { headers: S('b') })

    it('subscriptions and inboxes', async () => {
      expect((await subscribe(c.url, '60123456011', 'a')).status).toBe('SUCCESS')
      // The same MSISDN in another session and in the default one: no ALREADY_SUBSCRIBED.
      expect((await subscribe(c.url, '60123456011', 'b')).status).toBe('SUCCESS')
      expect((await c.control('/subscriptions?msisdn=60123456011')).body.subscriptions).toEqual([])
      expect((await c.control('/otp?msisdn=60123456011')).status).toBe(404)
      expect((await c.control('/subscriptions', undefined, { headers: S('a') })).body.subscriptions).toHaveLength(1)
    })

    it('the clock', async () => {
      await subscribe(c.url, '60123456011', 'a')
      const moved = await c.control('/clock/advance', { by: 'P1M' }, { headers: S('a') })
      expect(moved.body.events.map((e: any) => e.type)).toEqual(['renewed'])
      expect((await c.control('/clock', undefined, { headers: S('a') })).body.now).toBe('2026-02-28T00:00:00.000000')
      expect((await c.control('/clock', undefined, { headers: S('b') })).body.now).toBe('2026-01-31T00:00:00.000000')
      expect((await c.control('/clock')).body.now).toBe('2026-01-31T00:00:00.000000')
    })

    it("runtime rules; the fixtures' rules hold in every session", async () => {
      await onlyB()
      expect((await subscribe(c.url, '60123456012', 'b')).message).toBe('BARRED')
      expect((await subscribe(c.url, '60123456012', 'a')).status).toBe('SUCCESS')
      // Fixture rules (magic endings) hold in every session.
      expect((await subscribe(c.url, '60123456106', 'a')).message).toBe('BLACKLISTED')
    })

    it('the request log', async () => {
      await subscribe(c.url, '60123456011', 'b')
      await onlyB()
      await subscribe(c.url, '60123456012', 'b')
      const paths = async (h: Record<string, string>) =>
        (await c.control('/requests', undefined, { headers: h })).body.requests.filter((r: any) => r.merchant).map((r: any) => r.path)
      expect(await paths({})).toEqual([])
      expect(await paths(S('b'))).toEqual(['/subscriptions/init', '/subscriptions/verify', '/subscriptions/init'])
    })
  })

  it('list with counts (default included) and drop sessions; reset resets only the session named', async () => {
    await subscribe(c.url, '60123456011', 'a')
    await subscribe(c.url, '60123456011')
    const list = (await c.control('/sessions')).body
    expect(list).toEqual({
      sessions: [
        { name: 'default', subscriptions: 1, messages: expect.any(Number), requests: 2, now: '2026-01-31T00:00:00.000000' },
        { name: 'a', subscriptions: 1, messages: expect.any(Number), requests: 2, now: '2026-01-31T00:00:00.000000' },
      ],
    })
    expect(list.sessions[1].messages).toBeGreaterThan(0)

    expect((await c.control('/reset', {}, { headers: S('a') })).status).toBe(200)
    expect((await c.control('/subscriptions', undefined, { headers: S('a') })).body.subscriptions).toEqual([])
    expect((await c.control('/subscriptions')).body.subscriptions).toHaveLength(1)

    expect((await c.control('/sessions/a', undefined, { method: 'DELETE' })).body).toEqual({ deleted: 'a' })
    expect((await c.control('/sessions')).body.sessions.map((s: any) => s.name)).toEqual(['default'])
    expect(await c.control('/sessions/a', undefined, { method: 'DELETE' })).toMatchObject({ status: 404, body: { error: 'SESSION_NOT_FOUND' } })
    expect(await c.control('/sessions/default', undefined, { method: 'DELETE' })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } })
    // A name that is not one says what a name is.
    expect(await c.control('/sessions/caf%C3%A9', undefined, { method: 'DELETE' })).toMatchObject({
      status: 400,
      body: { error: 'BAD_REQUEST', message: '"café" is not a session name: 1-64 characters of A-Z a-z 0-9 . _ -' },
    })
  })

  it('a bad name is 400: the BAD_REQUEST envelope on the merchant API, the error JSON on the control API', async () => {
    for (const bad of ['', 'a b', 'x'.repeat(65), 'ü', 'a/b']) {
      const r = await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: S(bad) })
      expect([bad, r.status, r.text]).toEqual([bad, 400, '{"status":"FAIL","message":"BAD_REQUEST","status_code":400,"payload":null}'])
      const ctl = await c.control('/clock', undefined, { headers: S(bad) })
      expect([bad, ctl.status, ctl.body.error]).toEqual([bad, 400, 'BAD_REQUEST'])
    }
    expect((await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: S('A.b_c-9'.padEnd(64, 'z')) })).status).toBe(404)
  })

  it('. and .. cannot name a new session (a URL cannot address them to delete it): 400 saying why on both APIs', async () => {
    for (const dots of ['.', '..']) {
      const r = await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: S(dots) })
      expect([dots, r.status, r.text]).toEqual([dots, 400, '{"status":"FAIL","message":"BAD_REQUEST","status_code":400,"payload":null}'])
      expect(r.headers.get('x-dcb-reason')).toContain(`"${dots}" cannot name a new session`)
      const ctl = await c.control('/clock', undefined, { headers: S(dots) })
      expect([dots, ctl.status, ctl.body]).toEqual([
        dots,
        400,
        {
          error: 'BAD_REQUEST',
          message: `"${dots}" cannot name a new session: URL clients read . and .. in /_sandbox/sessions/${dots} as path steps, so it could never be deleted; use another name`,
        },
      ])
    }
    // Dots inside a longer name are plain characters.
    expect((await c.control('/clock', undefined, { headers: S('...') })).status).toBe(200)
    expect((await c.control('/sessions')).body.sessions.map((s: any) => s.name)).toEqual(['default', '...'])
  })

  it('the sessions calls take no query parameter: one is refused by name', async () => {
    expect((await c.control('/sessions?name=alpha')).body).toEqual({
      error: 'BAD_REQUEST',
      message: 'name: unknown query parameter; GET /_sandbox/sessions takes none',
    })
    const del = await c.control('/sessions/alpha?force=1', undefined, { method: 'DELETE' })
    expect(del.body).toEqual({ error: 'BAD_REQUEST', message: 'force: unknown query parameter; DELETE /_sandbox/sessions/alpha takes none' })
  })

  it('--max-sessions refuses a new session with 429 SESSION_LIMIT (never evicts; the default is not counted)', async () => {
    for (const n of ['s1', 's2', 's3']) expect((await c.control('/clock', undefined, { headers: S(n) })).status).toBe(200)
    const r = await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: S('s4') })
    expect([r.status, r.text]).toEqual([429, '{"status":"FAIL","message":"SESSION_LIMIT","status_code":429,"payload":null}'])
    const ctl = await c.control('/clock', undefined, { headers: S('s4') })
    expect(ctl.status).toBe(429)
    expect(ctl.body).toEqual({
      error: 'SESSION_LIMIT',
      message: 'the server holds its limit of 3 sessions (--max-sessions); delete one with DELETE /_sandbox/sessions/NAME',
    })
    expect((await c.control('/clock', undefined, { headers: S('s1') })).status).toBe(200)
    expect((await c.control('/clock')).status).toBe(200)
    await c.control('/sessions/s2', undefined, { method: 'DELETE' })
    expect((await c.control('/clock', undefined, { headers: S('s4') })).status).toBe(200)
  })

  it('a limit of one session says "1 session"', async () => {
    await c.close()
    c = await startClient({ maxSessions: 1 })
    expect((await c.control('/clock', undefined, { headers: S('s1') })).status).toBe(200)
    expect((await c.control('/clock', undefined, { headers: S('s2') })).body.message).toBe(
      'the server holds its limit of 1 session (--max-sessions); delete one with DELETE /_sandbox/sessions/NAME',
    )
  })

  it('a consent link made in a session works without the header (a browser follows it)', async () => {
    const init = await c.api('/subscriptions/init', { msisdn: '359881234011', service_code: 'STREAMPLUS', country_code: 'bg' }, { headers: S('a') })
    const res = await fetch(init.body.payload.redirect_url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=approve',
      redirect: 'manual',
    })
    expect(res.status).toBe(303)
    expect((await c.control('/subscriptions', undefined, { headers: S('a') })).body.subscriptions).toHaveLength(1)
    expect((await c.control('/subscriptions')).body.subscriptions).toEqual([])
  })
})

describe('sessions on disk', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeEach(() => {
    tmp = tempDir()
  })
  afterEach(() => tmp.cleanup())

  it('survive SIGKILL of a real server like the default session (and a dropped one stays dropped)', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    let s = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    const ids: Record<string, string> = {}
    try {
      for (const name of ['alpha', 'beta', 'gone']) ids[name] = (await subscribe(s.url, '60123456011', name)).payload.subscription_id
      ids.default = (await subscribe(s.url, '60123456011')).payload.subscription_id
      await fetch(`${s.url}/_sandbox/clock/advance`, { method: 'POST', headers: { 'content-type': 'application/json', ...S('beta') }, body: '{"by":"P1M"}' })
      expect((await fetch(`${s.url}/_sandbox/sessions/gone`, { method: 'DELETE' })).status).toBe(200)
    } finally {
      await s.stop('SIGKILL')
    }
    s = await serve(['--data', data])
    try {
      const list = await (await fetch(`${s.url}/_sandbox/sessions`)).json()
      expect(list.sessions.map((x: any) => [x.name, x.subscriptions, x.now])).toEqual([
        ['default', 1, '2026-01-31T00:00:00.000000'],
        ['alpha', 1, '2026-01-31T00:00:00.000000'],
        ['beta', 1, '2026-02-28T00:00:00.000000'],
      ])
      for (const name of ['alpha', 'beta', 'default']) {
        const got = await (await fetch(`${s.url}/_sandbox/subscriptions/${ids[name]}`, { headers: name === 'default' ? {} : S(name) })).json()
        expect([name, got.subscription_id]).toEqual([name, ids[name]])
      }
      expect((await (await fetch(`${s.url}/_sandbox/subscriptions/${ids.beta}`, { headers: S('beta') })).json()).charge_count).toBe(2)
    } finally {
      await s.stop()
    }
  }, 60_000)

  it('a name that differs from a session kept in the data folder only in case is refused (one file on macOS and Windows); in memory it is another session', async () => {
    const s = await serve(['--data', join(tmp.dir, 'sandbox.json'), '--clock', '2026-01-31T00:00:00'])
    const mem = await serve(['--in-memory'])
    try {
      expect((await subscribe(s.url, '60123456011', 'Alice')).status).toBe('SUCCESS')
      const init = await fetch(`${s.url}/subscriptions/init`, {
        method: 'POST',
        headers: { ...H, ...S('alice') },
        body: JSON.stringify({ msisdn: '60123456012', service_code: 'STREAMPLUS', country_code: 'my' }),
      })
      expect(init.status).toBe(400)
      expect(await init.json()).toMatchObject({ status: 'FAIL', message: 'BAD_REQUEST', status_code: 400 })
      expect(init.headers.get('x-dcb-reason')).toMatch(/a session "Alice" exists/)
      const control = await fetch(`${s.url}/_sandbox/clock`, { headers: S('ALICE') })
      expect(control.status).toBe(400)
      expect(await control.json()).toMatchObject({
        error: 'BAD_REQUEST',
        message: expect.stringContaining('a session "Alice" exists: names that differ only in case'),
      })
      const list = await (await fetch(`${s.url}/_sandbox/sessions`)).json()
      expect(list.sessions.map((x: any) => x.name)).toEqual(['default', 'Alice'])
      // Once Alice is deleted, the name is free in any case.
      expect((await fetch(`${s.url}/_sandbox/sessions/Alice`, { method: 'DELETE' })).status).toBe(200)
      expect((await subscribe(s.url, '60123456011', 'alice')).status).toBe('SUCCESS')
      // No files, no clash: in memory they are two sessions.
      for (const name of ['Alice', 'alice']) expect((await subscribe(mem.url, '60123456011', name)).status).toBe('SUCCESS')
    } finally {
      await s.stop()
      await mem.stop()
    }
  })

  it('a session named .. kept by an older version still loads, answers and is deleted by /_sandbox/sessions/%2E%2E; then the name is refused', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    let s = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
    try {
      await fetch(`${s.url}/_sandbox/clock/advance`, { method: 'POST', headers: { 'content-type': 'application/json', ...S('old') }, body: '{"by":"P1D"}' })
    } finally {
      await s.stop()
    }
    // What an older version left for a session named "..": a clean stop keeps one snapshot per session, NAME.json.
    renameSync(join(`${data}.sessions`, 'old.json'), join(`${data}.sessions`, '...json'))
    s = await serve(['--data', data])
    try {
      const list = await (await fetch(`${s.url}/_sandbox/sessions`)).json()
      expect(list.sessions.map((x: any) => [x.name, x.now])).toEqual([
        ['default', '2026-01-31T00:00:00.000000'],
        ['..', '2026-02-01T00:00:00.000000'],
      ])
      expect((await (await fetch(`${s.url}/_sandbox/clock`, { headers: S('..') })).json()).now).toBe('2026-02-01T00:00:00.000000')
      // fetch would read %2E%2E as a path step too: a raw request, as curl sends it.
      expect(await rawDelete(s.url, '/_sandbox/sessions/%2E%2E')).toEqual({ status: 200, body: { deleted: '..' } })
      const again = await fetch(`${s.url}/_sandbox/clock`, { headers: S('..') })
      expect([again.status, (await again.json()).message]).toEqual([400, expect.stringContaining('".." cannot name a new session')])
    } finally {
      await s.stop()
    }
  }, 60_000)

  it('--session and DCB_SESSION pick the session of every client command; a bad one is a usage error', async () => {
    const s = await serve(['--in-memory'])
    try {
      const env = { DCB_BASE_URL: s.url }
      const init = await dcb(['init', '--msisdn', '60123456011', '--service', 'STREAMPLUS', '--country', 'my', '--session', 'cli', '--json'], { env })
      expect(JSON.parse(init.stdout).status).toBe('SUCCESS')
      expect((await dcb(['otp', '60123456011'], { env, timeoutMs: 20_000 })).code).not.toBe(0)
      const otp = await dcb(['otp', '60123456011'], { env: { ...env, DCB_SESSION: 'cli' } })
      expect([otp.code, otp.stdout.trim()]).toEqual([0, expect.stringMatching(/^\d{4}$/)])
      const clock = await dcb(['clock', 'advance', 'P1D', '--session', 'cli', '--json'], { env })
      expect(clock.code).toBe(0)
      const sessions = await (await fetch(`${s.url}/_sandbox/sessions`)).json()
      expect(sessions.sessions.map((x: any) => x.name)).toEqual(['default', 'cli'])
      const bad = await dcb(['status', 'x', '--session', 'no way'], { env })
      expect([bad.code, bad.stderr.trim()]).toEqual([2, 'dcb: --session "no way" is not a session name: 1-64 characters of A-Z a-z 0-9 . _ -'])
    } finally {
      await s.stop()
    }
  }, 60_000)
})
