/**
 * A flag a command accepts and then does not use looks like it took effect (`dcb coverage --api-key K`
 * showed every merchant). Each such flag is refused by name, exit 2, before any call; the flags a
 * command does use keep working. Through the binary against a real server over loopback.
 */
import { describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'
import { dcb } from './run.js'

const c = useSandbox()
const env = () => ({ DCB_BASE_URL: c.url, DCB_API_KEY: undefined, DCB_ADMIN_TOKEN: undefined, DCB_SESSION: undefined })
const run = (args: string[]) => dcb(args, { env: env() })

/** The request log's entries: what reached the server. */
const journal = async () => (await c.control('/requests')).body.requests as { path: string }[]

describe('a credential a command cannot use is refused by name', () => {
  it('--api-key on a control command (coverage, mo, logs, …): exit 2, one line, nothing sent', async () => {
    const coverage = await run(['coverage', '--api-key', 'sandbox-other-key'])
    expect([coverage.code, coverage.stdout]).toEqual([2, ''])
    expect(coverage.stderr).toBe(
      "dcb: --api-key does not apply to dcb coverage: it calls the control API, which takes no merchant key (from another machine: --admin-token); one merchant's: --merchant ID (see dcb --help)\n",
    )
    const mo = await run(['mo', '60133456001', '32123', 'STREAM', '--api-key', 'sandbox-other-key'])
    expect([mo.code, mo.stderr]).toEqual([
      2,
      'dcb: --api-key does not apply to dcb mo: it calls the control API, which takes no merchant key (from another machine: --admin-token) (see dcb --help)\n',
    ])
    for (const args of [['logs'], ['subscriptions'], ['otp', '60123456001'], ['clock'], ['reset'], ['world'], ['scenarios'], ['rules']]) {
      const r = await run([...args, '--api-key', 'k'])
      expect([args[0], r.code, r.stderr]).toEqual([args[0], 2, expect.stringMatching(new RegExp(`^dcb: --api-key does not apply to dcb ${args[0]}: `))])
    }
    expect(await journal()).toEqual([])
    // From the environment it is no refusal: DCB_API_KEY is shared by every command of a shell.
    const fromEnv = await dcb(['coverage'], { env: { ...env(), DCB_API_KEY: 'sandbox-other-key' } })
    expect(fromEnv.code).toBe(0)
  })

  it('--admin-token on verify or status (the merchant API) is refused with exit 2 before anything is sent', async () => {
    const verify = await run(['verify', '--id', 'x', '--otp', '1234', '--admin-token', 't'])
    expect([verify.code, verify.stderr]).toEqual([
      2,
      'dcb: --admin-token does not apply to dcb verify: it calls the merchant API, which takes the merchant key (--api-key), not the admin token (see dcb --help)\n',
    ])
    expect((await run(['status', 'x', '--admin-token', 't'])).code).toBe(2)
    expect(await journal()).toEqual([])
  })

  it('--api-key or --admin-token on consent (the page) is refused with exit 2 before anything is sent', async () => {
    for (const flag of ['--api-key', '--admin-token']) {
      const consent = await run(['consent', 'some-id', 'approve', flag, 'k'])
      expect([consent.code, consent.stderr]).toEqual([
        2,
        `dcb: ${flag} does not apply to dcb consent: it posts to the consent page, the subscriber's side, which takes no key or token (see dcb --help)\n`,
      ])
    }
    expect(await journal()).toEqual([])
  })

  it('the flags a command uses still work', async () => {
    const init = await run([
      'init',
      '--msisdn',
      '60123456001',
      '--service',
      'NEWSDAILY',
      '--country',
      'my',
      '--api-key',
      'sandbox-other-key',
      '--admin-token',
      't',
    ])
    expect(init.code).toBe(0)
    const status = await run(['status', '00000000-0000-4000-8000-000000000000', '--api-key', 'sandbox-other-key'])
    expect(status.stdout).toMatch(/SUBSCRIPTION_NOT_FOUND/)
  })

  it('the help of a command lists only the flags it uses', async () => {
    const help = await run(['coverage', '--help'])
    expect(help.stdout).toContain('--admin-token')
    expect(help.stdout).not.toContain('--api-key')
    expect((await run(['consent', '--help'])).stdout).not.toMatch(/--api-key|--admin-token/)
  })
})

describe('other flags that were accepted and dropped', () => {
  it('logs --all with --limit, clock --all without a move, scenarios --markdown with --json: exit 2 naming them', async () => {
    const logs = await run(['logs', '--all', '--limit', '5'])
    expect([logs.code, logs.stderr]).toEqual([2, 'dcb: --all shows every entry the request log holds: it cannot go with --limit (drop one of them)\n'])
    const clock = await run(['clock', '--all'])
    expect([clock.code, clock.stderr]).toEqual([2, 'dcb: --all lists the events of a move: dcb clock advance DURATION --all, or clock set TIME --all\n'])
    const scenarios = await run(['scenarios', '--markdown', '--json'])
    expect([scenarios.code, scenarios.stderr]).toEqual([2, 'dcb: --markdown and --json are two forms of the same list: give one\n'])
    // Each alone still works.
    expect((await run(['logs', '--limit', '5'])).code).toBe(0)
    expect((await run(['logs', '--all'])).code).toBe(0)
    expect((await run(['clock', 'advance', '1h', '--all'])).code).toBe(0)
  })

  it('flow --otp for a number of a PSMS carrier, --deny for one of an OTP carrier: exit 2 before the Init', async () => {
    const otp = await run(['flow', '--msisdn', '60133456001', '--otp', '1234'])
    expect([otp.code, otp.stderr]).toEqual([
      2,
      'dcb: --otp is for the OTP flow: 60133456001 is of sbx-my-psms, whose flow is PSMS (drop --otp, or give a number of a carrier whose flow is OTP)\n',
    ])
    const deny = await run(['flow', '--msisdn', '60123456001', '--deny'])
    expect([deny.code, deny.stderr]).toEqual([
      2,
      'dcb: --deny is for the redirect flow: 60123456001 is of sbx-my-otp, whose flow is OTP (drop --deny, or give a number of a carrier whose flow is redirect)\n',
    ])
    expect(await journal()).toEqual([])
    const denied = await run(['flow', '--msisdn', '359883456001', '--deny'])
    expect(denied.stdout).toMatch(/denies on the consent page/)
  })

  it('run --fixtures/--clock with --admin-token or --timeout (no server to open or wait for): exit 2 naming them', async () => {
    const r = await run(['run', 'no-such-file.json', '--clock', '2026-01-31T00:00:00', '--admin-token', 't', '--timeout', '5'])
    expect([r.code, r.stderr]).toEqual([2, 'dcb: --clock runs a fresh in-process sandbox: --admin-token, --timeout are for a running server\n'])
  })
})
