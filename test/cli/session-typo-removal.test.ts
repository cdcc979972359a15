/**
 * The commands that only remove or clear (rules remove, rules clear, cancel) in a session named by
 * --session or DCB_SESSION that does not exist: said on stderr by name, not answered as of an empty
 * session ("removed 0", not found), which hid a mistyped name; and the session is not made. A `dcb mo`
 * STOP that found nothing in a session it made says so too. `.` and
 * `..`, which cannot name a new session, are refused in one line by every command. Through the binary
 * against a real `dcb serve`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dcb, serve, type Served } from './run.js'

let server: Served
beforeAll(async () => {
  server = await serve(['--in-memory'])
})
afterAll(async () => {
  await server.stop()
})

const run = (args: string[], env: Record<string, string> = {}) =>
  dcb(args, { env: { DCB_BASE_URL: server.url, DCB_API_KEY: undefined, DCB_ADMIN_TOKEN: undefined, DCB_SESSION: undefined, ...env } })
const MISTYPED = '(a mistyped name? the sessions are listed by GET /_sandbox/sessions)'
const sessions = async () => ((await (await fetch(`${server.url}/_sandbox/sessions`)).json()) as { sessions: { name: string }[] }).sessions.map((s) => s.name)
const RULE = JSON.stringify({ id: 'barred', step: 'init', effect: { error: 'BARRED' } })

describe('a command that removes or clears, in a session that does not exist', () => {
  it('dcb rules remove in a missing session exits 1 saying it does not exist, without making it', async () => {
    const r = await run(['rules', 'remove', 'barred', '--session', 'typo-remove'])
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `dcb: session "typo-remove" (--session) does not exist: runtime rule "barred" was not removed ${MISTYPED}\n`,
    })
    const env = await run(['rules', 'remove', 'barred', '--json'], { DCB_SESSION: 'typo-remove-env' })
    expect(env).toEqual({
      code: 1,
      stdout: '',
      stderr: `dcb: session "typo-remove-env" (DCB_SESSION) does not exist: runtime rule "barred" was not removed ${MISTYPED}\n`,
    })
    expect(await sessions()).not.toContain('typo-remove')
    expect(await sessions()).not.toContain('typo-remove-env')
  })

  it('dcb rules clear in a missing session exits 0 with a warning that it does not exist (nothing is in force there, as asked), without making it', async () => {
    const warning = (name: string, from = '--session') => `dcb: warning: session "${name}" (${from}) does not exist: no runtime rules to clear ${MISTYPED}\n`
    const r = await run(['rules', 'clear', '--session', 'typo-clear'])
    expect(r).toEqual({ code: 0, stdout: '✔ removed 0 runtime rule(s)\n', stderr: warning('typo-clear') })
    const json = await run(['rules', 'clear', '--json'], { DCB_SESSION: 'typo-clear' })
    expect([json.code, JSON.parse(json.stdout), json.stderr]).toEqual([0, { deleted: 0 }, warning('typo-clear', 'DCB_SESSION')])
    expect(await sessions()).not.toContain('typo-clear')
  })

  it('dcb cancel in a missing session exits 1 saying it does not exist, not SUBSCRIPTION_NOT_FOUND, without making it', async () => {
    const r = await run(['cancel', 'SUB-1', '--session', 'typo-cancel'])
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `dcb: session "typo-cancel" (--session) does not exist: subscription SUB-1 was not canceled ${MISTYPED}\n`,
    })
    expect(await sessions()).not.toContain('typo-cancel')
  })

  it('in a session that exists they work as before: clear of an empty one exits 0 without a word, an unknown rule or subscription is not found', async () => {
    const s = ['--session', 'there']
    expect(await run(['rules', 'add', RULE, ...s])).toMatchObject({ code: 0, stderr: '' })
    expect(await run(['rules', 'remove', 'barred', ...s])).toEqual({ code: 0, stdout: '✔ removed 1 runtime rule(s)\n', stderr: '' })
    expect(await run(['rules', 'clear', ...s])).toEqual({ code: 0, stdout: '✔ removed 0 runtime rule(s)\n', stderr: '' })
    expect(await run(['rules', 'remove', 'barred', ...s])).toEqual({ code: 1, stdout: '', stderr: 'dcb: RULE_NOT_FOUND: no runtime rule "barred"\n' })
    const cancel = await run(['cancel', 'SUB-1', ...s])
    expect([cancel.code, cancel.stderr]).toEqual([1, 'dcb: SUBSCRIPTION_NOT_FOUND: no subscription SUB-1\n'])
    // The default session is always there: nothing is asked or said about it.
    expect(await run(['rules', 'clear'])).toEqual({ code: 0, stdout: '✔ removed 0 runtime rule(s)\n', stderr: '' })
  })
})

describe('dcb mo in a session that does not exist', () => {
  it('a STOP that found nothing there exits 0 with a warning that the STOP made the session', async () => {
    const stop = await run(['mo', '60133456011', '32123', 'STOP', '--session', 'typo-stop'])
    expect([stop.code, stop.stderr]).toEqual([
      0,
      `dcb: warning: session "typo-stop" (--session) did not exist: this STOP made it, and found nothing to stop ${MISTYPED}\n`,
    ])
    expect(stop.stdout).toMatch(/^• stop\n/)
  })

  it('a STOP in a session that was there says nothing', async () => {
    // The session is there now (the MO is a write): the same STOP again is a STOP with nothing to stop, no more.
    expect(await run(['mo', '60133456011', '32123', 'STOP', '--session', 'typo-stop'])).toMatchObject({ code: 0, stderr: '' })
  })

  it('a keyword starts a session as any write does, without a word', async () => {
    const sub = await run(['mo', '60133456012', '32123', 'STREAM', '--session', 'new-by-mo'])
    expect([sub.code, sub.stderr]).toEqual([0, ''])
    expect(await sessions()).toEqual(expect.arrayContaining(['typo-stop', 'new-by-mo']))
  })
})

describe('a session named . or .., which cannot name a new session', () => {
  const refusal = (dots: string) =>
    `"${dots}" cannot name a new session: URL clients read . and .. in /_sandbox/sessions/${dots} as path steps, so it could never be deleted; use another name`

  it('is refused in one line with exit 1 by every command that reads or removes', async () => {
    for (const dots of ['.', '..']) {
      for (const args of [['logs'], ['otp', '60123456001'], ['rules', 'clear'], ['rules', 'remove', 'barred'], ['cancel', 'SUB-1']]) {
        const r = await run([...args, '--session', dots])
        expect([args, r]).toEqual([args, { code: 1, stdout: '', stderr: `dcb: session "${dots}" (--session) does not exist, and ${refusal(dots)}\n` }])
      }
    }
  })

  it('is refused with exit 1 by the server for a write, in its words', async () => {
    for (const dots of ['.', '..']) {
      const reset = await run(['reset', '--session', dots])
      expect(reset).toEqual({ code: 1, stdout: '', stderr: `dcb: BAD_REQUEST: ${refusal(dots)}\n` })
      const init = await run(['init', '--msisdn', '60123456001', '--service', 'STREAMPLUS', '--country', 'my', '--session', dots])
      expect([init.code, init.stdout, init.stderr]).toEqual([1, `✘ FAIL init: BAD_REQUEST (HTTP 400): ${refusal(dots)}\n`, ''])
    }
  })

  it('is made by none of those commands', async () => {
    expect((await sessions()).filter((name) => name === '.' || name === '..')).toEqual([])
  })
})
