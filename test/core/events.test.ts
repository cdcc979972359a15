import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ClockMove, EventLog, EventSubject } from '../../src/core/events.js'
import { formatTimestamp } from '../../src/core/time.js'

/** Any UTF-16 text, lone surrogates and control characters included. */
const anyUtf16 = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 }).map((codes) => String.fromCharCode(...codes))

const text = (parts: Uint8Array[]) => Buffer.concat(parts).toString('utf8')

describe('clock events as JSON', () => {
  it('writes what JSON.stringify would, for any ids, MSISDNs and service codes (escaping included)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            id: fc.string(),
            msisdn: fc.string(),
            service: anyUtf16,
            at: fc.integer({ min: 0, max: 4e12 }),
            code: fc.option(fc.string(), { nil: undefined }),
          }),
          { maxLength: 600 },
        ),
        (subs) => {
          const log = new EventLog()
          const want: unknown[] = []
          for (const s of subs) {
            const rec = { ...s, status: 'ACTIVE', expiry_at: s.at + 1000 }
            log.sub(s.at, s.code ? 'renewal_failed' : 'renewed', rec, new EventSubject(rec), s.code)
            const e: Record<string, unknown> = {
              at: formatTimestamp(s.at),
              type: s.code ? 'renewal_failed' : 'renewed',
              subscription_id: s.id,
              msisdn: s.msisdn,
              service_code: s.service,
              status: 'ACTIVE',
            }
            if (s.code) e.code = s.code
            e.expiry_dt = formatTimestamp(s.at + 1000)
            want.push(e)
          }
          const move = new ClockMove({ now: 'x' }, log)
          expect(move.eventCount).toBe(subs.length)
          // The bytes sent over HTTP, the parsed objects and a plain JSON.stringify all agree.
          expect(text(move.jsonParts())).toBe(JSON.stringify({ clock: { now: 'x' }, events: want }))
          expect(move.events).toEqual(want)
          expect(JSON.stringify(move)).toBe(JSON.stringify({ clock: { now: 'x' }, events: want }))
        },
      ),
      { numRuns: 200 },
    )
  })

  it("one subscription's events of different kinds in a row (its common middle is not reused for others)", () => {
    const log = new EventLog()
    const subject = new EventSubject({ id: 'S', msisdn: '601', service: 'X' })
    log.sub(0, 'renewed', { status: 'ACTIVE', expiry_at: 1 }, subject)
    log.sub(1, 'renewal_failed', { status: 'EXPIRED', expiry_at: 1 }, subject, 'BARRED')
    log.sub(2, 'renewed', { status: 'ACTIVE', expiry_at: 3 }, subject)
    log.sub(3, 'carrier_canceled', { status: 'CANCELED', expiry_at: 3 }, subject)
    expect(new ClockMove({}, log).events.map((e) => [e.type, e.status, e.code, e.expiry_dt?.slice(20)])).toEqual([
      ['renewed', 'ACTIVE', undefined, '001000'],
      ['renewal_failed', 'EXPIRED', 'BARRED', '001000'],
      ['renewed', 'ACTIVE', undefined, '003000'],
      ['carrier_canceled', 'CANCELED', undefined, '003000'],
    ])
  })

  it('past its size limit a log counts events instead of listing them, and the answer says how many', () => {
    const log = new EventLog(1000)
    const subject = new EventSubject({ id: 'S', msisdn: '601', service: 'X' })
    for (let i = 0; i < 20; i++) log.sub(i, 'renewed', { status: 'ACTIVE', expiry_at: i + 1 }, subject)
    const move = new ClockMove({}, log)
    expect(move.events.length).toBeGreaterThan(3)
    expect(move.events.length + log.omitted).toBe(20)
    expect(move.eventCount).toBe(20)
    expect(log.bytes().length).toBeLessThanOrEqual(1000)
    const answer = JSON.parse(text(move.jsonParts()))
    expect(answer).toEqual({ clock: {}, events: move.events, events_omitted: 20 - move.events.length })
    expect(answer.events.map((e: any) => e.at)).toEqual(move.events.map((_, i) => formatTimestamp(i)))
    expect(JSON.parse(JSON.stringify(move))).toEqual(answer)
  })

  it('verification events, and an empty move', () => {
    const log = new EventLog()
    expect(new ClockMove({}, log).events).toEqual([])
    expect(text(new ClockMove({}, log).jsonParts())).toBe('{"clock":{},"events":[]}')
    log.verif(0, 'otp_expired', { id: 'v"1', msisdn: '601', service: 'S' })
    expect(new ClockMove({}, log).events).toEqual([
      { at: '1970-01-01T00:00:00.000000', type: 'otp_expired', verif_request_id: 'v"1', msisdn: '601', service_code: 'S' },
    ])
  })
})
