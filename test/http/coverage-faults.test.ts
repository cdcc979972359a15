/**
 * What coverage counts for an answer a rule replaced, one case at a time, through the control API of
 * a real server. A fault or a gateway's answer `before` counts `op.fault` or `op.gateway` only: the
 * 500 ERROR it cut was never seen. `after`, the call was done: its own outcome counts too, and a 500
 * `after` counts `op.ERROR_500` beside it. A Status fault counts `status.fault` only and reconciles
 * nothing. A retry after a fault that sent no status is no FAST_RETRY; a lost answer a rule cut is no
 * LOST_ACTIVATION.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { useSandbox } from '../helpers.js'

const c = useSandbox({ clock: '2026-01-31T09:00:00' })

const my = (ending: string) => `60123456${ending}`
/** A merchant call whose connection may fail: answers the HTTP status, or 'network' when no answer came. */
async function call(op: 'init' | 'verify' | 'status', body: unknown): Promise<number | 'network'> {
  return c.api(`/subscriptions/${op}`, body).then(
    (r) => r.status,
    () => 'network' as const,
  )
}
const init = (msisdn: string) => call('init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
/** An Init answered SUCCESS, and the OTP it sent. */
async function started(msisdn: string): Promise<{ verif_request_id: string; otp: string }> {
  const r = await c.api('/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
  expect(r.body.status).toBe('SUCCESS')
  return { verif_request_id: r.body.payload.verif_request_id, otp: (await c.control(`/otp?msisdn=${msisdn}`)).body.otp }
}
const rule = async (id: string, ending: string, step: string, effect: Record<string, unknown>) =>
  expect((await c.control('/rules', { id, match: { ending }, step, effect })).status).toBe(200)

/** demo's outcomes seen (id: count) and findings (code: count). */
async function seen(): Promise<{ outcomes: Record<string, number>; findings: Record<string, number> }> {
  const [m] = (await c.control('/coverage?merchant=demo')).body.coverage
  return {
    outcomes: Object.fromEntries(m.outcomes.filter((o: any) => o.count).map((o: any) => [o.id, o.count])),
    findings: Object.fromEntries(m.findings.map((f: any) => [f.code, f.count])),
  }
}
/** Waits for the counts (an answer cut by a fault is counted once the server saw it go). */
const counted = (outcomes: Record<string, number>, findings: Record<string, number> = {}) => expect.poll(seen, { interval: 20 }).toEqual({ outcomes, findings })
/** Waits for the outcomes alone, for a test that asserts the findings next (or not at all). */
const outcomesCounted = (outcomes: Record<string, number>) => expect.poll(async () => (await seen()).outcomes, { interval: 20 }).toEqual(outcomes)

describe('Init', () => {
  const faultBefore = async () => expect(await init(my('601'))).toBe('network')

  it('a fault before (601: reset) counts init.fault only', async () => {
    await faultBefore()
    await counted({ 'init.fault': 1 })
  })

  it('the retry at once after a fault before is no FAST_RETRY', async () => {
    await faultBefore()
    await counted({ 'init.fault': 1 })
    expect(await init(my('601'))).toBe(200)
    await counted({ 'init.otp': 1, 'init.fault': 1 })
  })

  it("a fault after (602: close, the OTP sent) counts the Init's own outcome too", async () => {
    expect(await init(my('602'))).toBe('network')
    await counted({ 'init.otp': 1, 'init.fault': 1 })
  })

  it('a gateway before (603: 429) counts init.gateway only', async () => {
    expect(await init(my('603'))).toBe(429)
    await counted({ 'init.gateway': 1 })
  })

  it("a gateway after counts the Init's own outcome too", async () => {
    await rule('gw-after', '081', 'init', { http: 503, when: 'after' })
    expect(await init(my('081'))).toBe(503)
    await counted({ 'init.otp': 1, 'init.gateway': 1 })
  })

  /** Rules for a 500 after (082) and before (083); the Init for 082. */
  async function fiveHundredAfter() {
    await rule('500-after', '082', 'init', { http: 500, when: 'after' })
    await rule('500-before', '083', 'init', { http: 500, body: 'empty' })
    expect(await init(my('082'))).toBe(500)
  }

  it("a 500 after counts init.ERROR_500 (what the merchant got) beside the Init's own outcome", async () => {
    await fiveHundredAfter()
    await counted({ 'init.otp': 1, 'init.ERROR_500': 1 })
  })

  it('a 500 before counts init.ERROR_500 only', async () => {
    await fiveHundredAfter()
    await counted({ 'init.otp': 1, 'init.ERROR_500': 1 })
    expect(await init(my('083'))).toBe(500)
    await counted({ 'init.otp': 1, 'init.ERROR_500': 2 })
  })

  it("the api step's fault counts as the call's: init.fault", async () => {
    await rule('api-fault', '084', 'api', { fault: 'garbage' })
    expect(await init(my('084'))).toBe('network')
    await counted({ 'init.fault': 1 })
  })
})

describe('Verify', () => {
  /** A fault before (rule v-reset, 085): answers the verification it cut. */
  async function faultBefore() {
    await rule('v-reset', '085', 'verify', { fault: 'reset' })
    const v = await started(my('085'))
    expect(await call('verify', v)).toBe('network')
    return v
  }

  it('a fault before counts verify.fault only: nothing was charged', async () => {
    await faultBefore()
    await counted({ 'init.otp': 1, 'verify.fault': 1 })
  })

  it('the retry after a fault before succeeds', async () => {
    const v = await faultBefore()
    await counted({ 'init.otp': 1, 'verify.fault': 1 })
    await c.control('/rules/v-reset', undefined, { method: 'DELETE' })
    expect(await call('verify', v)).toBe(200)
    await counted({ 'init.otp': 1, 'verify.SUCCESS': 1, 'verify.fault': 1 })
  })

  describe('a fault after (611: reset, charged and ACTIVE)', () => {
    /** The Verify cut after it was done; answers its verification. */
    async function faultAfter() {
      const v = await started(my('611'))
      expect(await call('verify', v)).toBe('network')
      return v
    }
    const done = { 'init.otp': 1, 'verify.SUCCESS': 1, 'verify.fault': 1 }

    it("counts the Verify's own outcome too", async () => {
      await faultAfter()
      await outcomesCounted(done)
    })

    it('is no LOST_ACTIVATION', async () => {
      await faultAfter()
      await outcomesCounted(done)
      expect((await seen()).findings).toEqual({})
    })

    // One retry of the lost answer learns the request was used: no finding either.
    it('a retry of the lost answer learns the request was used (PIN_EXPIRED)', async () => {
      const v = await faultAfter()
      await outcomesCounted(done)
      expect((await c.api('/subscriptions/verify', v)).body.message).toBe('PIN_EXPIRED')
      await outcomesCounted({ ...done, 'verify.PIN_EXPIRED': 1 })
    })

    it('a retry of the lost answer raises no finding', async () => {
      const v = await faultAfter()
      await outcomesCounted(done)
      await c.api('/subscriptions/verify', v)
      await outcomesCounted({ ...done, 'verify.PIN_EXPIRED': 1 })
      expect((await seen()).findings).toEqual({})
    })
  })

  describe('a hang after that the client gives up on', () => {
    /** The Verify hangs once done (rule v-hang, 086); the client aborts it once the rule was used. */
    async function gaveUpOnHang() {
      await rule('v-hang', '086', 'verify', { fault: 'hang', when: 'after' })
      const v = await started(my('086'))
      const gaveUp = new AbortController()
      const pending = fetch(`${c.url}/subscriptions/verify`, {
        method: 'POST',
        headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
        body: JSON.stringify(v),
        signal: gaveUp.signal,
      }).catch((e: Error) => e.name)
      await expect.poll(async () => (await c.control('/rules')).body.rules.find((r: any) => r.id === 'v-hang').used, { interval: 20 }).toBe(1)
      gaveUp.abort()
      expect(await pending).toBe('AbortError')
    }
    const gone = { 'init.otp': 1, 'verify.SUCCESS': 1, 'verify.fault': 1, 'client.gone': 1 }

    it('counts the gone client too (client.gone)', async () => {
      await gaveUpOnHang()
      await outcomesCounted(gone)
    })

    it('is no LOST_ACTIVATION', async () => {
      await gaveUpOnHang()
      await outcomesCounted(gone)
      expect((await seen()).findings).toEqual({})
    })
  })

  it("a gateway after (612: 502) counts the Verify's own outcome too", async () => {
    expect(await call('verify', await started(my('612')))).toBe(502)
    await counted({ 'init.otp': 1, 'verify.SUCCESS': 1, 'verify.gateway': 1 })
  })

  it('a gateway before (613: 504) counts verify.gateway only', async () => {
    expect(await call('verify', await started(my('612')))).toBe(502)
    await counted({ 'init.otp': 1, 'verify.SUCCESS': 1, 'verify.gateway': 1 })
    expect(await call('verify', await started(my('613')))).toBe(504)
    await counted({ 'init.otp': 2, 'verify.SUCCESS': 1, 'verify.gateway': 2 })
  })

  describe('a 500 after', () => {
    beforeEach(async () => {
      await rule('v-500', '087', 'verify', { http: 500, when: 'after' })
      expect(await call('verify', await started(my('087')))).toBe(500)
    })

    it("counts verify.ERROR_500 beside the Verify's own outcome", async () => {
      await counted({ 'init.otp': 1, 'verify.SUCCESS': 1, 'verify.ERROR_500': 1 })
    })

    it('leaves the subscription ACTIVE', async () => {
      expect((await c.control(`/subscriptions?msisdn=${my('087')}`)).body.subscriptions).toMatchObject([{ status: 'ACTIVE' }])
    })
  })
})

describe('Status', () => {
  /** A subscription whose first renewal fails (ending 301): EXPIRED and unreconciled once the clock passed its period. */
  async function lapsed(): Promise<string> {
    const v = await started(my('301'))
    const id = (await c.api('/subscriptions/verify', v)).body.payload.subscription_id
    await c.control('/clock/advance', { by: 'P1M' })
    return id
  }

  describe('a fault', () => {
    /** A lapsed subscription's Status cut (s-cut: truncate); answers its id and what was seen before. */
    async function cutStatus() {
      const id = await lapsed()
      const before = await seen()
      expect(before.findings).toEqual({ UNRECONCILED: 1 })
      await rule('s-cut', '301', 'status', { fault: 'truncate' })
      expect(await call('status', { subscription_id: id })).toBe('network') // the status line came, the body did not
      return { id, before }
    }
    /** The Status sent again at once once the fault was counted, the rule gone; answers what it read and what was seen before. */
    async function statusAgain() {
      const { id, before } = await cutStatus()
      await outcomesCounted({ ...before.outcomes, 'status.fault': 1 })
      await c.control('/rules/s-cut', undefined, { method: 'DELETE' })
      const read = (await c.api('/subscriptions/status', { subscription_id: id })).body.payload.status
      return { read, before }
    }

    it('counts status.fault only (not the state, not ERROR_500)', async () => {
      const { before } = await cutStatus()
      await outcomesCounted({ ...before.outcomes, 'status.fault': 1 })
    })

    it('reconciles nothing', async () => {
      const { before } = await cutStatus()
      await outcomesCounted({ ...before.outcomes, 'status.fault': 1 })
      expect((await seen()).findings).toEqual({ UNRECONCILED: 1 })
    })

    it('the next Status reads the state, counted', async () => {
      const { read, before } = await statusAgain()
      expect(read).toBe('EXPIRED')
      await outcomesCounted({ ...before.outcomes, 'status.fault': 1, 'status.EXPIRED': 1 })
    })

    it('the next Status reconciles the subscription', async () => {
      const { before } = await statusAgain()
      await outcomesCounted({ ...before.outcomes, 'status.fault': 1, 'status.EXPIRED': 1 })
      expect((await seen()).findings.UNRECONCILED).toBeUndefined()
    })

    // The truncated answer's status line said 500: the Status sent again at once is a FAST_RETRY.
    it('the next Status, sent at once after the cut 500, is a FAST_RETRY', async () => {
      const { before } = await statusAgain()
      await outcomesCounted({ ...before.outcomes, 'status.fault': 1, 'status.EXPIRED': 1 })
      expect((await seen()).findings).toEqual({ FAST_RETRY: 1 })
    })
  })

  describe("a gateway's answer", () => {
    /** A lapsed subscription's Status answered 503 by a rule (s-gw); answers its id and what was seen before. */
    async function gatewayStatus() {
      const id = await lapsed()
      const before = await seen()
      await rule('s-gw', '301', 'status', { http: 503 })
      expect(await call('status', { subscription_id: id })).toBe(503)
      return { id, before }
    }
    /** The Status sent again at once once the 503 was counted, cut by the api step's fault (s-api: reset). */
    async function apiFaultNext() {
      const { id, before } = await gatewayStatus()
      await outcomesCounted({ ...before.outcomes, 'status.gateway': 1 })
      await c.control('/rules/s-gw', undefined, { method: 'DELETE' })
      await rule('s-api', '301', 'api', { fault: 'reset' })
      expect(await call('status', { subscription_id: id })).toBe('network')
      return { before }
    }

    it('counts status.gateway only', async () => {
      const { before } = await gatewayStatus()
      await outcomesCounted({ ...before.outcomes, 'status.gateway': 1 })
    })

    it('reconciles nothing', async () => {
      const { before } = await gatewayStatus()
      await outcomesCounted({ ...before.outcomes, 'status.gateway': 1 })
      expect((await seen()).findings).toEqual({ UNRECONCILED: 1 })
    })

    it("the api step's fault on the next Status counts status.fault", async () => {
      const { before } = await apiFaultNext()
      await outcomesCounted({ ...before.outcomes, 'status.gateway': 1, 'status.fault': 1 })
    })

    // Sent again at once after the 503: a FAST_RETRY, whatever the retry itself got.
    it('the next Status, sent at once, is a FAST_RETRY whatever it got', async () => {
      const { before } = await apiFaultNext()
      await outcomesCounted({ ...before.outcomes, 'status.gateway': 1, 'status.fault': 1 })
      expect((await seen()).findings).toEqual({ UNRECONCILED: 1, FAST_RETRY: 1 })
    })
  })
})
