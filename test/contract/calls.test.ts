import { describe, expect, it } from 'vitest'
import { CONTROL_CALLS, controlRequest, deriveOperations, OPERATION_NAMES, type ControlRequest } from '../../src/contract/calls.js'
import { checkBody, isMerchantPath, MERCHANT_CALLS, MERCHANT_PATHS } from '../../src/contract/merchant-calls.js'
import { SandboxError } from '../../src/core/errors.js'
import { CONTROL_ROUTES } from '../../src/http/control-routes.js'

describe('a control call is made from its declaration', () => {
  it('fills and encodes path parameters, and refuses an empty one by name', () => {
    expect(controlRequest('subscription', ['a b/c'])).toMatchObject({ method: 'GET', path: '/subscriptions/a%20b%2Fc' })
    expect(() => controlRequest('cancel', [''])).toThrow(new SandboxError('BAD_REQUEST', 'id: must not be empty'))
  })

  it('writes query numbers in decimal digits and leaves undefined values out', () => {
    expect(controlRequest('requests', [{ limit: 1e21, since: undefined, msisdn: '6012' } as never]).path).toBe(
      '/requests?limit=1000000000000000000000&msisdn=6012',
    )
    expect(controlRequest('messages', [{ limit: 1e-7 } as never]).path).toBe('/messages?limit=0.0000001')
  })

  it('sends a body on POST only ({} when the call takes none)', () => {
    expect(controlRequest('reset', [])).toMatchObject({ method: 'POST', path: '/reset', body: {} })
    expect(controlRequest('health', []).body).toBeUndefined()
    expect(controlRequest('advance', ['P1D'])).toMatchObject({ body: { by: 'P1D' }, untimed: true })
  })

  it('derives one function per operation, each sending its declared method and path', async () => {
    const sent: ControlRequest[] = []
    const ops = deriveOperations(async (r) => (sent.push(r), { ok: true }))
    await ops.health()
    await ops.rules.remove('rt-1')
    await ops.otp('60123456001', { wait: 5 })
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /health', 'DELETE /rules/rt-1', 'GET /otp?msisdn=60123456001&wait=5'])
    expect(sent[2]!.waitSeconds).toBe(5)
    // A request refused as it is made rejects, as a refusal of the server does.
    await expect(ops.otp('6012', { wiat: 1 } as never)).rejects.toThrow('unknown option wiat (did you mean wait?)')
  })

  it("gives every control route its operation's method and path", () => {
    for (const route of CONTROL_ROUTES) {
      const call = CONTROL_CALLS[route.operation]
      expect(`${route.method} ${route.path}`).toBe(`${call.method} ${call.path}`)
    }
    expect(new Set(CONTROL_ROUTES.map((r) => r.operation))).toEqual(new Set(OPERATION_NAMES.filter((n) => n !== 'worldSources')))
  })
})

describe('the merchant calls are declared once', () => {
  it('maps each declared path to its operation, and no other path', () => {
    expect(MERCHANT_PATHS).toEqual({ '/subscriptions/init': 'init', '/subscriptions/verify': 'verify', '/subscriptions/status': 'status' })
    expect(isMerchantPath(MERCHANT_CALLS.verify.path)).toBe(true)
    expect(isMerchantPath('/subscriptions')).toBe(false)
    expect(isMerchantPath('constructor')).toBe(false)
  })

  it('names the first field that fails, in the declared order', () => {
    expect(checkBody('init', { country_code: 'MY', msisdn: 1 })).toMatchObject({ problem: { field: 'msisdn', kind: 'type' } })
    expect(checkBody('init', { msisdn: '6012', service_code: 'S', country_code: 'MY' })).toMatchObject({ problem: { field: 'country_code', kind: 'case' } })
    expect(checkBody('init', { msisdn: '6012', service_code: 'S', country_code: 'mys' })).toMatchObject({ problem: { field: 'country_code', kind: 'shape' } })
    expect(checkBody('verify', { otp: '1' })).toMatchObject({ problem: { field: 'verif_request_id', kind: 'required' } })
    expect(checkBody('status', { subscription_id: '' })).toMatchObject({ problem: { field: 'subscription_id', kind: 'empty' } })
  })

  it('answers the declared fields in their order, keeps a null language and leaves extra fields out', () => {
    const r = checkBody('verify', { otp: '1234', extra: 1, language: null, verif_request_id: 'v' })
    expect(r).toEqual({ input: { verif_request_id: 'v', otp: '1234', language: null } })
    expect(Object.keys((r as { input: object }).input)).toEqual(['verif_request_id', 'otp', 'language'])
  })
})
