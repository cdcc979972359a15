/**
 * Issue 43 through the real binary: a rule regex is bounded by what it costs to compile (length,
 * program size as its repeats expand), refused by name the same way over the control API and in a
 * fixture file, and a data file already holding one starts, leaving the rule out and saying so.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { dcb, serve, type Served } from './run.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())

const H = { 'content-type': 'application/json' }
/** 390 characters that compile to about 60,000 instructions (half a second and 50 MiB each, unbounded). */
const EXPANDING = '[0-9]{1,999}'.repeat(30)
const LONG = `^(${Array.from({ length: 60 }, (_, i) => `601234${String(i).padStart(5, '0')}`).join('|')})$`
const SIZE_REFUSAL = /match\.regex: too costly to compile: it expands to about \d+ instructions \(repeat bounds multiply\), the most a rule regex takes is 1000/
const LENGTH_REFUSAL = /match\.regex: too long: \d+ characters, the most a rule regex takes is 500/

/** Every file under `dir`. */
const files = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]))

/** Resolves once the server's output matches `re` (it is written as start-up ends). */
const said = (s: Served, re: RegExp) =>
  new Promise<void>((resolve) => {
    const look = () => re.test(s.output()) && (s.child.stderr!.off('data', look), resolve())
    s.child.stderr!.on('data', look)
    look()
  })

