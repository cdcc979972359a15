/**
 * The request log (`src/runtime/request-log.ts`) called directly: a ring bounded by count, and by
 * the bytes of request bodies every request log of a server keeps together.
 */
import { describe, expect, it } from 'vitest'
import { RequestLog, RequestLogBudget } from '../../src/runtime/request-log.js'
import type { RequestLogRecord } from '../../src/store/request-log-feed.js'

/** A merchant call's entry with `request` as its body text. */
const entry = (request: string | null, msisdn: string | null = null): RequestLogRecord => ({
  time: Date.UTC(2026, 0, 31, 9),
  sandbox_time: Date.UTC(2026, 0, 31, 9),
  method: 'POST',
  path: '/subscriptions/status',
  ip: '127.0.0.1',
  merchant: 'demo',
  msisdn,
  http_status: 200,
  message: 'SUCCESS',
  duration_ms: 1,
  request,
  response: null,
})

const bodies = (log: RequestLog) => log.list(100).map((e) => e.request)

describe('RequestLog', () => {
  it('numbers entries from 1', () => {
    const log = new RequestLog(10)
    expect([log.add(entry('"a"')), log.add(entry('"b"'))]).toEqual([1, 2])
  })

  it('lists entries newest first', () => {
    const log = new RequestLog(10)
    log.add(entry('"a"'))
    log.add(entry('"b"'))
    expect(log.list(100).map((e) => e.id)).toEqual([2, 1])
  })

  it('keeps the latest `capacity` entries, dropping the oldest', () => {
    const log = new RequestLog(2)
    for (const body of ['"a"', '"b"', '"c"']) log.add(entry(body))
    expect(bodies(log)).toEqual(['c', 'b'])
    expect(log.holds(1)).toBe(false)
    expect(log.size).toBe(2)
  })

  it('lists only the entries after `since`', () => {
    const log = new RequestLog(10)
    for (const body of ['"a"', '"b"', '"c"']) log.add(entry(body))
    expect(log.list(100, 1).map((e) => e.id)).toEqual([3, 2])
  })

  it('lists only the entries about the MSISDN asked for', () => {
    const log = new RequestLog(10)
    log.add(entry('"a"', '60123456001'))
    log.add(entry('"b"', '60123456002'))
    expect(log.list(100, 0, '60123456001').map((e) => e.request)).toEqual(['a'])
  })

  it('lists a body that is not JSON as its text', () => {
    const log = new RequestLog(10)
    log.add(entry('not json'))
    expect(bodies(log)).toEqual(['not json'])
  })

  it('lists no body as null', () => {
    const log = new RequestLog(10)
    log.add(entry(null))
    expect(bodies(log)).toEqual([null])
  })

  it('lists a body nested deeper than 64 levels as its text', () => {
    const log = new RequestLog(10)
    const deep = '['.repeat(65) + ']'.repeat(65)
    log.add(entry(deep))
    expect(bodies(log)).toEqual([deep])
  })

  it('forgets every entry on clear', () => {
    const log = new RequestLog(10)
    log.add(entry('"a"'))
    log.clear()
    expect(log.size).toBe(0)
  })

  it('numbers on after a clear from where it was', () => {
    const log = new RequestLog(10)
    log.add(entry('"a"'))
    log.clear()
    expect(log.add(entry('"b"'))).toBe(2)
  })
})

describe('RequestLogBudget', () => {
  it('drops the oldest body of any request log once the bodies together pass it', () => {
    // Each body is 6 bytes: two fit, a third passes the budget.
    const budget = new RequestLogBudget(12)
    const [a, b] = [new RequestLog(10, budget), new RequestLog(10, budget)]
    a.add(entry('"aaaa"'))
    b.add(entry('"bbbb"'))
    a.add(entry('"cccc"'))
    expect([bodies(a), bodies(b)]).toEqual([['cccc'], ['bbbb']])
    expect(budget.bytes).toBe(12)
  })

  it('keeps the entry just added even when its body alone passes it', () => {
    const log = new RequestLog(10, new RequestLogBudget(4))
    log.add(entry('"a"'))
    log.add(entry('"too long"'))
    expect(bodies(log)).toEqual(['too long'])
  })

  it('takes back the bytes of a request log released (its session dropped)', () => {
    const budget = new RequestLogBudget(100)
    const log = new RequestLog(10, budget)
    log.add(entry('"aaaa"'))
    budget.release(log)
    expect(budget.bytes).toBe(0)
  })
})
