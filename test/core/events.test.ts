import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ClockMove, EventLog, EventSubject } from '../../src/core/events.js'
import { formatTimestamp } from '../../src/core/time.js'

/** Any UTF-16 text, lone surrogates and control characters included. */
const anyUtf16 = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 }).map((codes) => String.fromCharCode(...codes))

const text = (parts: Uint8Array[]) => Buffer.concat(parts).toString('utf8')

describe('clock events as JSON', () => {
  it('writes what JSON.stringify would, for any ids, MSISDNs or service codes (escaping included)', () => {
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

  it('past its size limit a log counts the events it does not list, in the answer too', () => {
    const log = new EventLog(1000)
    const subject = new EventSubject({ id: 'S', msisdn: '601', service: 'X' })
    for (let i = 0; i < 20; i++) log.sub(i, 'renewed', { status: 'ACTIVE', expiry_at: i + 1 }, subject)
    const move = new ClockMove({}, log)
    expect(move.events.length).toBeGreaterThan(3)
    expect(move.events.length + log.omitted).toBe(20)
    expect(move.eventCount).toBe(20)
    expect(log.bytes().length).toBeLessThanOrEqual(1000)
    const answer = JSON.parse(text(move.jsonParts()))
    // Past the bound the answer also counts every event by kind and lists the last ones (issue 41: a summary could not say either).
    expect(answer).toEqual({
      clock: {},
      events: move.events,
      events_omitted: 20 - move.events.length,
      event_counts: [{ type: 'renewed', count: 20 }],
      events_last: answer.events_last,
    })
    expect(answer.events_last.map((e: any) => e.at)).toEqual([...Array(20).keys()].map((i) => formatTimestamp(i)))
    expect(answer.events.map((e: any) => e.at)).toEqual(move.events.map((_, i) => formatTimestamp(i)))
    expect(JSON.parse(JSON.stringify(move))).toEqual(answer)
  })

  it('an empty move lists no events', () => {
    const log = new EventLog()
    expect(new ClockMove({}, log).events).toEqual([])
    expect(text(new ClockMove({}, log).jsonParts())).toBe('{"clock":{},"events":[]}')
  })

  it('lists a verification event', () => {
    const log = new EventLog()
    log.verif(0, 'otp_expired', { id: 'v"1', msisdn: '601', service: 'S' })
    expect(new ClockMove({}, log).events).toEqual([
      { at: '1970-01-01T00:00:00.000000', type: 'otp_expired', verif_request_id: 'v"1', msisdn: '601', service_code: 'S' },
    ])
  })

  /** Any run of events in a log of any bound and tail, beside the same events in a log without bounds. */
  const eachLog = (check: (log: EventLog, all: ReturnType<EventLog['list']>, types: string[], tail: number) => void) =>
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('renewed', 'renewal_failed', 'retry_failed', 'otp_expired', 'carrier_canceled'), { maxLength: 80 }),
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 0, max: 25 }),
        (types, limit, tail) => {
          const log = new EventLog(limit, tail)
          const everything = new EventLog()
          const subject = new EventSubject({ id: 'S', msisdn: '601', service: 'X' })
          types.forEach((type, at) => {
            for (const l of [log, everything]) {
              if (type === 'otp_expired') l.verif(at, type, { id: `v${at}`, msisdn: '601', service: 'X' })
              else if (type === 'renewed' || type === 'carrier_canceled') l.sub(at, type, { status: 'ACTIVE', expiry_at: at + 1 }, subject)
              else l.sub(at, type, { status: 'EXPIRED', expiry_at: at }, subject, at % 2 ? 'BARRED' : 'INSUFFICIENT_FUNDS', `rule r${at}`)
            }
          })
          check(log, everything.list(), types, tail)
        },
      ),
      { numRuns: 300 },
    )

  it('counts every event by type with code, listed or not (reasons, verifications too)', () => {
    eachLog((log, all, types) => {
      const byKind = new Map<string, number>()
      for (const e of all) byKind.set(`${e.type}${e.code ? ` ${e.code}` : ''}`, (byKind.get(`${e.type}${e.code ? ` ${e.code}` : ''}`) ?? 0) + 1)
      const counts = log.counts()
      expect(new Map(counts.map((k) => [`${k.type}${k.code ? ` ${k.code}` : ''}`, k.count]))).toEqual(byKind)
      expect(counts.reduce((n, k) => n + k.count, 0)).toBe(types.length)
      expect(log.count + log.omitted).toBe(types.length)
    })
  })

  it('lists the first events, none after one that did not fit', () => {
    eachLog((log, all) => {
      expect(log.list()).toEqual(all.slice(0, log.count))
    })
  })

  it('keeps the last events past the bound', () => {
    eachLog((log, all, _types, tail) => {
      // The last `tail` events of the move, as they would have been listed, whatever the bound left out.
      expect(log.last()).toEqual(tail ? all.slice(-tail) : [])
    })
  })
})
