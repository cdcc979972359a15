import { describe, expect, it } from 'vitest'
import { CONTROL_CALLS, controlRequest, deriveOperations, OPERATION_NAMES, type ControlRequest } from '../../src/contract/calls.js'
import { checkBody, isMerchantPath, MERCHANT_CALLS, MERCHANT_PATHS } from '../../src/contract/merchant-calls.js'
import { SandboxError } from '../../src/core/errors.js'
import { CONTROL_ROUTES } from '../../src/http/control-routes.js'

describe('a control call is made from its declaration', () => {
  it('fills a path parameter in, percent-encoded', () => {
    expect(controlRequest('subscription', ['a b/c'])).toMatchObject({ method: 'GET', path: '/subscriptions/a%20b%2Fc' })
  })

  it('refuses an empty path parameter with BAD_REQUEST naming it', () => {
    expect(() => controlRequest('cancel', [''])).toThrow(new SandboxError('BAD_REQUEST', 'id: must not be empty'))
  })

  it('writes query numbers in decimal digits', () => {
    expect(controlRequest('requests', [{ limit: 1e21 } as never]).path).toBe('/requests?limit=1000000000000000000000')
    expect(controlRequest('messages', [{ limit: 1e-7 } as never]).path).toBe('/messages?limit=0.0000001')
  })

  it('leaves undefined query values out', () => {
    expect(controlRequest('requests', [{ limit: 1e21, since: undefined, msisdn: '6012' } as never]).path).toBe(
      '/requests?limit=1000000000000000000000&msisdn=6012',
    )
  })

  it('sends {} on a POST that takes no body', () => {
    expect(controlRequest('reset', [])).toMatchObject({ method: 'POST', path: '/reset', body: {} })
  })

  it('sends no body on a GET', () => {
    expect(controlRequest('health', []).body).toBeUndefined()
  })

  it('sends the arguments of a POST as its body', () => {
    expect(controlRequest('advance', ['P1D'])).toMatchObject({ body: { by: 'P1D' } })
  })

  it('makes a clock advance untimed', () => {
    expect(controlRequest('advance', ['P1D'])).toMatchObject({ untimed: true })
  })

  describe('the operations derived from the declarations', () => {
    /** The operations, sending into `sent` instead of to a server. */
    const derive = () => {
      const sent: ControlRequest[] = []
      const ops = deriveOperations(async (r) => (sent.push(r), { ok: true }))
      return { sent, ops }
    }

    it('each send their declared request line', async () => {
      const { sent, ops } = derive()
      await ops.health()
      await ops.rules.remove('rt-1')
      await ops.otp('60123456001', { wait: 5 })
      expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /health', 'DELETE /rules/rt-1', 'GET /otp?msisdn=60123456001&wait=5'])
    })

    it('pass the wait of an OTP look-up on as waitSeconds', async () => {
      const { sent, ops } = derive()
      await ops.otp('60123456001', { wait: 5 })
      expect(sent[0]!.waitSeconds).toBe(5)
    })

    it('reject a request refused as it is made', async () => {
      const { ops } = derive()
      // A request refused as it is made rejects, as a refusal of the server does.
      await expect(ops.otp('6012', { wiat: 1 } as never)).rejects.toThrow('unknown option wiat (did you mean wait?)')
    })
  })

  it("gives every control route its operation's request line", () => {
    for (const route of CONTROL_ROUTES) {
      const call = CONTROL_CALLS[route.operation]
      expect(`${route.method} ${route.path}`).toBe(`${call.method} ${call.path}`)
    }
  })

  it('routes exactly the operations but worldSources', () => {
    expect(new Set(CONTROL_ROUTES.map((r) => r.operation))).toEqual(new Set(OPERATION_NAMES.filter((n) => n !== 'worldSources')))
  })
})

describe('the merchant calls are declared once', () => {
  it('maps each declared path to its operation', () => {
    expect(MERCHANT_PATHS).toEqual({ '/subscriptions/init': 'init', '/subscriptions/verify': 'verify', '/subscriptions/status': 'status' })
  })

  it('knows a declared path as a merchant path', () => {
    expect(isMerchantPath(MERCHANT_CALLS.verify.path)).toBe(true)
  })

  it('knows no other path as a merchant path', () => {
    expect(isMerchantPath('/subscriptions')).toBe(false)
  })

  it('takes no property of the prototype for a merchant path', () => {
    expect(isMerchantPath('constructor')).toBe(false)
  })

  it('names the first field that fails, in the declared order', () => {
    expect(checkBody('init', { country_code: 'MY', msisdn: 1 })).toMatchObject({ problem: { field: 'msisdn', kind: 'type' } })
    expect(checkBody('init', { msisdn: '6012', service_code: 'S', country_code: 'MY' })).toMatchObject({ problem: { field: 'country_code', kind: 'case' } })
    expect(checkBody('init', { msisdn: '6012', service_code: 'S', country_code: 'mys' })).toMatchObject({ problem: { field: 'country_code', kind: 'shape' } })
    expect(checkBody('verify', { otp: '1' })).toMatchObject({ problem: { field: 'verif_request_id', kind: 'required' } })
    expect(checkBody('status', { subscription_id: '' })).toMatchObject({ problem: { field: 'subscription_id', kind: 'empty' } })
  })

  describe('a body it takes', () => {
    const checked = () => checkBody('verify', { otp: '1234', extra: 1, language: null, verif_request_id: 'v' })

    it('is answered with the declared fields in their order', () => {
      expect(Object.keys((checked() as { input: object }).input)).toEqual(['verif_request_id', 'otp', 'language'])
    })

    it('keeps a null language', () => {
      expect((checked() as { input: object }).input).toHaveProperty('language', null)
    })

    it('is answered without its extra fields', () => {
      expect(checked()).toEqual({ input: { verif_request_id: 'v', otp: '1234', language: null } })
    })
  })
})
