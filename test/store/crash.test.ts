import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers.js'
import { serve } from '../cli/run.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(() => tmp.cleanup())

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }

async function flow(url: string, msisdn: string): Promise<string | undefined> {
  const init = await (
    await fetch(`${url}/subscriptions/init`, { method: 'POST', headers: H, body: JSON.stringify({ msisdn, service_code: 'STREAMPLUS', country_code: 'my' }) })
  ).json()
  if (init.status !== 'SUCCESS') return undefined
  const otp = await (await fetch(`${url}/_sandbox/otp?msisdn=${msisdn}`)).json()
  const v = await (
    await fetch(`${url}/subscriptions/verify`, {
      method: 'POST',
      headers: H,
      body: JSON.stringify({ verif_request_id: init.payload.verif_request_id, otp: otp.otp }),
    })
  ).json()
  return v.status === 'SUCCESS' ? v.payload.subscription_id : undefined
}

describe('crash safety', () => {
  it('each of four SIGKILLs during 8 parallel OTP flows leaves a data file the server starts from with every acknowledged subscription', async () => {
    const data = join(tmp.dir, 'sandbox.json')
    const acknowledged: string[] = []
    let n = 0
    for (let round = 0; round < 4; round++) {
      const s = await serve(['--data', data])
      let stop = false
      // Killed at a varying point of the traffic: after some 6 to 16 acknowledged subscriptions this round.
      const killAt = acknowledged.length + 6 + Math.floor(Math.random() * 11)
      let reached: () => void = () => {}
      const enough = new Promise<void>((r) => (reached = r))
      const workers = Array.from({ length: 8 }, async () => {
        while (!stop) {
          // Distinct MSISDNs in the always-succeeds range, so no flow is ALREADY_SUBSCRIBED.
          const i = n++
          const msisdn = `6012${String(i).padStart(5, '0')}0${String(i % 100).padStart(2, '0')}`
          try {
            const id = await flow(s.url, msisdn)
            if (id && acknowledged.push(id) >= killAt) reached()
          } catch {
            return // the server is gone
          }
        }
      })
      await enough
      await s.stop('SIGKILL')
      stop = true
      await Promise.all(workers)
    }
    expect(acknowledged.length).toBeGreaterThan(20)
    const s = await serve(['--data', data])
    try {
      const all = await (await fetch(`${s.url}/_sandbox/subscriptions?limit=100000`)).json()
      const have = new Set(all.subscriptions.map((x: any) => x.subscription_id))
      const lost = acknowledged.filter((id) => !have.has(id))
      expect(lost).toEqual([])
    } finally {
      await s.stop()
    }
  }, 60_000)

  describe('a session changed after its snapshot, deleted, then SIGKILL: the next start', () => {
    // A temp dir of its own: the file-wide one is made anew for each test.
    const own = tempDir()
    let kept: string | undefined
    let third: Awaited<ReturnType<typeof serve>>
    beforeAll(async () => {
      const data = join(own.dir, 'sandbox.json')
      const team = { ...H, 'x-dcb-session': 'team-a' }
      const first = await serve(['--data', data])
      kept = await flow(first.url, '60123456001')
      const init = await (
        await fetch(`${first.url}/subscriptions/init`, {
          method: 'POST',
          headers: team,
          body: JSON.stringify({ msisdn: '60123456002', service_code: 'STREAMPLUS', country_code: 'my' }),
        })
      ).json()
      expect(init.status).toBe('SUCCESS')
      // SIGTERM writes the session's snapshot.
      expect(await first.stop('SIGTERM')).toBe(0)
      const second = await serve(['--data', data])
      // A wrong OTP: the write-ahead log keeps the verification's changed fields, over the record in the snapshot.
      const wrong = await (
        await fetch(`${second.url}/subscriptions/verify`, {
          method: 'POST',
          headers: team,
          body: JSON.stringify({ verif_request_id: init.payload.verif_request_id, otp: '0' }),
        })
      ).json()
      expect(wrong.message).toBe('INVALID_PIN')
      expect((await fetch(`${second.url}/_sandbox/sessions/team-a`, { method: 'DELETE' })).status).toBe(200)
      await second.stop('SIGKILL')
      third = await serve(['--data', data])
    }, 60_000)
    afterAll(async () => {
      await third?.stop()
      own.cleanup()
    })

    it('leaves the session deleted', async () => {
      const sessions = await (await fetch(`${third.url}/_sandbox/sessions`)).json()
      expect(sessions.sessions.map((x: { name: string }) => x.name)).not.toContain('team-a')
    })

    it("keeps the default session's subscription", async () => {
      const status = await (
        await fetch(`${third.url}/subscriptions/status`, { method: 'POST', headers: H, body: JSON.stringify({ subscription_id: kept }) })
      ).json()
      expect(status.payload.status).toBe('ACTIVE')
    })
  })
})
