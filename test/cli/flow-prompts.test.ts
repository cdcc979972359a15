/**
 * Issue 41, `dcb flow` on a pseudo-terminal (the binary, answering its questions): it offers the
 * services the API key can use, checks a typed MSISDN as it is typed (with the reason), proposes a
 * number that no subscription to the service holds, and ends with exit 130 on Ctrl-C.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startClient, type Client } from '../helpers.js'
import { BIN } from './run.js'

let c: Client
beforeAll(async () => {
  c = await startClient()
})
afterAll(() => c.close())
beforeEach(async () => {
  await c.control('/reset', {})
})

const CTRL_C = '\u0003'
const BACKSPACE = '\u007f'

/** Runs dcb on a pseudo-terminal, answering each prompt (text to wait for, keys to type). */
function onTerminal(args: string[], answers: [string, string][]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'python3',
      [join(import.meta.dirname, 'pty_drive.py'), JSON.stringify(answers), '--', process.execPath, BIN, ...args],
      { env: { ...process.env, DCB_BASE_URL: c.url, DCB_API_KEY: undefined, CI: '', NO_COLOR: '1' } },
      (err, stdout) => resolve({ code: err ? ((err as any).code ?? 1) : 0, out: stdout }),
    )
  })
}

/** The choices a select prompt listed (the lines of its first drawing, after the question). */
const choices = (out: string, question: string) => {
  const drawn = out.slice(out.indexOf(`? ${question}`))
  return drawn
    .slice(0, drawn.indexOf('↑↓'))
    .split('\n')
    .slice(1)
    .map((l) => l.replace(/^[❯ ]\s*/, '').trim())
    .filter(Boolean)
}

describe('dcb flow on a terminal', () => {
  describe('at the service question, with a key of each merchant', () => {
    // One run per key, shared: the tests read their output only.
    let demo: { code: number; out: string }
    let other: { code: number; out: string }
    beforeAll(async () => {
      demo = await onTerminal(['flow'], [['service', CTRL_C]])
      // NEWSDAILY is the other merchant's (its Init with the demo key answers 403).
      other = await onTerminal(['flow', '--api-key', 'sandbox-other-key'], [['service', CTRL_C]])
    })

    it("offers only the services of the API key's merchant", () => {
      expect(choices(demo.out, 'service').map((l) => l.split(' ')[0])).toEqual(['STREAMPLUS', 'GAMECLUB', 'QUICKTEST'])
      expect(choices(other.out, 'service').map((l) => l.split(' ')[0])).toEqual(['NEWSDAILY'])
    })

    it('ends on Ctrl-C with exit 130 and one line', () => {
      expect(demo.code).toBe(130)
      expect(demo.out).toMatch(/dcb: canceled\s*$/)
      expect(demo.out).not.toMatch(/Error|\n\s+at /)
      expect(other.code).toBe(130)
    })
  })

  it('tells a key of no merchant before anything is asked', async () => {
    const none = await onTerminal(['flow', '--api-key', 'no-such-key'], [])
    expect(none.out).toContain('dcb: the API key is no key of a merchant in this sandbox: every service would answer 401 UNAUTHORIZED')
    expect(none.code).toBe(2)
  })

  it('Ctrl-C at the MSISDN question ends it too (exit 130), nothing sent', async () => {
    const r = await onTerminal(
      ['flow'],
      [
        ['service', '\r'],
        ['which flow', '\r'],
        ['MSISDN', CTRL_C],
      ],
    )
    expect(r.code).toBe(130)
    expect(r.out).not.toMatch(/Error|\n\s+at /)
    expect((await c.control('/requests')).body.requests).toEqual([])
  })

  it('dcb init: Ctrl-C at its question ends it with exit 130, nothing sent', async () => {
    const r = await onTerminal(['init', '--service', 'STREAMPLUS', '--country', 'my'], [['MSISDN', CTRL_C]])
    expect(r.code).toBe(130)
    expect(r.out).toMatch(/dcb: canceled\s*$/)
    expect((await c.control('/requests')).body.requests).toEqual([])
  })

  describe('an MSISDN typed wrong twice, then right', () => {
    // One run, shared; its requests are read here, before the next test's reset wipes them.
    let r: { code: number; out: string }
    let inits: { msisdn: string }[]
    beforeAll(async () => {
      await c.control('/reset', {})
      r = await onTerminal(
        ['flow'],
        [
          ['service', '\r'],
          ['which flow', '\r'],
          ['MSISDN', '601234567\r'],
          ['has 9 digits', `${BACKSPACE.repeat(9)}447700900001\r`],
          ['does not start with', `${BACKSPACE.repeat(12)}60123456789\r`],
        ],
      )
      inits = (await c.control('/requests')).body.requests.filter((e: { path: string }) => e.path === '/subscriptions/init')
    })

    it('says, as it is typed, why a number is not one of the country', () => {
      // The terminal is 80 columns wide: the reason wraps.
      expect(r.out).toContain('msisdn "601234567" has 9 digits; sbx-my-otp numbers have 11 or 12 (Init would')
      expect(r.out).toContain('msisdn "447700900001" does not start with the calling code 60 of my (Init woul')
      expect(r.out).toMatch(/answer INVALID_MSISDN\)/)
    })

    it('runs the flow with the valid number', () => {
      expect(r.out).toMatch(/1\. Init 60123456789 STREAMPLUS my/)
      expect(r.out).toMatch(/4\. Status[\s\S]*ACTIVE/)
      expect(r.code).toBe(0)
    })

    it('sends only the valid number to the server', () => {
      expect(inits.map((e) => e.msisdn)).toEqual(['60123456789'])
    })
  })

  it('proposes a number no live subscription to the service holds (ACTIVE, or EXPIRED with a retry to come), a canceled one counting as free', async () => {
    // 60123456001: ACTIVE. 60123457001: EXPIRED, its carrier retry pending. 60123458001: canceled.
    await c.subscribe('60123456001')
    await c.subscribe('60123457001')
    expect((await c.control('/rules', { match: { msisdn: '60123457001' }, step: 'renewal', effect: { error: 'INSUFFICIENT_FUNDS' } })).status).toBe(200)
    await c.control('/clock/advance', { by: 'P1M' })
    const failed = (await c.control('/subscriptions?msisdn=60123457001')).body.subscriptions[0]
    expect(failed.status).toBe('EXPIRED')
    expect(failed.next_retry_dt).not.toBe(null)
    const canceled = await c.subscribe('60123458001')
    await c.control(`/subscriptions/${canceled}/cancel`, {})
    // Another service's subscription does not hold the number for STREAMPLUS.
    await c.subscribe('60123458001', 'GAMECLUB')
    const r = await onTerminal(
      ['flow'],
      [
        ['service', '\r'],
        ['which flow', '\r'],
        ['MSISDN', '\r'],
      ],
    )
    expect(r.out).toContain('? MSISDN (60123458001)')
    expect(r.out).toMatch(/1\. Init 60123458001 STREAMPLUS my/)
    expect(r.out).toMatch(/4\. Status[\s\S]*ACTIVE/)
    expect(r.code).toBe(0)
  })
})
