/**
 * Every command that reads a session says on stderr when the --session or DCB_SESSION it names did not
 * exist: the read makes it (the contract), so a mistyped name would show an empty result as if it were
 * the session's. Through the binary against a real server over loopback.
 */
import { describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const run = (args: string[], env: Record<string, string> = {}) =>
  dcb(args, { env: { DCB_BASE_URL: c.url, DCB_API_KEY: undefined, DCB_ADMIN_TOKEN: undefined, DCB_SESSION: undefined, ...env } })
const warning = (name: string, from = '--session') =>
  `dcb: warning: session "${name}" (${from}) did not exist: this read makes it, empty (a mistyped name? the sessions are listed by GET /_sandbox/sessions)\n`

/** Each read command, with what it answers in a session just made (exit code, and a piece of stdout). */
const READS: [string[], number, RegExp][] = [
  [['logs'], 0, /the request log is empty/],
  [['subscriptions'], 0, /^no subscriptions\n$/],
  [['sms', '60123456001'], 0, /^no messages for 60123456001\n$/],
  [['otp', '60123456001'], 1, /^$/],
  [['subscription', 'SUB-NONE'], 1, /^$/],
  [['rules'], 0, /^no runtime rules\n/],
  [['rules', 'list'], 0, /^no runtime rules\n/],
  [['scenarios'], 0, /^ending 000-099 /],
  [['world'], 0, /^Carriers\n/],
  [['clock'], 0, /^\d{4}-/],
  [['coverage'], 0, /no merchant has traffic|^$/],
]

describe('a read command with --session NAME of a session that did not exist', () => {
  it.each(READS)('dcb %j says so on stderr, once; it answers as before', async (args, code, stdout) => {
    const name = `typo-${args.join('-')}`
    const first = await run([...args, '--session', name])
    expect(first.code).toBe(code)
    expect(first.stdout).toMatch(stdout)
    expect(first.stderr.startsWith(warning(name))).toBe(true)
    // The read made it: the next one reads it without a word.
    const again = await run([...args, '--session', name])
    expect(again.stderr).not.toMatch(/warning/)
  })

  it('DCB_SESSION is named as where the name came from; a session a write made, and the default session, are read without a word', async () => {
    const env = await run(['subscriptions'], { DCB_SESSION: 'typo-env' })
    expect([env.code, env.stderr]).toEqual([0, warning('typo-env', 'DCB_SESSION')])
    const made = await run(['init', '--msisdn', '60123456003', '--service', 'STREAMPLUS', '--country', 'my', '--session', 'used-1'])
    expect([made.code, made.stderr]).toEqual([0, ''])
    for (const args of [['logs'], ['sms', '60123456003'], ['subscriptions'], ['otp', '60123456003']]) {
      const r = await run([...args, '--session', 'used-1'])
      expect([args, r.code, r.stderr]).toEqual([args, 0, ''])
    }
    expect((await run(['subscriptions'])).stderr).toBe('')
  })

  it('a command that writes makes the session on purpose: no warning', async () => {
    const r = await run(['reset', '--session', 'fresh-by-reset'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    const mo = await run(['mo', '60133456004', '32123', 'STREAM', '--session', 'fresh-by-mo'])
    expect([mo.code, mo.stderr]).toEqual([0, ''])
  })
})
