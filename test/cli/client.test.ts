import { execFile } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startClient, tempDir, type Client } from '../helpers.js'
import { BIN, dcb } from './run.js'
import { nextLiveStream, outputShows, withFakeTimers } from '../wait.js'

let c: Client
let env: Record<string, string>
beforeAll(async () => {
  c = await startClient()
  env = { DCB_BASE_URL: c.url, DCB_API_KEY: '' }
  delete (env as any).DCB_API_KEY
})
afterAll(() => c.close())
beforeEach(async () => {
  await c.control('/reset', {})
})

const run = (args: string[], extra: Record<string, string | undefined> = {}) => dcb(args, { env: { ...env, DCB_API_KEY: undefined, ...extra } })

describe('dcb init / otp / verify / status', () => {
  describe('the OTP flow', () => {
    type R = Awaited<ReturnType<typeof run>>
    let i: R, o: R, v: R, s: R
    beforeAll(async () => {
      await c.control('/reset', {})
      i = await run(['init', '--msisdn', '60123456001', '--service', 'STREAMPLUS', '--country', 'my', '--json'])
      o = await run(['otp', '60123456001'])
      v = await run(['verify', '--id', JSON.parse(i.stdout).payload.verif_request_id, '--otp', o.stdout.trim()])
      s = await run(['status', /subscription_id\s+(\S+)/.exec(v.stdout)![1]!])
    })

    it('init --json prints the envelope with exit 0', () => {
      expect(i.code).toBe(0)
      expect(Object.keys(JSON.parse(i.stdout))).toEqual(['status', 'message', 'status_code', 'payload'])
    })

    it('otp prints the code alone', () => {
      expect(o.code).toBe(0)
      expect(o.stdout).toMatch(/^\d{4}\n$/)
    })

    it('verify exits 0 on SUCCESS', () => {
      expect(v.code).toBe(0)
      expect(v.stdout).toMatch(/✔ SUCCESS verify/)
    })

    it('status shows the subscription ACTIVE, uncoloured in a pipe', () => {
      expect(s.code).toBe(0)
      expect(s.stdout).toMatch(/status\s+ACTIVE/)
      expect(s.stdout).not.toMatch(/\x1b\[/)
    })
  })

  it('exit 1 on a FAIL envelope of any HTTP status, with a readable line or the raw envelope', async () => {
    const s = await run(['status', 'nope'])
    expect(s.code).toBe(1)
    expect(s.stdout).toMatch(/✘ FAIL status: SUBSCRIPTION_NOT_FOUND \(HTTP 404\)/)
    const j = await run(['status', 'nope', '--json'])
    expect(j.code).toBe(1)
    expect(JSON.parse(j.stdout)).toEqual({ status: 'FAIL', message: 'SUBSCRIPTION_NOT_FOUND', status_code: 404, payload: null })
    const pin = await run(['verify', '--id', 'x', '--otp', '1'])
    expect(pin.code).toBe(1)
    expect(pin.stdout).toContain('INVALID_PIN (HTTP 200)')
  })

  it('takes the key from --api-key, then DCB_API_KEY, then the demo key', async () => {
    const id = await c.subscribe('60123456001')
    expect((await run(['status', id])).code).toBe(0)
    expect((await run(['status', id], { DCB_API_KEY: 'sandbox-other-key' })).code).toBe(1)
    expect((await run(['status', id, '--api-key', 'sandbox-demo-key-2'], { DCB_API_KEY: 'sandbox-other-key' })).code).toBe(0)
  })

  it('takes the base URL from --base-url, then DCB_BASE_URL', async () => {
    const id = await c.subscribe('60123456001')
    const bad = await run(['status', id, '--base-url', 'http://127.0.0.1:1'])
    expect(bad.code).toBe(3)
    expect((await run(['status', id, '--base-url', c.url], { DCB_BASE_URL: 'http://127.0.0.1:1' })).code).toBe(0)
  })

  it('exit 3 with one line when the server is unreachable or does not speak the API', async () => {
    const r = await run(['status', 'x'], { DCB_BASE_URL: 'http://127.0.0.1:1' })
    expect(r.code).toBe(3)
    expect(r.stderr).toBe('dcb: cannot reach http://127.0.0.1:1: connection refused (is `dcb serve` running?)\n')
    const html: Server = createServer((_req, res) => res.end('<html>hello</html>'))
    await new Promise<void>((resolve) => html.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(html.address() as any).port}`
      const r2 = await run(['status', 'x', '--base-url', url])
      expect(r2.code).toBe(3)
      expect(r2.stderr).toMatch(/^dcb: .*without the API's envelope/)
      expect(r2.stderr.trim().split('\n')).toHaveLength(1)
      const r3 = await run(['otp', '60123456001', '--base-url', url])
      expect(r3.code).toBe(3)
    } finally {
      html.close()
    }
  })

  it('without a terminal, missing options exit 2 at once naming them (stdin closed, no hang)', async () => {
    const r = await run(['init', '--msisdn', '60123456001'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('dcb: missing --service, --country (no terminal to ask on)\n')
    const v = await run(['verify'])
    expect(v.code).toBe(2)
    expect(v.stderr).toContain('--id, --otp')
    expect((await run(['status'])).code).toBe(2)
  })

  it('an option given empty (a $(…) that printed nothing) is named as empty, not as missing (exit 2, nothing sent)', async () => {
    const otp = await run(['otp', '60123456001'])
    expect(otp.code).toBe(1)
    const v = await run(['verify', '--id', 'abc', '--otp', otp.stdout.trim()])
    expect([v.code, v.stderr]).toEqual([2, 'dcb: --otp is empty: give a value (an empty "$(…)" gives none)\n'])
    const both = await run(['verify', '--id', '', '--otp', ''])
    expect(both.stderr).toBe('dcb: --id, --otp are empty: give a value (an empty "$(…)" gives none)\n')
    const s = await run(['status', ''])
    expect([s.code, s.stderr]).toEqual([2, 'dcb: SUBSCRIPTION_ID is empty: give a value (an empty "$(…)" gives none)\n'])
    expect((await c.control('/requests')).body.requests).toEqual([])
  })

  it('a key or token no HTTP header can carry is a usage error (exit 2) naming its source with the character', async () => {
    const accepted = 'a header carries tab and U+0020 to U+00FF except U+007F (printable ASCII and Latin-1)'
    const key = await run(['status', 'x', '--api-key', 'ключ'])
    expect([key.code, key.stderr]).toEqual([2, `dcb: --api-key has a character an HTTP header cannot carry: "к" (U+043A); ${accepted}\n`])
    const env = await run(['clock'], { DCB_ADMIN_TOKEN: 'a\u0001b' })
    expect([env.code, env.stderr]).toEqual([2, `dcb: DCB_ADMIN_TOKEN has a character an HTTP header cannot carry: "\\u0001" (U+0001); ${accepted}\n`])
    const del = await run(['clock'], { DCB_API_KEY: 'key\u007f' })
    expect([del.code, del.stderr]).toEqual([2, `dcb: DCB_API_KEY has a character an HTTP header cannot carry: "\u007f" (U+007F); ${accepted}\n`])
    const { dir, cleanup } = tempDir()
    try {
      const file = join(dir, 'key.run.json')
      writeFileSync(file, JSON.stringify({ steps: [{ api_key: 'ключ', status: 'x' }] }))
      const r = await run(['run', file])
      expect([r.code, r.stderr]).toEqual([2, `dcb: ${file}: $.steps[0].api_key: has a character an HTTP header cannot carry: "к" (U+043A); ${accepted}\n`])
    } finally {
      cleanup()
    }
  })

  it('a Latin-1 key is carried to the server, as the refusal says', async () => {
    // The server answers (this key is no merchant's).
    const latin1 = await run(['status', 'x', '--api-key', 'clé'])
    expect([latin1.code, latin1.stderr]).toEqual([1, ''])
    expect(latin1.stdout).toMatch(/FAIL status: UNAUTHORIZED/)
  })

  it('a bad base URL or session name names where it came from: the option, the environment variable, the run file', async () => {
    expect((await run(['clock', '--base-url', 'nope'])).stderr).toBe('dcb: --base-url "nope" is not an http(s) URL\n')
    expect((await run(['clock'], { DCB_BASE_URL: 'nope' })).stderr).toBe('dcb: DCB_BASE_URL "nope" is not an http(s) URL\n')
    const session = await run(['clock'], { DCB_SESSION: 'a b' })
    expect([session.code, session.stderr]).toEqual([2, 'dcb: DCB_SESSION "a b" is not a session name: 1-64 characters of A-Z a-z 0-9 . _ -\n'])
    const { dir, cleanup } = tempDir()
    try {
      const file = join(dir, 'url.run.json')
      writeFileSync(file, JSON.stringify({ base_url: 'ftp://x', steps: [{ status: 'x' }] }))
      const r = await run(['run', file])
      expect([r.code, r.stderr]).toEqual([2, `dcb: ${file}: $.base_url: is not an http(s) URL (e.g. http://127.0.0.1:7700)\n`])
    } finally {
      cleanup()
    }
  })

  it('exit 2 for usage errors', async () => {
    expect((await run(['nope'])).code).toBe(2)
    expect((await run(['consent', 'http://x/consent/1', 'maybe'])).code).toBe(2)
    expect((await run(['consent', 'ftp://x/consent/1', 'approve'])).stderr).toMatch(/is not an http\(s\) URL/)
    expect((await run(['clock', 'backwards', '1h'])).code).toBe(2)
    expect((await run(['status', 'x', '--base-url', 'ftp://x'])).code).toBe(2)
    expect((await run(['otp', '601', '--wait', 'soon'])).code).toBe(2)
    // A number is decimal digits (0x10 was taken as 16, 1e1 as 10, ' 5' as 5), as the control API reads one.
    for (const wait of ['0x10', '1e1', ' 5', '+5', ''])
      expect((await run(['otp', '601', '--wait', wait])).stderr).toBe('dcb: --wait must be a number of seconds from 0 to 120\n')
    expect((await run(['logs', '--limit', '1e1'])).stderr).toBe('dcb: --limit "1e1" must be a whole number from 1 to 100000\n')
    const port = await run(['serve', '--port', '0x10', '--in-memory'])
    expect([port.code, port.stderr]).toEqual([2, expect.stringContaining('--port must be a whole number from 0 to 65535')])
  })
})

describe('sandbox commands', () => {
  describe('sms, mo, subscriptions, cancel', () => {
    /** Subscribes 60133456001 by MO keyword; answers the MO's output and the subscription id. */
    const subscribeByMo = async () => {
      await run(['init', '--msisdn', '60133456001', '--service', 'STREAMPLUS', '--country', 'my'])
      const m = await run(['mo', '60133456001', '32123', 'STREAM'])
      return { m, id: /subscription_id\s+(\S+)/.exec(m.stdout)![1]! }
    }

    describe('after a subscription by MO keyword', () => {
      type R = Awaited<ReturnType<typeof run>>
      let m: R, id: string, sms: R, list: R
      beforeAll(async () => {
        await c.control('/reset', {})
        ;({ m, id } = await subscribeByMo())
        sms = await run(['sms', '60133456001'])
        list = await run(['subscriptions', '--msisdn', '60133456001'])
      })

      it('mo subscribes by keyword', () => {
        expect(m.code).toBe(0)
      })

      it('sms shows both directions', () => {
        expect(sms.stdout).toMatch(/← 32123 Welcome to Stream Plus/)
        expect(sms.stdout).toMatch(/→ 32123 STREAM/)
      })

      it('subscriptions lists it', () => {
        expect(list.stdout).toContain(id)
      })
    })

    describe('cancel', () => {
      type R = Awaited<ReturnType<typeof run>>
      let cancel: R, again: R
      beforeAll(async () => {
        await c.control('/reset', {})
        const { id } = await subscribeByMo()
        cancel = await run(['cancel', id])
        again = await run(['cancel', id])
      })

      it('cancels the subscription', () => {
        expect(cancel.code).toBe(0)
        expect(cancel.stdout).toMatch(/status\s+CANCELED/)
      })

      it('a second time exits 1 ALREADY_CANCELED', () => {
        expect(again.code).toBe(1)
        expect(again.stderr).toMatch(/^dcb: ALREADY_CANCELED: /)
      })
    })

    it('mo exits 1 when the charge fails', async () => {
      const failed = await run(['mo', '60133456204', '32123', 'STREAM'])
      expect(failed.code).toBe(1)
      expect(failed.stdout).toContain('charge_failed: NOT_ELIGIBLE')
    })
  })

  it('consent approve prints where the browser goes (exit 0)', async () => {
    const i = JSON.parse((await run(['init', '--msisdn', '359881234001', '--service', 'STREAMPLUS', '--country', 'bg', '--json'])).stdout)
    const r = await run(['consent', i.payload.redirect_url, 'approve'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/303 → \/_sandbox\/return\?status=SUCCESS&subscription_id=/)
  })

  it('consent deny exits 1 with the FAIL return query', async () => {
    const i2 = JSON.parse((await run(['init', '--msisdn', '359881234002', '--service', 'STREAMPLUS', '--country', 'bg', '--json'])).stdout)
    const d = await run(['consent', i2.payload.redirect_url, 'deny', '--json'])
    expect(d.code).toBe(1)
    expect(JSON.parse(d.stdout).query).toMatchObject({ status: 'FAIL', message: 'FAILED_INIT_SUB' })
  })

  it('clock shows the sandbox time', async () => {
    expect((await run(['clock'])).stdout).toMatch(/^\d{4}-\d{2}-\d{2}T/)
  })

  it('clock advance moves the clock', async () => {
    const adv = await run(['clock', 'advance', 'P1D', '--json'])
    expect(JSON.parse(adv.stdout).clock.now).toMatch(/T/)
  })

  it('clock set refuses to go back', async () => {
    const back = await run(['clock', 'set', '2001-01-01'])
    expect(back.code).toBe(1)
    expect(back.stderr).toMatch(/^dcb: CLOCK_BACKWARDS: /)
  })

  it('otp --wait prints the next OTP sent', async () => {
    await withFakeTimers(async (t) => {
      const waiting = run(['otp', '60123456005', '--wait', '5'])
      // The server waits for it (up to 5 s) before the Init sends it.
      expect(await Promise.race([t.next(), waiting])).toBe(5000)
      await c.api('/subscriptions/init', { msisdn: '60123456005', service_code: 'STREAMPLUS', country_code: 'my' })
      const got = await waiting
      expect(got.code).toBe(0)
      expect(got.stdout).toMatch(/^\d{4}\n$/)
    })
  })

  it('otp exits 1 NO_OTP when none was sent', async () => {
    const none = await run(['otp', '60123456006'])
    expect(none.code).toBe(1)
    expect(none.stderr).toMatch(/^dcb: NO_OTP: /)
  })

  it('logs shows the request log', async () => {
    await c.api('/subscriptions/init', { msisdn: '60123456005', service_code: 'STREAMPLUS', country_code: 'my' })
    const logs = await run(['logs'])
    expect(logs.stdout).toMatch(/POST \/subscriptions\/init 200 SUCCESS demo/)
  })

  it('reset exits 0', async () => {
    expect((await run(['reset'])).code).toBe(0)
  })

  it('scenarios --markdown prints the table the README has', async () => {
    const md = await run(['scenarios', '--markdown'])
    const page = readFileSync('docs/reference/magic-endings.md', 'utf8')
    expect(page).toContain(md.stdout.trim())
  })
})

describe('dcb logs --follow', () => {
  it('prints new requests as they come, until stopped', async () => {
    const { spawn } = await import('node:child_process')
    const connected = nextLiveStream(c.sandbox.server)
    const child = spawn(process.execPath, [BIN, 'logs', '--follow', '--limit', '1'], {
      env: { ...process.env, ...env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    try {
      await connected
      await c.api('/subscriptions/status', { subscription_id: 'followed' })
      await outputShows(child, () => out, 'SUBSCRIPTION_NOT_FOUND')
      expect(out).toMatch(/POST \/subscriptions\/status 404 SUBSCRIPTION_NOT_FOUND demo/)
    } finally {
      child.kill()
    }
  })
})

describe('dcb flow', () => {
  it.each([
    ['OTP', '60123456001', 'my'],
    ['PSMS', '60133456001', 'my'],
    ['redirect', '359881234001', 'bg'],
  ])('runs the %s flow end to end with flags, printing each step (numbered without gaps)', async (name, msisdn, country) => {
    const r = await run(['flow', '--msisdn', msisdn, '--service', 'STREAMPLUS', '--country', country])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/1\. Init/)
    const last = name === 'OTP' ? 4 : 3
    expect(r.stdout).toMatch(new RegExp(`${last}\\. Status[\\s\\S]*status\\s+ACTIVE`))
    expect([...r.stdout.matchAll(/^(\d+)\. /gm)].map((m) => Number(m[1]))).toEqual(Array.from({ length: last }, (_, i) => i + 1))
  })

  it('exits 1 when a magic scenario fails the flow', async () => {
    const r = await run(['flow', '--scenario', '201'])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('INSUFFICIENT_FUNDS')
  })
})

describe('dcb run', () => {
  const examples = readdirSync('fixtures/scenarios').filter((f) => f.endsWith('.run.json'))
  it.each(examples)('the example %s passes', async (f) => {
    const r = await run(['run', join('fixtures/scenarios', f)])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/✔ \d+ steps, \d+ expectations? passed/)
  })

  it('stops at the first failed expectation with exit 1', async () => {
    const t = tempDir()
    try {
      const f = join(t.dir, 'ticket.json')
      writeFileSync(
        f,
        JSON.stringify({
          steps: [{ init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } }, { expect: { 'init.status': 'FAIL' } }, { reset: {} }],
        }),
      )
      const r = await run(['run', f])
      expect(r.code).toBe(1)
      expect(r.stderr).toBe('dcb: expectation failed at step 2: init.status is "SUCCESS", expected "FAIL"\n')
      expect(r.stdout).not.toContain('→ reset')
    } finally {
      t.cleanup()
    }
  })

  it('a malformed or missing file is a usage error naming its path', async () => {
    const t = tempDir()
    try {
      const f = join(t.dir, 'ticket.json')
      writeFileSync(f, JSON.stringify({ steps: [{ init: {}, verify: {} }] }))
      const bad = await run(['run', f])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toMatch(/ticket\.json: \$\.steps\[0\]: a step needs exactly one action/)
      expect((await run(['run', join(t.dir, 'missing.json')])).stderr).toMatch(/missing\.json: no such file/)
    } finally {
      t.cleanup()
    }
  })

  it('a passing run words its counts to agree with the number', async () => {
    const t = tempDir()
    try {
      const f = join(t.dir, 'one.json')
      writeFileSync(f, JSON.stringify({ steps: [{ init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } }] }))
      const r = await run(['run', f])
      expect(r.code).toBe(0)
      expect(r.stdout.trim().split('\n').at(-1)).toBe('✔ 1 step, 0 expectations passed')
    } finally {
      t.cleanup()
    }
  })

  it('a rule given as a whole reference is judged once it resolves: an earlier rule added again after a reset', async () => {
    const t = tempDir()
    try {
      const f = join(t.dir, 'again.json')
      const init = { init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } }
      const rule = { id: 'again', match: { msisdn: '60123456001' }, step: 'init', effect: { error: 'BARRED' } }
      writeFileSync(f, JSON.stringify({ steps: [{ as: 'r1', rule }, { reset: {} }, { rule: '${r1.rule}' }, init, { expect: { 'init.message': 'BARRED' } }] }))
      const r = await run(['run', f])
      expect([r.code, r.stderr]).toEqual([0, ''])
      expect(r.stdout.trim().split('\n').at(-1)).toBe('✔ 5 steps, 1 expectation passed')
      // One that resolves to no object is still refused, when it resolves.
      writeFileSync(f, JSON.stringify({ steps: [init, { rule: '${init.message}' }] }))
      const bad = await run(['run', f])
      expect([bad.code, bad.stderr]).toEqual([2, `dcb: ${f}: step 2 (rule): rule needs a rule object (the body of POST /_sandbox/rules)\n`])
    } finally {
      t.cleanup()
    }
  })

  it('an expect on a field the answer lacks says it is missing, with where the path stops (not "got undefined")', async () => {
    const t = tempDir()
    try {
      const f = join(t.dir, 'missing.json')
      const init = { init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } }
      // Steps, the failing check (path and value), and why that path names nothing.
      const cases: [Record<string, unknown>[], string, unknown, string][] = [
        [
          [init],
          'init.payload.subscription_id',
          'x',
          'init.payload has no field "subscription_id" (its fields: verif_request_id, short_code, keyword, carrier_code, redirect_url)',
        ],
        [[{ status: { subscription_id: 'nope' } }], 'status.payload.status', 'ACTIVE', 'status.payload is null'],
        [[{ clock: { advance: 'P1D' } }], 'clock.events.0.type', 'renewed', 'clock.events has no item 0 (it has 0 items)'],
        [[init], 'init.status.code', 1, 'init.status is "SUCCESS", which has no field "code"'],
        // Only the answer's own fields: not a string's length, nor what every object inherits.
        [[init], 'init.status.length', 7, 'init.status is "SUCCESS", which has no field "length"'],
        [
          [init],
          'init.payload.constructor',
          'x',
          'init.payload has no field "constructor" (its fields: verif_request_id, short_code, keyword, carrier_code, redirect_url)',
        ],
      ]
      for (const [steps, path, want, why] of cases) {
        writeFileSync(f, JSON.stringify({ steps: [...steps, { expect: { [path]: want } }] }))
        const r = await run(['run', f])
        expect([r.code, r.stderr]).toEqual([
          1,
          `dcb: expectation failed at step ${steps.length + 1}: ${path} is missing: ${why}; expected ${JSON.stringify(want)}\n`,
        ])
        expect(r.stdout).toContain(`✘ expect ${path} = ${JSON.stringify(want)}, missing: ${why}\n`)
        expect(r.stdout).not.toContain('undefined')
      }
    } finally {
      t.cleanup()
    }
  })

  it('--json gives a missing check its reason in place of got', async () => {
    const t = tempDir()
    try {
      const f = join(t.dir, 'missing.json')
      const init = { init: { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' } }
      writeFileSync(f, JSON.stringify({ steps: [init, { expect: { 'init.status': 'SUCCESS', 'init.status.code': 1 } }] }))
      // --json: a check that passed has its got; the missing one says why, and has no got.
      const json = JSON.parse((await run(['run', f, '--json'])).stdout)
      expect(json.steps.at(-1).expect).toEqual([
        { path: 'init.status', expected: 'SUCCESS', got: 'SUCCESS', pass: true },
        { path: 'init.status.code', expected: 1, missing: 'init.status is "SUCCESS", which has no field "code"', pass: false },
      ])
    } finally {
      t.cleanup()
    }
  })
})

/** Runs dcb on a pseudo-terminal, answering each prompt (text to wait for, keys to type). */
function onTerminal(args: string[], answers: [string, string][]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'python3',
      [join(import.meta.dirname, 'pty_drive.py'), JSON.stringify(answers), '--', process.execPath, BIN, ...args],
      { env: { ...process.env, ...env, CI: '', NO_COLOR: '1' } },
      (err, stdout) => resolve({ code: err ? ((err as any).code ?? 1) : 0, out: stdout }),
    )
  })
}

