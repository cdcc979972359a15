/**
 * Issue 43 through the real binary: a rule regex is bounded by what it costs to compile (length,
 * program size as its repeats expand), refused by name the same way over the control API and in a
 * fixture file, and a data file already holding one starts, leaving the rule out and saying so.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { dcb, serve, type Served } from './run.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

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
  it('POST /_sandbox/rules refuses an expanding or too long regex by name, at once, and the server keeps answering', async () => {
    const s = await serve(['--in-memory'])
    try {
      for (const [regex, refusal] of [
        [EXPANDING, SIZE_REFUSAL],
        ['(?:(?:\\d{1,30}){1,30})'.repeat(3), SIZE_REFUSAL],
        [LONG, LENGTH_REFUSAL],
      ] as const) {
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
      // Within the bounds: taken (an MSISDN-sized alternation, a bounded repeat).
      const ok = await fetch(`${s.url}/_sandbox/rules`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ match: { regex: '^60(?<n>[0-9]{1,15})$' }, step: 'init', effect: { error: 'BARRED' } }),
      })
      expect(ok.status).toBe(200)
      expect((await fetch(`${s.url}/_sandbox/rules`)).status).toBe(200)
    } finally {
      await s.stop('SIGKILL')
    }
  }, 30_000)

  it('a fixture file with such a regex is refused with the same text, naming file and path', async () => {
    const file = join(tmp.dir, 'rules.json')
    writeFileSync(file, JSON.stringify({ rules: [{ id: 'wide', match: { regex: EXPANDING }, step: 'init', effect: { error: 'BARRED' } }] }))
    const r = await dcb(['fixtures', 'validate', file])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/\$\.rules\[0\]\.match\.regex: too costly to compile: it expands to about \d+ instructions/)
    const started = await dcb(['serve', '--in-memory', '--port', '0', '--fixtures', file])
    expect(started.code).toBe(1)
    expect(started.stderr).toMatch(SIZE_REFUSAL)
  })

  it('a data file holding such a rule starts, leaves the rule out and says so; the rule can be removed', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    // Matches MSISDNs Init takes: the call it bars succeeds once the rule is left out.
    const placeholder = '^6012345600(7|8)$'
    let s = await serve(['--data', data])
    const add = (session?: string) =>
      fetch(`${s.url}/_sandbox/rules`, {
        method: 'POST',
        headers: { ...H, ...(session ? { 'x-dcb-session': session } : {}) },
        body: JSON.stringify({ id: 'wide', match: { regex: placeholder }, step: ['init', 'renewal'], effect: { error: 'BARRED' } }),
      })
    expect((await add()).status).toBe(200)
    expect((await add('alice')).status).toBe(200)
    expect(await s.stop()).toBe(0)
    // As an older version, which took any regex RE2 compiles, would have stored it.
    let replaced = 0
    for (const f of files(tmp.dir)) {
      const text = readFileSync(f, 'utf8')
      if (!text.includes(JSON.stringify(placeholder))) continue
      writeFileSync(f, text.split(JSON.stringify(placeholder)).join(JSON.stringify(EXPANDING)))
      replaced++
    }
    expect(replaced).toBeGreaterThan(0)
    s = await serve(['--data', data])
    try {
      await said(s, /session "alice": runtime rule wide is left out/)
      expect(s.output()).toMatch(
        /dcb: session "default": runtime rule wide is left out \(match\.regex: too costly to compile: .*\); remove it with dcb rules remove wide\n/,
      )
      expect(s.output()).toContain('remove it with dcb rules remove wide --session alice')
      const init = await fetch(`${s.url}/subscriptions/init`, {
        method: 'POST',
        headers: { ...H, 'api-key': 'sandbox-demo-key' },
        body: '{"msisdn":"60123456007","service_code":"STREAMPLUS","country_code":"my"}',
      })
      const answer = await init.json()
      expect(answer.message).not.toBe('BARRED')
      expect(answer.status).toBe('SUCCESS')
      const listed = await (await fetch(`${s.url}/_sandbox/rules`)).json()
      expect(listed.rules.map((r: { id: string }) => r.id)).not.toContain('wide')
      expect((await fetch(`${s.url}/_sandbox/rules/wide`, { method: 'DELETE' })).status).toBe(200)
    } finally {
      await s.stop()
    }
    s = await serve(['--data', data])
    try {
      expect((await fetch(`${s.url}/_sandbox/health`)).status).toBe(200)
      expect(s.output()).not.toContain('session "default": runtime rule wide')
    } finally {
      await s.stop()
    }
  }, 60_000)

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
