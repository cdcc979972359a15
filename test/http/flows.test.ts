import { describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { startClient, useSandbox, tempDir, TIMESTAMP } from '../helpers.js'
import { withFakeTimers } from '../wait.js'

const c = useSandbox()

const init = (msisdn: string, country = 'my', service = 'STREAMPLUS') => c.api('/subscriptions/init', { msisdn, service_code: service, country_code: country })
const mo = (msisdn: string, short_code: string, text: string) => c.control('/mo', { msisdn, short_code, text })
const status = async (id: string) => (await c.api('/subscriptions/status', { subscription_id: id })).body

describe('PSMS flow', () => {
  // Init, then the keyword by MO (in lower case: keywords match in any case).
  const subscribe = async () => {
    await init('60133456001')
    return mo('60133456001', '32123', 'stream')
  }

  it('Init answers the short code, the keyword to send', async () => {
    const r = await init('60133456001')
    expect(r.body.payload).toEqual({ verif_request_id: null, short_code: '32123', keyword: 'STREAM', carrier_code: 'sbx-my-psms', redirect_url: null })
  })

  it('the MO keyword bills, activating the subscription', async () => {
    const sub = await subscribe()
    expect(sub.status).toBe(200)
    expect(sub.body).toMatchObject({ action: 'subscribed', service_code: 'STREAMPLUS', merchant: 'demo' })
    const st = await status(sub.body.subscription_id)
    expect(st.payload).toMatchObject({ status: 'ACTIVE', msisdn: '60133456001', canceled_dt: null })
  })

  it('the inbox holds the MO, then a welcome SMS that says how to stop', async () => {
    await subscribe()
    const inbox = (await c.control('/sms?msisdn=60133456001')).body.messages
    expect(inbox[0]).toMatchObject({ direction: 'mt', kind: 'welcome', from: '32123' })
    expect(inbox[0].text).toContain('Text STOP to 32123 to cancel.')
    expect(inbox[1]).toMatchObject({ direction: 'mo', to: '32123', text: 'stream' })
  })

  it('the keyword again is rejected ALREADY_SUBSCRIBED', async () => {
    await subscribe()
    const again = await mo('60133456001', '32123', 'STREAM')
    expect(again.body).toMatchObject({ action: 'rejected', code: 'ALREADY_SUBSCRIBED' })
  })

  it('STOP cancels the subscription', async () => {
    const id = (await subscribe()).body.subscription_id
    const stop = await mo('60133456001', '32123', 'STOP')
    expect(stop.body).toMatchObject({ action: 'stop', canceled: [id] })
    const after = await status(id)
    expect(after.payload.status).toBe('CANCELED')
    expect(after.payload.canceled_dt).toMatch(TIMESTAMP)
  })

  it('STOP sends a stop SMS', async () => {
    await subscribe()
    await mo('60133456001', '32123', 'STOP')
    expect((await c.control('/sms?msisdn=60133456001')).body.messages[0].kind).toBe('stop')
  })

  it('a new Init for that MSISDN, service is allowed after STOP', async () => {
    await subscribe()
    await mo('60133456001', '32123', 'STOP')
    expect((await init('60133456001')).body.status).toBe('SUCCESS')
  })

  it('works without a preceding Init, in another country too', async () => {
    const r = await mo('447701900001', '80880', 'GAME')
    expect(r.body.action).toBe('subscribed')
    expect((await status(r.body.subscription_id)).payload.service_code).toBe('GAMECLUB')
  })

  it('answers a wrong keyword or short code clearly, with an SMS back', async () => {
    const k = await mo('60133456002', '32123', 'HELLO')
    expect(k.body).toMatchObject({ action: 'unknown_keyword', keywords: expect.arrayContaining(['STREAM', 'GAME']) })
    expect((await c.control('/sms?msisdn=60133456002')).body.messages[0]).toMatchObject({ kind: 'help', from: '32123' })
    const s = await mo('60133456002', '99999', 'STREAM')
    expect(s.body.action).toBe('ignored')
    expect(s.body.reason).toContain('32123')
    expect((await c.control('/sms?msisdn=60133456002')).body.messages[0].text).toContain('99999 is not in service')
    expect((await mo('601', '32123', 'STREAM')).status).toBe(400)
    expect((await c.control('/mo', { msisdn: '60133456002', short_code: '32123' })).status).toBe(400)
    expect((await c.control('/subscriptions?msisdn=60133456002')).body.subscriptions).toEqual([])
  })

  it('a 2xx ending fails the first charge at the MO', async () => {
    const r = await mo('60133456203', '32123', 'STREAM')
    expect(r.body).toMatchObject({ action: 'charge_failed', code: 'BARRED' })
    expect((await c.control('/subscriptions?msisdn=60133456203')).body.subscriptions).toEqual([])
  })

  it('1xx endings fail Init on PSMS carriers too', async () => {
    const r = await init('60133456106')
    expect(r.body).toEqual({ status: 'FAIL', message: 'BLACKLISTED', status_code: 200 })
  })
})

describe('redirect flow', () => {
  const form = (url: string, action: string) =>
    fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `action=${action}` })

  const approve = async () => {
    const url: string = (await init('359881234001', 'bg')).body.payload.redirect_url
    const res = await form(url, 'approve')
    const loc = new URL(res.headers.get('location')!, c.url)
    return { url, res, loc, id: loc.searchParams.get('subscription_id')! }
  }

  it('Init answers a consent page', async () => {
    const r = await init('359881234001', 'bg')
    expect(r.body.payload).toMatchObject({ verif_request_id: null, short_code: null, keyword: null, carrier_code: 'sbx-bg-redirect' })
    const url: string = r.body.payload.redirect_url
    expect(url).toMatch(new RegExp(`^${c.url}/consent/[0-9a-f-]{36}$`))
  })

  it('the consent page shows the service, its price, an approve-or-deny form, no script', async () => {
    const page = await fetch((await init('359881234001', 'bg')).body.payload.redirect_url)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('Stream Plus')
    expect(html).toContain('5.99 BGN per month')
    expect(html).toMatch(/<form method="post"[^>]*>.*value="approve".*value="deny"/s)
    expect(html).not.toContain('<script')
  })

  it('Approve redirects 303 to the return URL', async () => {
    const { res, loc } = await approve()
    expect(res.status).toBe(303)
    expect(loc.pathname).toBe('/_sandbox/return')
  })

  it('Approve activates the subscription', async () => {
    const { id } = await approve()
    expect((await status(id)).payload).toMatchObject({ status: 'ACTIVE', msisdn: '359881234001' })
  })

  it('the consent link is single-use', async () => {
    const { url } = await approve()
    const reuse = await form(url, 'approve')
    expect(new URL(reuse.headers.get('location')!, c.url).searchParams.get('message')).toBe('PIN_EXPIRED')
    expect((await fetch(url)).status).toBe(410)
  })

  it('the return page shows what the merchant receives', async () => {
    const { loc, id } = await approve()
    expect(await (await fetch(loc)).text()).toContain(id)
  })

  it('Deny redirects with status=FAIL&message=FAILED_INIT_SUB', async () => {
    const a = await init('359881234002', 'bg')
    const denied = await form(a.body.payload.redirect_url, 'deny')
    const q = new URL(denied.headers.get('location')!, c.url).searchParams
    expect([q.get('status'), q.get('message')]).toEqual(['FAIL', 'FAILED_INIT_SUB'])
  })

  it('a failed charge at Approve redirects with status=FAIL&message=CODE, subscribing nothing', async () => {
    const b = await init('359881234201', 'bg')
    const failed = await form(b.body.payload.redirect_url, 'approve')
    const q2 = new URL(failed.headers.get('location')!, c.url).searchParams
    expect([q2.get('status'), q2.get('message')]).toEqual(['FAIL', 'INSUFFICIENT_FUNDS'])
    expect((await c.control('/subscriptions?msisdn=359881234201')).body.subscriptions).toEqual([])
  })

  it('the consent link expires like an OTP', async () => {
    const r = await init('359881234003', 'bg')
    const adv = await c.control('/clock/advance', { by: 'PT5M' })
    expect(adv.body.events).toEqual([expect.objectContaining({ type: 'consent_expired' })])
    expect((await fetch(r.body.payload.redirect_url)).status).toBe(410)
    const res = await form(r.body.payload.redirect_url, 'approve')
    expect(new URL(res.headers.get('location')!, c.url).searchParams.get('message')).toBe('PIN_EXPIRED')
  })

  it('Verify with a consent id answers INVALID_PIN (not an OTP flow)', async () => {
    const r = await init('359881234005', 'bg')
    const id = r.body.payload.redirect_url.split('/').pop()
    expect((await c.api('/subscriptions/verify', { verif_request_id: id, otp: '0000' })).body).toEqual({
      status: 'FAIL',
      message: 'INVALID_PIN',
      status_code: 200,
    })
  })

  it('an unknown consent page is 404', async () => {
    expect((await fetch(`${c.url}/consent/nope`)).status).toBe(404)
    expect((await fetch(`${c.url}/consent/%E0%A4%A`)).status).toBe(404)
  })

  it('a consent form with an unknown action is 400', async () => {
    const r = await init('359881234004', 'bg')
    expect((await form(r.body.payload.redirect_url, 'maybe')).status).toBe(400)
  })
})