describe('prompts on a terminal', () => {
  it('asks for missing init options on a pseudo-terminal', async () => {
    const r = await onTerminal(
      ['init'],
      [
        ['MSISDN', '60123456001\r'],
        ['service code', 'STREAMPLUS\r'],
        ['country code', 'my\r'],
      ],
    )
    expect(r.out).toContain('✔ SUCCESS init')
    expect(r.code).toBe(0)
  })

  it('dcb flow prompts for what it lacks, then runs it', async () => {
    const r = await onTerminal(
      ['flow'],
      [
        ['service', '\r'],
        ['which flow', '\r'],
        ['MSISDN', '\r'],
      ],
    )
    expect(r.out).toMatch(/1\. Init 60123456001 STREAMPLUS my/)
    expect(r.out).toMatch(/4\. Status[\s\S]*ACTIVE/)
    expect(r.code).toBe(0)
  })
})

describe('start-up stays light', () => {
  it.each([[['--help']], [['status', 'x']]])('dcb %j loads no server, zod, lowdb, h3 or prompt code', async (args) => {
    const t = tempDir()
    try {
      const trace = join(t.dir, `${args[0]}.txt`)
      await run(args, { DCB_TRACE_FILE: trace, NODE_OPTIONS: `--import=${join(import.meta.dirname, 'trace-loads.mjs')}` })
      const loaded = readFileSync(trace, 'utf8')
      expect(loaded).toContain('commander')
      for (const heavy of ['/h3/', '/zod/', '/lowdb/', '@inquirer', '/msw/', 'serve-', 'dist/index.js']) expect(loaded).not.toContain(heavy)
    } finally {
      t.cleanup()
    }
  })
})
