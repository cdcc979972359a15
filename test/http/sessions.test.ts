import { renameSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
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

  describe('isolation: subscriptions, inboxes, clock, runtime rules, request log; the world is shared', () => {
    const onlyB = () => c.control('/rules', { id: 'only-b', match: { msisdn: '60123456012' }, step: 'init', effect: { error: 'BARRED' } }, { headers: S('b') })
    /** 011 subscribes in session a, then in session b. */
    async function inTwoSessions() {
      expect((await subscribe(c.url, '60123456011', 'a')).status).toBe('SUCCESS')
      return subscribe(c.url, '60123456011', 'b')
    }

    // The same MSISDN in another session and in the default one: no ALREADY_SUBSCRIBED.
    it('an MSISDN subscribed in one session subscribes in another (no ALREADY_SUBSCRIBED)', async () => {
      expect((await inTwoSessions()).status).toBe('SUCCESS')
    })

    it('the default session lists no subscription made in another', async () => {
      await inTwoSessions()
      expect((await c.control('/subscriptions?msisdn=60123456011')).body.subscriptions).toEqual([])
    })

    it('the default session holds no OTP sent in another', async () => {
      await inTwoSessions()
      expect((await c.control('/otp?msisdn=60123456011')).status).toBe(404)
    })

    it('a session lists its own subscription', async () => {
      await inTwoSessions()
      expect((await c.control('/subscriptions', undefined, { headers: S('a') })).body.subscriptions).toHaveLength(1)
    })

    /** A subscription in session a, then a's clock advanced a month; answers the advance. */
    async function advanceA() {
      await subscribe(c.url, '60123456011', 'a')
      return c.control('/clock/advance', { by: 'P1M' }, { headers: S('a') })
    }

    it("a clock advance renews its session's subscriptions", async () => {
      const moved = await advanceA()
      expect(moved.body.events.map((e: any) => e.type)).toEqual(['renewed'])
    })

    it("a clock advance moves only its session's clock", async () => {
      await advanceA()
      expect((await c.control('/clock', undefined, { headers: S('a') })).body.now).toBe('2026-02-28T00:00:00.000000')
      expect((await c.control('/clock', undefined, { headers: S('b') })).body.now).toBe('2026-01-31T00:00:00.000000')
      expect((await c.control('/clock')).body.now).toBe('2026-01-31T00:00:00.000000')
    })

    it('a runtime rule holds only in the session that added it', async () => {
      await onlyB()
      expect((await subscribe(c.url, '60123456012', 'b')).message).toBe('BARRED')
      expect((await subscribe(c.url, '60123456012', 'a')).status).toBe('SUCCESS')
    })

    it("the fixtures' rules (magic endings) hold in every session", async () => {
      await onlyB()
      expect((await subscribe(c.url, '60123456106', 'a')).message).toBe('BLACKLISTED')
    })

    it('each session logs only its own merchant calls', async () => {
      await subscribe(c.url, '60123456011', 'b')
      await onlyB()
      await subscribe(c.url, '60123456012', 'b')
      const paths = async (h: Record<string, string>) =>
        (await c.control('/requests', undefined, { headers: h })).body.requests.filter((r: any) => r.merchant).map((r: any) => r.path)
      expect(await paths({})).toEqual([])
      expect(await paths(S('b'))).toEqual(['/subscriptions/init', '/subscriptions/verify', '/subscriptions/init'])
    })
  })

  describe('listing, reset and DELETE', () => {
    beforeEach(async () => {
      await subscribe(c.url, '60123456011', 'a')
      await subscribe(c.url, '60123456011')
    })

    it('lists every session with its counts, the default included', async () => {
      const list = (await c.control('/sessions')).body
      expect(list).toEqual({
        sessions: [
          { name: 'default', subscriptions: 1, messages: expect.any(Number), requests: 2, now: '2026-01-31T00:00:00.000000' },
          { name: 'a', subscriptions: 1, messages: expect.any(Number), requests: 2, now: '2026-01-31T00:00:00.000000' },
        ],
      })
      expect(list.sessions[1].messages).toBeGreaterThan(0)
    })

    it('a reset resets only the session named', async () => {
      expect((await c.control('/reset', {}, { headers: S('a') })).status).toBe(200)
      expect((await c.control('/subscriptions', undefined, { headers: S('a') })).body.subscriptions).toEqual([])
      expect((await c.control('/subscriptions')).body.subscriptions).toHaveLength(1)
    })

    it('DELETE drops a session', async () => {
      expect((await c.control('/sessions/a', undefined, { method: 'DELETE' })).body).toEqual({ deleted: 'a' })
      expect((await c.control('/sessions')).body.sessions.map((s: any) => s.name)).toEqual(['default'])
    })

    it('DELETE of a session dropped already is 404 SESSION_NOT_FOUND', async () => {
      await c.control('/sessions/a', undefined, { method: 'DELETE' })
      expect(await c.control('/sessions/a', undefined, { method: 'DELETE' })).toMatchObject({ status: 404, body: { error: 'SESSION_NOT_FOUND' } })
    })

    it('DELETE of the default session is refused with 400 BAD_REQUEST', async () => {
      expect(await c.control('/sessions/default', undefined, { method: 'DELETE' })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } })
    })

    // A name that is not one says what a name is.
    it('DELETE of a name that is not one is 400 saying what a name is', async () => {
      expect(await c.control('/sessions/caf%C3%A9', undefined, { method: 'DELETE' })).toMatchObject({
        status: 400,
        body: { error: 'BAD_REQUEST', message: '"café" is not a session name: 1-64 characters of A-Z a-z 0-9 . _ -' },
      })
    })
  })

  const badNames = ['', 'a b', 'x'.repeat(65), 'ü', 'a/b']

  it('a bad name is 400 with the BAD_REQUEST envelope on the merchant API', async () => {
    for (const bad of badNames) {
      const r = await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: S(bad) })
      expect([bad, r.status, r.text]).toEqual([bad, 400, '{"status":"FAIL","message":"BAD_REQUEST","status_code":400,"payload":null}'])
    }
  })

  it('a bad name is 400 with the error JSON BAD_REQUEST on the control API', async () => {
    for (const bad of badNames) {
      const ctl = await c.control('/clock', undefined, { headers: S(bad) })
      expect([bad, ctl.status, ctl.body.error]).toEqual([bad, 400, 'BAD_REQUEST'])
    }
  })

  it('a name of 64 characters of A-Z a-z 0-9 . _ - is taken', async () => {
    expect((await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: S('A.b_c-9'.padEnd(64, 'z')) })).status).toBe(404)
  })

  // A URL cannot address . or .. to delete the session.
  it('. or .. cannot name a new session on the merchant API: 400 saying why in X-DCB-Reason', async () => {
    for (const dots of ['.', '..']) {
      const r = await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: S(dots) })
      expect([dots, r.status, r.text]).toEqual([dots, 400, '{"status":"FAIL","message":"BAD_REQUEST","status_code":400,"payload":null}'])
      expect(r.headers.get('x-dcb-reason')).toContain(`"${dots}" cannot name a new session`)
    }
  })

  it('. or .. cannot name a new session on the control API: 400 saying why', async () => {
    for (const dots of ['.', '..']) {
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
  })

  it('dots inside a longer name are plain characters', async () => {
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

  describe('--max-sessions (3)', () => {
    /** Three named sessions: the limit, the default not counted. */
    async function full() {
      for (const n of ['s1', 's2', 's3']) expect((await c.control('/clock', undefined, { headers: S(n) })).status).toBe(200)
    }

    it('refuses a new session on the merchant API with 429 SESSION_LIMIT', async () => {
      await full()
      const r = await c.api('/subscriptions/status', { subscription_id: 'x' }, { headers: S('s4') })
      expect([r.status, r.text]).toEqual([429, '{"status":"FAIL","message":"SESSION_LIMIT","status_code":429,"payload":null}'])
    })

    it('refuses a new session on the control API with 429 SESSION_LIMIT naming the limit', async () => {
      await full()
      const ctl = await c.control('/clock', undefined, { headers: S('s4') })
      expect(ctl.status).toBe(429)
      expect(ctl.body).toEqual({
        error: 'SESSION_LIMIT',
        message: 'the server holds its limit of 3 sessions (--max-sessions); delete one with DELETE /_sandbox/sessions/NAME',
      })
    })

    it('never evicts a session', async () => {
      await full()
      await c.control('/clock', undefined, { headers: S('s4') })
      expect((await c.control('/clock', undefined, { headers: S('s1') })).status).toBe(200)
    })

    it('does not count the default session', async () => {
      await full()
      expect((await c.control('/clock')).status).toBe(200)
    })

    it('takes a new session once one is deleted', async () => {
      await full()
      await c.control('/clock', undefined, { headers: S('s4') })
      await c.control('/sessions/s2', undefined, { method: 'DELETE' })
      expect((await c.control('/clock', undefined, { headers: S('s4') })).status).toBe(200)
    })
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
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.cleanup())

  describe('after SIGKILL of a real server', () => {
    const ids: Record<string, string> = {}
    let list: any
    const got: Record<string, any> = {}
    let betaCharges: number
    beforeAll(async () => {
      const data = join(tmp.dir, 'killed', 'sandbox.json')
      let s = await serve(['--data', data, '--clock', '2026-01-31T00:00:00'])
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
        list = await (await fetch(`${s.url}/_sandbox/sessions`)).json()
        for (const name of ['alpha', 'beta', 'default'])
          got[name] = await (await fetch(`${s.url}/_sandbox/subscriptions/${ids[name]}`, { headers: name === 'default' ? {} : S(name) })).json()
        betaCharges = (await (await fetch(`${s.url}/_sandbox/subscriptions/${ids.beta}`, { headers: S('beta') })).json()).charge_count
      } finally {
        await s.stop()
      }
    }, 60_000)

    it('sessions survive like the default session, each listed as it was', () => {
      expect(list.sessions.map((x: any) => [x.name, x.subscriptions, x.now])).toEqual([
        ['default', 1, '2026-01-31T00:00:00.000000'],
        ['alpha', 1, '2026-01-31T00:00:00.000000'],
        ['beta', 1, '2026-02-28T00:00:00.000000'],
      ])
    })

    it('a session dropped before stays dropped', () => {
      expect(list.sessions.map((x: any) => x.name)).not.toContain('gone')
    })

    it('each session keeps its subscription by id', () => {
      for (const name of ['alpha', 'beta', 'default']) expect([name, got[name].subscription_id]).toEqual([name, ids[name]])
    })

    it("a session keeps the renewal its clock's advance charged", () => {
      expect(betaCharges).toBe(2)
    })
  })

  describe('a name that differs from a session kept in the data folder only in case', () => {
    let init: { status: number; body: any; reason: string | null }
    let control: { status: number; body: any }
    let list: any
    let deleted: number
    let freed: any
    let inMemory: string[]
    beforeAll(async () => {
      const s = await serve(['--data', join(tmp.dir, 'cased', 'sandbox.json'), '--clock', '2026-01-31T00:00:00'])
      const mem = await serve(['--in-memory'])
      try {
        expect((await subscribe(s.url, '60123456011', 'Alice')).status).toBe('SUCCESS')
        const r = await fetch(`${s.url}/subscriptions/init`, {
          method: 'POST',
          headers: { ...H, ...S('alice') },
          body: JSON.stringify({ msisdn: '60123456012', service_code: 'STREAMPLUS', country_code: 'my' }),
        })
        init = { status: r.status, body: await r.json(), reason: r.headers.get('x-dcb-reason') }
        const ctl = await fetch(`${s.url}/_sandbox/clock`, { headers: S('ALICE') })
        control = { status: ctl.status, body: await ctl.json() }
        list = await (await fetch(`${s.url}/_sandbox/sessions`)).json()
        deleted = (await fetch(`${s.url}/_sandbox/sessions/Alice`, { method: 'DELETE' })).status
        freed = await subscribe(s.url, '60123456011', 'alice')
        inMemory = []
        for (const name of ['Alice', 'alice']) inMemory.push((await subscribe(mem.url, '60123456011', name)).status)
      } finally {
        await s.stop()
        await mem.stop()
      }
    }, 60_000)

    it('is refused on the merchant API (one file on a case-blind file system)', () => {
      expect(init.status).toBe(400)
      expect(init.body).toMatchObject({ status: 'FAIL', message: 'BAD_REQUEST', status_code: 400 })
      expect(init.reason).toMatch(/a session "Alice" exists/)
    })

    it('is refused on the control API, saying why', () => {
      expect(control.status).toBe(400)
      expect(control.body).toMatchObject({
        error: 'BAD_REQUEST',
        message: expect.stringContaining('a session "Alice" exists: names that differ only in case'),
      })
    })

    it('refused, makes no session', () => {
      expect(list.sessions.map((x: any) => x.name)).toEqual(['default', 'Alice'])
    })

    // Once Alice is deleted, the name is free in any case.
    it('is free once the kept session is deleted', () => {
      expect(deleted).toBe(200)
      expect(freed.status).toBe('SUCCESS')
    })

    // No files, no clash: in memory they are two sessions.
    it('in memory is another session', () => {
      for (const status of inMemory) expect(status).toBe('SUCCESS')
    })
  })

  describe('a session named .. kept by an older version', () => {
    let list: any
    let now: string
    let deleted: { status: number; body: unknown }
    let again: unknown[]
    beforeAll(async () => {
      const data = join(tmp.dir, 'dots', 'sandbox.json')
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
        list = await (await fetch(`${s.url}/_sandbox/sessions`)).json()
        now = (await (await fetch(`${s.url}/_sandbox/clock`, { headers: S('..') })).json()).now
        // fetch would read %2E%2E as a path step too: a raw request, as curl sends it.
        deleted = await rawDelete(s.url, '/_sandbox/sessions/%2E%2E')
        const r = await fetch(`${s.url}/_sandbox/clock`, { headers: S('..') })
        again = [r.status, (await r.json()).message]
      } finally {
        await s.stop()
      }
    }, 60_000)

    it('still loads', () => {
      expect(list.sessions.map((x: any) => [x.name, x.now])).toEqual([
        ['default', '2026-01-31T00:00:00.000000'],
        ['..', '2026-02-01T00:00:00.000000'],
      ])
    })

    it('answers', () => {
      expect(now).toBe('2026-02-01T00:00:00.000000')
    })

    it('is deleted by /_sandbox/sessions/%2E%2E', () => {
      expect(deleted).toEqual({ status: 200, body: { deleted: '..' } })
    })

    it('once deleted, its name is refused', () => {
      expect(again).toEqual([400, expect.stringContaining('".." cannot name a new session')])
    })
  })

  describe('the client commands', () => {
    let init: Awaited<ReturnType<typeof dcb>>
    let otpElsewhere: Awaited<ReturnType<typeof dcb>>
    let otp: Awaited<ReturnType<typeof dcb>>
    let clock: Awaited<ReturnType<typeof dcb>>
    let sessions: any
    let bad: Awaited<ReturnType<typeof dcb>>
    beforeAll(async () => {
      const s = await serve(['--in-memory'])
      try {
        const env = { DCB_BASE_URL: s.url }
        init = await dcb(['init', '--msisdn', '60123456011', '--service', 'STREAMPLUS', '--country', 'my', '--session', 'cli', '--json'], { env })
        otpElsewhere = await dcb(['otp', '60123456011'], { env, timeoutMs: 20_000 })
        otp = await dcb(['otp', '60123456011'], { env: { ...env, DCB_SESSION: 'cli' } })
        clock = await dcb(['clock', 'advance', 'P1D', '--session', 'cli', '--json'], { env })
        sessions = await (await fetch(`${s.url}/_sandbox/sessions`)).json()
        bad = await dcb(['status', 'x', '--session', 'no way'], { env })
      } finally {
        await s.stop()
      }
    }, 60_000)

    it('--session picks the session of a command', () => {
      expect(JSON.parse(init.stdout).status).toBe('SUCCESS')
      expect(otpElsewhere.code).not.toBe(0)
    })

    it('DCB_SESSION picks the session of a command', () => {
      expect([otp.code, otp.stdout.trim()]).toEqual([0, expect.stringMatching(/^\d{4}$/)])
    })

    it('every command of one --session uses that one session', () => {
      expect(clock.code).toBe(0)
      expect(sessions.sessions.map((x: any) => x.name)).toEqual(['default', 'cli'])
    })

    it('a bad --session is a usage error', () => {
      expect([bad.code, bad.stderr.trim()]).toEqual([2, 'dcb: --session "no way" is not a session name: 1-64 characters of A-Z a-z 0-9 . _ -'])
    })
  })
})
