/**
 * The SMS channel in process: `sandbox.otp({ verif_request_id })`, an OTP never delivered (631), one
 * delivered late (632) that a wait gets once the clock passes its time: moved (frozen clock) or
 * running (the library has no timer of its own: the wait runs the events due itself), and the same
 * through the msw handlers.
 */
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createSandbox, SandboxError, type Sandbox } from '../../src/index.js'
import { sandboxHandlers } from '../../src/msw.js'

const INIT = { service_code: 'STREAMPLUS', country_code: 'my' }

/** An Init's verif_request_id. */
async function verifOf(sandbox: Sandbox, msisdn: string): Promise<string> {
  const { envelope } = await sandbox.init({ msisdn, ...INIT })
  if (envelope.status !== 'SUCCESS' || !envelope.payload.verif_request_id) throw new Error(`init failed: ${JSON.stringify(envelope)}`)
  return envelope.payload.verif_request_id
}

describe('sandbox.otp and the SMS channel (frozen clock)', () => {
  let sandbox: Sandbox
  beforeAll(async () => {
    sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
  })
  afterAll(() => sandbox.close())
  beforeEach(() => sandbox.reset())

  const init = (msisdn: string) => verifOf(sandbox, msisdn)

  it("otp({ verif_request_id }) answers that verification request's OTP, whatever later Inits sent", async () => {
    const first = await init('60123456071')
    const { otp } = await sandbox.otp('60123456071')
    await init('60123456071')
    expect(await sandbox.otp({ verif_request_id: first })).toMatchObject({ verif_request_id: first, otp })
    await expect(sandbox.otp({ verif_request_id: 'nope' })).rejects.toMatchObject({ code: 'VERIFICATION_NOT_FOUND', status: 404 })
    await expect(sandbox.otp({ verif_request_id: first, wait: 1 } as never)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: 'otp: unknown option wait; it takes verif_request_id',
    })
  })

  it('ending 631: otp by id refuses with NO_OTP naming the rule', async () => {
    const id = await init('60123456631')
    const refused = await sandbox.otp({ verif_request_id: id }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(SandboxError)
    expect(refused).toMatchObject({ code: 'NO_OTP', status: 404, message: expect.stringContaining('never delivered: rule otp-631') })
  })

  it('ending 631: otp by MSISDN refuses with NO_OTP', async () => {
    await init('60123456631')
    await expect(sandbox.otp('60123456631')).rejects.toMatchObject({ code: 'NO_OTP' })
  })

  it("ending 631: the next Init's OTP is delivered", async () => {
    await init('60123456631')
    await expect(sandbox.otp('60123456631')).rejects.toMatchObject({ code: 'NO_OTP' })
    const second = await init('60123456631')
    expect((await sandbox.otp('60123456631')).verif_request_id).toBe(second)
  })

  it('ending 632: a wait gets the SMS when a clock move passes its time', async () => {
    const id = await init('60123456632')
    await expect(sandbox.otp({ verif_request_id: id })).rejects.toMatchObject({ code: 'NO_OTP', message: expect.stringContaining('rule otp-632') })
    const waiting = sandbox.otp({ verif_request_id: id }, { wait: 60 })
    const move = await sandbox.advance('PT5M')
    expect(move.events.map((e) => e.type)).toEqual(['otp_delivered', 'otp_expired'])
    expect(await waiting).toMatchObject({ verif_request_id: id, sent_dt: '2026-01-31T00:00:00.000000', delivered_dt: '2026-01-31T00:02:00.000000' })
  })
})

describe('a late SMS on a running clock', () => {
  it('a wait gets it once its time comes, with no clock move (the library runs no timer)', async () => {
    const sandbox = await createSandbox()
    try {
      await sandbox.rules.add({ match: { msisdn: '60123456073' }, step: 'otp', effect: { deliver_after: 'PT0.3S' } })
      const id = await verifOf(sandbox, '60123456073')
      const got = await sandbox.otp({ verif_request_id: id }, { wait: 20 })
      expect(got.verif_request_id).toBe(id)
      expect(Date.parse(got.delivered_dt! + 'Z') - Date.parse(got.sent_dt + 'Z')).toBe(300)
      expect((await sandbox.sms('60123456073')).messages).toHaveLength(1)
    } finally {
      await sandbox.close()
    }
  })
})

describe('through the msw handlers', () => {
  const BASE = 'https://gw.carrier.test/dcb/v1'
  let sandbox: Sandbox
  const server = setupServer()
  beforeAll(async () => {
    sandbox = await createSandbox({ clock: '2026-01-31T00:00:00' })
    server.use(...sandboxHandlers(sandbox, { baseUrl: BASE }))
    server.listen({ onUnhandledRequest: 'bypass' })
  })
  afterAll(async () => {
    server.close()
    await sandbox.close()
  })

  // The two tests run in order: the second verifies the Init the first sent.
  describe('an Init through fetch for ending 632, in order', () => {
    const headers = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
    let id: string

    it('sends no SMS at once', async () => {
      const started = await fetch(`${BASE}/subscriptions/init`, { method: 'POST', headers, body: JSON.stringify({ msisdn: '60123456632', ...INIT }) })
      id = ((await started.json()) as { payload: { verif_request_id: string } }).payload.verif_request_id
      expect((await sandbox.sms('60123456632')).messages).toEqual([])
    })

    it('verifies with the OTP once its SMS came', async () => {
      await sandbox.advance('PT2M')
      const { otp } = await sandbox.otp({ verif_request_id: id })
      const verified = await fetch(`${BASE}/subscriptions/verify`, { method: 'POST', headers, body: JSON.stringify({ verif_request_id: id, otp }) })
      expect(await verified.json()).toMatchObject({ status: 'SUCCESS' })
    })
  })
})
