import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { BIN, dcb, serve } from './run.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const post = async (url: string, path: string, body: unknown) =>
  (
    await fetch(url + path, { method: 'POST', headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }, body: JSON.stringify(body) })
  ).json() as Promise<any>

describe('dcb serve', () => {
  describe('on a data file, through a stop and a restart', () => {
    const own = tempDir()
    const data = join(own.dir, 'data', 'sandbox.json')
    let url: string, output: string, v: any, termCode: number | null, dataKept: boolean, lockLeft: boolean
    let againOutput: string, st: any, intCode: number | null
    beforeAll(async () => {
      const s = await serve(['--data', data])
      url = s.url
      output = s.output()
      const init = await post(s.url, '/subscriptions/init', { msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' })
      const otp = await (await fetch(`${s.url}/_sandbox/otp?msisdn=60123456001`)).json()
      v = await post(s.url, '/subscriptions/verify', { verif_request_id: init.payload.verif_request_id, otp: otp.otp })
      termCode = await s.stop('SIGTERM')
      dataKept = existsSync(data)
      lockLeft = existsSync(`${data}.lock`)
      const again = await serve(['--data', data])
      try {
        againOutput = again.output()
        st = await post(again.url, '/subscriptions/status', { subscription_id: v.payload.subscription_id })
      } finally {
        intCode = await again.stop('SIGINT')
      }
    })
    afterAll(() => own.cleanup())

    it('prints the URL', () => {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    })

    it('prints the demo key', () => {
      expect(output).toContain('sandbox-demo-key')
    })

    it('serves the merchant API', () => {
      expect(v.status).toBe('SUCCESS')
    })

    it('shuts down cleanly on SIGTERM, the data file kept, unlocked', () => {
      expect(termCode).toBe(0)
      expect(dataKept).toBe(true)
      expect(lockLeft).toBe(false)
    })

    it('a restart finds what was written before the SIGTERM', () => {
      expect(againOutput).toContain('(1 subscription in the default session)')
      expect(st.payload.status).toBe('ACTIVE')
    })

    it('shuts down cleanly on SIGINT', () => {
      expect(intCode).toBe(0)
    })
  })

  it('refuses a busy port with a clear message instead of moving elsewhere', async () => {
    const s = await serve(['--in-memory'])
    try {
      const port = new URL(s.url).port
      const r = await dcb(['serve', '--in-memory', '--port', port])
      expect(r.code).not.toBe(0)
      expect(r.stderr.trim()).toBe(`dcb: port ${port} on 127.0.0.1 is already in use; stop what runs there or pick another --port`)
    } finally {
      await s.stop()
    }
  })

  it('refuses a data file that another running server holds, naming its pid', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const s = await serve(['--data', data])
    try {
      const r = await dcb(['serve', '--data', data, '--port', '0'])
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(`in use by another dcb server (pid ${s.child.pid})`)
    } finally {
      await s.stop()
    }
  })

  it('takes over a stale lock after a SIGKILL', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const s = await serve(['--data', data])
    await s.stop('SIGKILL')
    const again = await serve(['--data', data])
    await again.stop()
  })

  it('stops on a broken fixture, naming the file with the JSON path', async () => {
    const r = await dcb(['serve', '--in-memory', '--fixtures', 'test/fixtures/broken/bad-schema.json'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/fixture error: test\/fixtures\/broken\/bad-schema\.json: \$\.rules\[0\]\.step: /)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('exits 2 with one line for a bad option', async () => {
    const r = await dcb(['serve', '--port', 'abc'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--port must be a whole number/)
    const u = await dcb(['frobnicate'])
    expect(u.code).toBe(2)
  })
})

describe('dcb seed', () => {
  describe('on a data file a server wrote', () => {
    const own = tempDir()
    const data = join(own.dir, 'served-then-seeded.json')
    type R = Awaited<ReturnType<typeof dcb>>
    let initStatus: number, refused: R, secondCode: number | null, seeded: R, health: any, thirdCode: number | null
    beforeAll(async () => {
      const first = await serve(['--data', data])
      const init = await fetch(`${first.url}/subscriptions/init`, {
        method: 'POST',
        headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
        body: JSON.stringify({ msisdn: '60123456001', service_code: 'STREAMPLUS', country_code: 'my' }),
      })
      initStatus = init.status
      await first.stop('SIGKILL')
      rmSync(`${data}.lock`)
      refused = await dcb(['seed', '--subscriptions', '5', '--data', data])
      const second = await serve(['--data', data])
      secondCode = await second.stop('SIGTERM')
      seeded = await dcb(['seed', '--subscriptions', '5', '--data', data])
      const third = await serve(['--data', data])
      try {
        health = (await (await fetch(`${third.url}/_sandbox/health`)).json()) as any
      } finally {
        thirdCode = await third.stop('SIGTERM')
      }
    })
    afterAll(() => own.cleanup())

    it('refuses it while a crash left its write-ahead log unfolded', () => {
      expect(initStatus).toBe(200)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toMatch(
        /was last served without a clean stop: its write-ahead log .*journal\.\d+ holds changes no snapshot has; start dcb serve on it and stop it/,
      )
    })

    it('adds to it once a server folded the log', () => {
      expect(secondCode).toBe(0)
      expect(seeded.code).toBe(0)
      // The seeded five and the Init's verification, kept through the crash.
      expect(health.sizes.subscriptions).toBe(5)
      expect(health.sizes.verifications).toBe(1)
      expect(thirdCode).toBe(0)
    })
  })

  it('prints its result as JSON with --json', async () => {
    const data = join(tmp.dir, 'seeded-json.json')
    const r = await dcb(['seed', '--subscriptions', '5', '--data', data, '--json'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ seeded: 5, total: 5, data })
  })

  describe('250 subscriptions, then again while a server holds the file', () => {
    const own = tempDir()
    const data = join(own.dir, 'seeded.json')
    type R = Awaited<ReturnType<typeof dcb>>
    let r: R, subs: any[], held: R
    beforeAll(async () => {
      r = await dcb(['seed', '--subscriptions', '250', '--data', data])
      const s = await serve(['--data', data])
      try {
        subs = (await (await fetch(`${s.url}/_sandbox/subscriptions?limit=1000`)).json()).subscriptions
        held = await dcb(['seed', '--subscriptions', '1', '--data', data])
      } finally {
        await s.stop()
      }
    })
    afterAll(() => own.cleanup())

    it('adds many ACTIVE subscriptions with distinct always-succeeds MSISDNs', () => {
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(/^seeded 250 subscriptions/)
      expect(subs).toHaveLength(250)
      const msisdns = new Set(subs.map((x: any) => x.msisdn))
      expect(msisdns.size).toBe(250)
      for (const m of msisdns) expect(m as string).toMatch(/^6012\d{5}0\d{2}$/)
      expect(subs.every((x: any) => x.status === 'ACTIVE')).toBe(true)
    })

    it('refuses a held file', () => {
      expect(held.code).toBe(1)
      expect(held.stderr).toContain('in use by another dcb server')
    })
  })

  it('a SIGTERM stops it between batches, keeping what was seeded in a closed, unlocked file, saying how far it got', async () => {
    const data = join(tmp.dir, 'stopped.json')
    const child = spawn(process.execPath, [BIN, 'seed', '--subscriptions', '5000000', '--data', data], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    // The write-ahead log appears once the data file is open for writes: then the seed is under way.
    const watcher = watch(tmp.dir)
    try {
      while (!existsSync(`${data}.journal.0`)) await new Promise((resolve) => watcher.once('change', resolve))
    } finally {
      watcher.close()
    }
    child.kill('SIGTERM')
    expect(await exited).toBe(143)
    const m = /^dcb: stopped by SIGTERM after (\d+) of 5000000 subscriptions; those are kept in (.+) \((\d+) in all\)\n$/.exec(stderr)
    expect(m, stderr).not.toBeNull()
    expect(m![2]).toBe(data)
    expect(m![3]).toBe(m![1])
    expect(existsSync(`${data}.lock`)).toBe(false)
    const s = await serve(['--data', data])
    try {
      const sessions = (await (await fetch(`${s.url}/_sandbox/sessions`)).json()).sessions
      expect(sessions.find((x: any) => x.name === 'default').subscriptions).toBe(Number(m![1]))
    } finally {
      await s.stop()
    }
  })

  it('spreads the start times over a period with --spread, so renewals fall at distinct times', async () => {
    const data = join(tmp.dir, 'spread.json')
    const before = Date.now()
    const r = await dcb(['seed', '--subscriptions', '40', '--spread', 'P1M', '--data', data])
    expect(r.code).toBe(0)
    const s = await serve(['--data', data])
    try {
      const subs = (await (await fetch(`${s.url}/_sandbox/subscriptions?limit=100`)).json()).subscriptions
      const starts = subs.map((x: any) => Date.parse(x.subscribed_dt.slice(0, 23) + 'Z'))
      expect(new Set(starts).size).toBe(40)
      // From now back to about a month ago, none due yet (each expires a month after its start).
      expect(Math.max(...starts)).toBeGreaterThanOrEqual(before - 1000)
      expect(Math.min(...starts)).toBeLessThan(before - 27 * 86_400_000)
      expect(Math.min(...starts)).toBeGreaterThan(before - 32 * 86_400_000)
      expect(subs.every((x: any) => x.status === 'ACTIVE' && x.charge_count === 1)).toBe(true)
    } finally {
      await s.stop()
    }
  })

  it('refuses a bad --service, --spread or --first-msisdn with one line, without touching the data file', async () => {
    const data = join(tmp.dir, 'untouched.json')
    const bad = await dcb(['seed', '--subscriptions', '5', '--service', 'NOPE', '--data', data])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toBe('dcb: no integration NOPE/my for merchant demo in the sandbox world')
    const spread = await dcb(['seed', '--subscriptions', '5', '--spread', 'soon', '--data', data])
    expect(spread.code).toBe(2)
    expect(spread.stderr).toContain('--spread "soon" is not a duration')
    // Longer than the monthly period: subscriptions already due, all run when a server starts.
    const long = await dcb(['seed', '--subscriptions', '5', '--spread', 'P1Y', '--data', data])
    expect(long.code).toBe(2)
    expect(long.stderr.trim()).toBe('dcb: the spread is longer than the STREAMPLUS period (P1M): some renewals would be due at once')
    const nobody = await dcb(['seed', '--subscriptions', '5', '--first-msisdn', '999000000000', '--data', data])
    expect(nobody.code).toBe(2)
    expect(nobody.stderr.trim()).toBe('dcb: no sandbox carrier owns 999000000000')
    // Ending 301 (and on): renewals that fail, cancellations, delays; seeded numbers keep to 000-099.
    const magic = await dcb(['seed', '--subscriptions', '5', '--first-msisdn', '601234560301', '--data', data])
    expect(magic.stderr.trim()).toBe('dcb: the first MSISDN 601234560301 ends in 301: seeded MSISDNs keep to the endings 000-099, so start at one of them')
    expect(magic.code).toBe(2)
    expect(existsSync(data)).toBe(false)
  })

  it('refuses 1M as ambiguous in --spread, as dcb clock advance does', async () => {
    const data = join(tmp.dir, 'ambiguous.json')
    const spread = await dcb(['seed', '--subscriptions', '5', '--spread', '1M', '--data', data])
    expect([spread.code, spread.stderr]).toEqual([2, 'dcb: --spread "1M" is ambiguous: write PT1M or 1m for minutes, P1M or 1mo for months\n'])
    expect(existsSync(data)).toBe(false)
    // With a space too: the same words, not 'not a duration'.
    const spaced = await dcb(['seed', '--subscriptions', '5', '--spread', '1 M', '--data', data])
    expect([spaced.code, spaced.stderr]).toEqual([2, 'dcb: --spread "1 M" is ambiguous: write PT1M or 1m for minutes, P1M or 1mo for months\n'])
  })

  it('refuses 2M as ambiguous in a fixture duration, as the server does', async () => {
    const fixture = join(tmp.dir, 'cancel.json')
    writeFileSync(fixture, JSON.stringify({ rules: [{ id: 'cancel', match: { ending: '045' }, step: 'activate', effect: { cancel_after: '2M' } }] }))
    const v = await dcb(['fixtures', 'validate', fixture])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain('$.rules[0].effect.cancel_after: "2M" is ambiguous: write PT2M or 2m for minutes, P2M or 2mo for months')
  })

  describe('--country gb, twice over the same numbers', () => {
    const own = tempDir()
    const data = join(own.dir, 'gb.json')
    const files = () =>
      Object.fromEntries(
        readdirSync(own.dir)
          .filter((n) => n.startsWith('gb.json'))
          .map((n) => [n, readFileSync(join(own.dir, n), 'base64')]),
      )
    type R = Awaited<ReturnType<typeof dcb>>
    let first: R, before: Record<string, string>, again: R, after: Record<string, string>, subs: any[]
    beforeAll(async () => {
      first = await dcb(['seed', '--subscriptions', '3', '--country', 'gb', '--data', data])
      before = files()
      again = await dcb(['seed', '--subscriptions', '3', '--country', 'gb', '--data', data])
      after = files()
      const s = await serve(['--data', data])
      try {
        subs = (await (await fetch(`${s.url}/_sandbox/subscriptions?limit=100`)).json()).subscriptions
      } finally {
        await s.stop()
      }
    })
    afterAll(() => own.cleanup())

    it('--country gb alone seeds gb numbers of a gb carrier', () => {
      expect(first.code).toBe(0)
      expect(subs.map((x: any) => `${x.country_code} ${x.carrier_code} ${x.msisdn}`).sort()).toEqual([
        'gb sbx-gb-otp 447700000000',
        'gb sbx-gb-otp 447700000001',
        'gb sbx-gb-otp 447700000002',
      ])
    })

    it('a second seed over the same numbers is refused before anything is written', () => {
      expect([again.code, again.stderr.trim()]).toEqual([
        2,
        'dcb: 447700000000 holds an ACTIVE STREAMPLUS subscription already (a seed before this one?): a second would break ALREADY_SUBSCRIBED; give a --first-msisdn past the numbers seeded before',
      ])
      // Refused before anything is written: no new write-ahead log, no snapshot rewritten, no lock left.
      expect(after).toEqual(before)
    })
  })

  it('--first-msisdn ending in 050: the numbers count on through the endings 000-099 only', async () => {
    const data = join(tmp.dir, 'from-050.json')
    expect((await dcb(['seed', '--subscriptions', '120', '--first-msisdn', '601234560050', '--data', data])).code).toBe(0)
    const s = await serve(['--data', data])
    try {
      const msisdns: string[] = (await (await fetch(`${s.url}/_sandbox/subscriptions?limit=1000`)).json()).subscriptions.map((x: any) => x.msisdn)
      expect(new Set(msisdns).size).toBe(120)
      for (const m of msisdns) expect(m).toMatch(/^60123456\d0\d{2}$/)
      expect(msisdns).toContain('601234560050')
      expect(msisdns).toContain('601234561069')
    } finally {
      await s.stop()
    }
  })
})

describe('dcb fixtures validate', () => {
  it('accepts the default world', async () => {
    const r = await dcb(['fixtures', 'validate', 'fixtures/world.json'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^ok: /)
  })

  const noFixtures = () => {
    const empty = join(tmp.dir, 'no-fixtures')
    mkdirSync(empty)
    writeFileSync(join(empty, 'notes.txt'), 'not a fixture')
    writeFileSync(join(empty, 'ticket.run.json'), '{"steps": []}')
    return { empty, message: `${empty}: a folder with no fixture file (*.json; *.run.json and *.schema.json are skipped)` }
  }

  it('a folder with no fixture file in it is refused by validate (it loaded nothing, saying ok)', async () => {
    const { empty, message } = noFixtures()
    const r = await dcb(['fixtures', 'validate', empty])
    expect(r.stderr).toContain(message)
    expect(r.code).toBe(1)
  })

  it('a folder with no fixture file in it is refused by serve', async () => {
    const { empty, message } = noFixtures()
    const s = await dcb(['serve', '--in-memory', '--port', '0', '--fixtures', empty])
    expect(s.stderr).toContain(`dcb: fixture error: ${message}`)
    expect(s.code).toBe(1)
  })

  it('prints every problem with its file, JSON path, exiting non-zero', async () => {
    const r = await dcb(['fixtures', 'validate', 'test/fixtures/broken/bad-service.json'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('test/fixtures/broken/bad-service.json: $.services[0].merchant: unknown merchant "nobody"')
    expect(r.stderr).toMatch(/4 problems found/)
  })
})
