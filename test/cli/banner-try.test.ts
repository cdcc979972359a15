import { describe, expect, it } from 'vitest'
import { tempDir, writeJson } from '../helpers.js'
import { serve } from './run.js'

/** The banner's try line, run as a user pastes it: its key and body sent to its URL. */
async function tryLine(output: string): Promise<{ line: string; body: any }> {
  const line = /^ {2}try: +(.*)$/m.exec(output)?.[1] ?? ''
  const m = /^curl -s (\S+) -H 'API-KEY: ([^']+)' -H 'Content-Type: application\/json' -d '(.*)'$/.exec(line)
  expect(m, line).not.toBeNull()
  const res = await fetch(m![1]!, { method: 'POST', headers: { 'api-key': m![2]!, 'content-type': 'application/json' }, body: m![3]! })
  return { line, body: await res.json() }
}

// The banner offered the default world's Init (demo key, STREAMPLUS in my, 60123456001) whatever was
// loaded: with a fixture that sells STREAMPLUS in Thailand only, the first command a user copied
// answered 403 MERCHANT_SERVICE_NOT_CONFIGURED.
describe("dcb serve's try line", () => {
  it('is an Init the loaded world answers with SUCCESS', async () => {
    const t = tempDir()
    const started = []
    try {
      const plain = await serve(['--in-memory'])
      started.push(plain)
      const p = await tryLine(plain.output())
      expect(p.line).toContain(`-d '{"msisdn":"60123456001","service_code":"STREAMPLUS","country_code":"my"}'`)
      expect(p.body.status).toBe('SUCCESS')

      const th = writeJson(t.dir, 'th.json', {
        countries: [{ code: 'th', name: 'Thailand', calling_code: '66', lengths: [11] }],
        carriers: [{ code: 'sbx-th-psms', country: 'th', prefixes: ['668'], flow: 'psms', short_code: '4545' }],
        services: [{ code: 'STREAMPLUS', integrations: [{ country: 'th', price: { amount: '99', currency: 'THB' } }] }],
      })
      const thai = await serve(['--in-memory', '--fixtures', th])
      started.push(thai)
      const q = await tryLine(thai.output())
      expect(q.line).toContain(`-d '{"msisdn":"66834567001","service_code":"STREAMPLUS","country_code":"th"}'`)
      expect(q.body.status).toBe('SUCCESS')

      // A world of its own: its merchant's key.
      const own = writeJson(t.dir, 'own.json', {
        extends: 'none',
        merchants: [{ id: 'shop', api_keys: ['shop-key'] }],
        countries: [{ code: 'th', calling_code: '66', lengths: [11] }],
        carriers: [{ code: 'th-otp', country: 'th', prefixes: ['669'], flow: 'otp' }],
        services: [
          { code: 'VIDEO', merchant: 'shop', name: 'Video', period: 'P1M', integrations: [{ country: 'th', price: { amount: '1', currency: 'THB' } }] },
        ],
      })
      const shop = await serve(['--in-memory', '--fixtures', own])
      started.push(shop)
      expect(shop.output()).toContain('  API key:  shop-key   (header API-KEY)')
      expect((await tryLine(shop.output())).body.status).toBe('SUCCESS')
    } finally {
      for (const s of started) await s.stop()
      t.cleanup()
    }
  })
})
