import { describe, expect, it } from 'vitest'
import { requestLogHeaders, MASKED } from '../../src/http/request-log-headers.js'

describe('the request headers the request log keeps', () => {
  const secret = { 'api-key': 'live-secret', cookie: 'a=b', authorization: 'Bearer x', accept: '*/*' }

  it('masks an API key the package does not ship', () => {
    expect(JSON.parse(requestLogHeaders(secret))['api-key']).toBe(MASKED)
  })

  it('leaves out cookies or authorization, keeping the other headers', () => {
    expect(JSON.parse(requestLogHeaders(secret))).toEqual({
      'api-key': MASKED,
      accept: '*/*',
    })
  })

  it('keeps an API key the package ships', () => {
    expect(JSON.parse(requestLogHeaders({ 'api-key': 'sandbox-demo-key' }))['api-key']).toBe('sandbox-demo-key')
  })

  it('is bounded: 24 headers of 200 characters at most', () => {
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-h${i}`, 'v'.repeat(5000)]))
    const kept = JSON.parse(requestLogHeaders(many)) as Record<string, string>
    expect(Object.keys(kept)).toHaveLength(24)
    expect(Object.values(kept).every((v) => v.length === 201)).toBe(true)
    expect(requestLogHeaders(many).length).toBeLessThan(24 * 220)
  })
})

describe('the request headers kept for calls that repeat them', () => {
  it('answers a header that changed, not the text of the call before', () => {
    const a = { 'api-key': 'sandbox-demo-key', 'x-trace': '1' }
    expect(JSON.parse(requestLogHeaders(a))['x-trace']).toBe('1')
    expect(JSON.parse(requestLogHeaders({ ...a }))['x-trace']).toBe('1')
    expect(JSON.parse(requestLogHeaders({ ...a, 'x-trace': '2' }))['x-trace']).toBe('2')
    expect(JSON.parse(requestLogHeaders({ 'api-key': 'live-secret', 'x-trace': '2' }))['api-key']).toBe(MASKED)
    expect(JSON.parse(requestLogHeaders({ 'api-key': 'live-secret' }))).toEqual({ 'api-key': MASKED })
    expect(JSON.parse(requestLogHeaders({ 'api-key': 'live-secret', accept: '*/*' }))).toEqual({ 'api-key': MASKED, accept: '*/*' })
  })
})