describe('rule regexes are bounded by what they cost', () => {
  describe('POST /_sandbox/rules', () => {
    // One server; the tests run in order, the last one asking it after the refusals.
    let s: Served
    beforeAll(async () => {
      s = await serve(['--in-memory'])
    })
    afterAll(() => s?.stop('SIGKILL'))
    const refuses = async (regex: string, refusal: RegExp) => {
      const r = await fetch(`${s.url}/_sandbox/rules`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ match: { regex }, step: 'init', effect: { error: 'BARRED' } }),
        signal: AbortSignal.timeout(5_000),
      })
      expect(r.status).toBe(400)
      const body = await r.json()
      expect(body.error).toBe('BAD_RULE')
      expect(body.message).toMatch(refusal)
    }

    it('refuses an expanding regex by name, at once', async () => {
      for (const regex of [EXPANDING, '(?:(?:\\d{1,30}){1,30})'.repeat(3)]) await refuses(regex, SIZE_REFUSAL)
    }, 30_000)

    it('refuses a too long regex by name, at once', async () => {
      await refuses(LONG, LENGTH_REFUSAL)
    })

    it('keeps answering after the refusals, taking a regex within the bounds', async () => {
      // An MSISDN-sized alternation, a bounded repeat.
      const ok = await fetch(`${s.url}/_sandbox/rules`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ match: { regex: '^60(?<n>[0-9]{1,15})$' }, step: 'init', effect: { error: 'BARRED' } }),
      })
      expect(ok.status).toBe(200)
      expect((await fetch(`${s.url}/_sandbox/rules`)).status).toBe(200)
    })
  })

  describe('a fixture file with such a regex', () => {
    const file = join(tmp.dir, 'rules.json')
    beforeAll(() => {
      writeFileSync(file, JSON.stringify({ rules: [{ id: 'wide', match: { regex: EXPANDING }, step: 'init', effect: { error: 'BARRED' } }] }))
    })

    it('is refused by dcb fixtures validate, naming the path in the file', async () => {
      const r = await dcb(['fixtures', 'validate', file])
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/\$\.rules\[0\]\.match\.regex: too costly to compile: it expands to about \d+ instructions/)
    })

    it('is refused by dcb serve with the same text', async () => {
      const started = await dcb(['serve', '--in-memory', '--port', '0', '--fixtures', file])
      expect(started.code).toBe(1)
      expect(started.stderr).toMatch(SIZE_REFUSAL)
    })
  })

  describe('a data file holding such a rule', () => {
    // The tests are the steps of one flow on one data file: they run in order, each after the last.
    const dir = tempDir()
    const data = join(dir.dir, 'sandbox.json')
    // Matches MSISDNs Init takes: the call it bars succeeds once the rule is left out.
    const placeholder = '^6012345600(7|8)$'
    let s: Served | undefined
    beforeAll(async () => {
      const first = await serve(['--data', data])
      const add = (session?: string) =>
        fetch(`${first.url}/_sandbox/rules`, {
          method: 'POST',
          headers: { ...H, ...(session ? { 'x-dcb-session': session } : {}) },
          body: JSON.stringify({ id: 'wide', match: { regex: placeholder }, step: ['init', 'renewal'], effect: { error: 'BARRED' } }),
        })
      expect((await add()).status).toBe(200)
      expect((await add('alice')).status).toBe(200)
      expect(await first.stop()).toBe(0)
      // As an older version, which took any regex RE2 compiles, would have stored it.
      let replaced = 0
      for (const f of files(dir.dir)) {
        const text = readFileSync(f, 'utf8')
        if (!text.includes(JSON.stringify(placeholder))) continue
        writeFileSync(f, text.split(JSON.stringify(placeholder)).join(JSON.stringify(EXPANDING)))
        replaced++
      }
      expect(replaced).toBeGreaterThan(0)
    })
    afterAll(async () => {
      await s?.stop()
      dir.cleanup()
    })

    it('starts, saying for each session the rule is left out and how to remove it', async () => {
      s = await serve(['--data', data])
      await said(s, /session "alice": runtime rule wide is left out/)
      expect(s.output()).toMatch(
        /dcb: session "default": runtime rule wide is left out \(match\.regex: too costly to compile: .*\); remove it with dcb rules remove wide\n/,
      )
      expect(s.output()).toContain('remove it with dcb rules remove wide --session alice')
    })

    it('leaves the rule out', async () => {
      const init = await fetch(`${s!.url}/subscriptions/init`, {
        method: 'POST',
        headers: { ...H, 'api-key': 'sandbox-demo-key' },
        body: '{"msisdn":"60123456007","service_code":"STREAMPLUS","country_code":"my"}',
      })
      const answer = await init.json()
      expect(answer.message).not.toBe('BARRED')
      expect(answer.status).toBe('SUCCESS')
      const listed = await (await fetch(`${s!.url}/_sandbox/rules`)).json()
      expect(listed.rules.map((r: { id: string }) => r.id)).not.toContain('wide')
    })

    it('lets the rule be removed, for good', async () => {
      expect((await fetch(`${s!.url}/_sandbox/rules/wide`, { method: 'DELETE' })).status).toBe(200)
      await s!.stop()
      s = await serve(['--data', data])
      expect((await fetch(`${s.url}/_sandbox/health`)).status).toBe(200)
      expect(s.output()).not.toContain('session "default": runtime rule wide')
    })
  })

  it('all sessions together hold regexes up to one budget: past it refused by name, room back once a session goes', async () => {
    const s = await serve(['--in-memory'])
    const add = (session: string, i: number) =>
      fetch(`${s.url}/_sandbox/rules`, {
        method: 'POST',
        headers: { ...H, 'x-dcb-session': session },
        // 983 instructions each (the most one rule takes is 1,000), each pattern its own.
        body: JSON.stringify({ match: { regex: `^${i}\\d{1,490}` }, step: 'init', effect: { error: 'BARRED' } }),
      })
    try {
      let taken = 0
      let refused: { error: string; message: string } | undefined
      for (let i = 0; !refused && i < 400; i++) {
        const r = await add(`team-${i % 3}`, i)
        if (r.status === 200) taken++
        else {
          expect(r.status).toBe(400)
          refused = await r.json()
        }
      }
      // 200,000 instructions in all: 203 such rules, whatever the sessions they are in.
      expect(taken).toBe(203)
      expect(refused!.error).toBe('BAD_RULE')
      expect(refused!.message).toMatch(
        /^match\.regex: the runtime rules of all sessions hold regexes of \d+ instructions, and this one adds \d+: the most the sandbox holds is 200000;/,
      )
      // The same pattern again costs nothing: another session takes it.
      expect((await add('team-1', 0)).status).toBe(200)
      expect((await fetch(`${s.url}/_sandbox/sessions/team-0`, { method: 'DELETE' })).status).toBe(200)
      expect((await add('team-4', 1000)).status).toBe(200)
    } finally {
      await s.stop('SIGKILL')
    }
  }, 60_000)
})