describe('magic endings on every flow', () => {
  const FLOWS = [
    ['OTP', '4477009001', 'gb'],
    ['PSMS', '4477019001', 'gb'],
    ['redirect', '3598812340', 'bg'],
  ]
  const at = (stem: string, country: string, ending: string) =>
    c.api('/subscriptions/init', { msisdn: stem.slice(0, 12 - 3) + ending, service_code: 'STREAMPLUS', country_code: country })

  it.each(FLOWS)('%s: 1xx endings fail Init', async (_flow, stem, country) => {
    expect((await at(stem, country, '104')).body).toEqual({ status: 'FAIL', message: 'FAILED_INIT_SUB', status_code: 200 })
    expect((await at(stem, country, '109')).body).toEqual({ status: 'FAIL', message: 'INVALID_USER', status_code: 200 })
  })

  it.each(FLOWS)('%s: ending 150 is HTTP 500', async (_flow, stem, country) => {
    expect((await at(stem, country, '150')).status).toBe(500)
  })

  it.each(FLOWS)('%s: ending 5NN delays the answer', async (_flow, stem, country) => {
    await withFakeTimers(async (t) => {
      const delayed = at(stem, country, '503')
      expect(await Promise.race([t.next(), delayed.then(() => 'answered at once')])).toBe(300)
      await t.advance(300)
      expect((await delayed).body.status).toBe('SUCCESS')
    })
  })
})

describe('runtime rules', () => {
  it('"the next charge of this MSISDN fails BARRED, once"', async () => {
    const add = await c.control('/rules', { match: { msisdn: '60123456011' }, step: 'charge', times: 1, effect: { error: 'BARRED' } })
    expect(add.status).toBe(200)
    expect(add.body.id).toMatch(/^rt-/)
    const i1 = await init('60123456011')
    const otp1 = (await c.control('/otp?msisdn=60123456011')).body.otp
    const v1 = await c.api('/subscriptions/verify', { verif_request_id: i1.body.payload.verif_request_id, otp: otp1 })
    expect(v1.body.message).toBe('BARRED')
    expect(await c.subscribe('60123456011')).toMatch(/-/)
    const list = (await c.control('/rules')).body
    expect(list.runtime).toEqual([expect.objectContaining({ id: add.body.id, used: 1 })])
    expect((await c.control('/scenarios')).body.scenarios[0]).toMatchObject({ id: add.body.id, source: 'runtime', outcome: 'BARRED (1 time)' })
  })

  describe('nth, delete and reset', () => {
    const secondInit = () =>
      c.control('/rules', { id: 'second-init', match: { prefix: '6012345602' }, step: 'init', nth: 2, effect: { error: 'NOT_ELIGIBLE' } })

    it('nth: only the second Init fails', async () => {
      await secondInit()
      expect((await init('60123456021')).body.status).toBe('SUCCESS')
      expect((await init('60123456021')).body.message).toBe('NOT_ELIGIBLE')
      expect((await init('60123456021')).body.status).toBe('SUCCESS')
    })

    it('a rule id is taken until the rule is deleted, once', async () => {
      await secondInit()
      expect((await c.control('/rules', { id: 'second-init', step: 'init' })).status).toBe(409)
      expect((await c.control('/rules/second-init', undefined, { method: 'DELETE' })).body).toEqual({ deleted: 1 })
      expect((await c.control('/rules/second-init', undefined, { method: 'DELETE' })).status).toBe(404)
    })

    it('reset drops the runtime rules', async () => {
      await c.control('/rules', { match: { ending: '022' }, step: 'init', effect: { http: 500 } })
      expect((await init('60123456022')).status).toBe(500)
      await c.control('/reset', {})
      expect((await c.control('/rules')).body.runtime).toEqual([])
      expect((await init('60123456022')).status).toBe(200)
    })
  })

  it('a fixed OTP rule sets the OTP sent', async () => {
    await c.control('/rules', { match: { msisdn: '60123456031' }, step: 'otp', effect: { otp: '4242' } })
    expect((await init('60123456031')).body.status).toBe('SUCCESS')
    expect((await c.control('/otp?msisdn=60123456031')).body.otp).toBe('4242')
  })

  it('a delay rule holds the answer for its delay_ms', async () => {
    await c.control('/rules', { match: { msisdn: '60123456032' }, step: 'api', effect: { delay_ms: 250 } })
    await withFakeTimers(async (t) => {
      const delayed = init('60123456032')
      expect(await Promise.race([t.next(), delayed.then(() => 'answered at once')])).toBe(250)
      await t.advance(250)
      expect((await delayed).body.status).toBe('SUCCESS')
    })
  })

  it('an OTP refusal at verify, once', async () => {
    await c.control('/rules', { match: { msisdn: '60123456033' }, step: 'verify', times: 1, effect: { error: 'PIN_EXPIRED' } })
    const i = await init('60123456033')
    const otp = (await c.control('/otp?msisdn=60123456033')).body.otp
    expect((await c.api('/subscriptions/verify', { verif_request_id: i.body.payload.verif_request_id, otp })).body.message).toBe('PIN_EXPIRED')
    expect((await c.api('/subscriptions/verify', { verif_request_id: i.body.payload.verif_request_id, otp })).body.status).toBe('SUCCESS')
  })

  it('rejects a malformed rule with the path of the problem', async () => {
    const r = await c.control('/rules', { step: 'charge', effect: { error: 'NOPE' } })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ error: 'BAD_RULE', message: expect.stringMatching(/^effect\.error: /) })
    expect((await c.control('/rules', { step: 'sometime' })).body.message).toMatch(/^step: /)
  })

  const runtimeRules = async () => (await c.control('/rules')).body.rules.filter((r: { source: string }) => r.source === 'runtime')

  it('a mistyped key of a rule names the nearest one the rule takes', async () => {
    const typo = await c.control('/rules', { step: 'init', efect: { error: 'BARRED' } })
    expect(typo.status).toBe(400)
    expect(typo.body.message).toContain('Unrecognized key: "efect" (did you mean effect?)')
    const inner = await c.control('/rules', { step: 'init', match: { msisdm: '60123456001' }, effect: { error: 'BARRED' } })
    expect(inner.body.message).toContain('match: Unrecognized key: "msisdm" (did you mean msisdn?)')
    expect(await runtimeRules()).toEqual([])
  })

  it('a mistyped key near none the rule takes is named alone', async () => {
    const far = await c.control('/rules', { step: 'init', effect: { error: 'BARRED' }, zzzzzz: 1 })
    expect(far.body.message).toContain('Unrecognized key: "zzzzzz"')
    expect(far.body.message).not.toContain('did you mean')
    expect(await runtimeRules()).toEqual([])
  })

  it('logs a rule change in the request log', async () => {
    const r = await c.control('/rules', { match: { msisdn: '60123456041' }, step: 'init', effect: { error: 'BARRED' } })
    const journal = (await c.control('/requests')).body.requests
    expect(journal[0]).toMatchObject({ method: 'POST', path: '/_sandbox/rules', response: { id: r.body.id } })
  })

  it('keeps runtime rules across a restart', async () => {
    const t = tempDir()
    try {
      const data = join(t.dir, 'sandbox.json')
      const a = await startClient({ data })
      await a.control('/rules', { id: 'keep-me', match: { msisdn: '60123456042' }, step: 'init', effect: { error: 'BARRED' } })
      await a.close()
      const b = await startClient({ data })
      try {
        expect((await b.control('/rules')).body.runtime.map((x: any) => x.id)).toEqual(['keep-me'])
        expect((await b.api('/subscriptions/init', { msisdn: '60123456042', service_code: 'STREAMPLUS', country_code: 'my' })).body.message).toBe('BARRED')
      } finally {
        await b.close()
      }
    } finally {
      t.cleanup()
    }
  })
})
