import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { addDuration, addMonthsByDate, formatTimestamp, parseDuration, parseTimestamp, writeTimestamp } from '../../src/core/time.js'

const t = (s: string) => Date.parse(s + 'Z')

describe('time', () => {
  it('formats UTC with six fractional digits, without a zone', () => {
    expect(formatTimestamp(t('2026-04-29T10:15:30.123'))).toBe('2026-04-29T10:15:30.123000')
    expect(formatTimestamp(0)).toBe('1970-01-01T00:00:00.000000')
  })

  it('formats any time like toISOString would (year 1970 to 9999)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253402300799999 }), (ms) => {
        expect(formatTimestamp(ms)).toBe(new Date(ms).toISOString().slice(0, 23) + '000')
      }),
      { numRuns: 20000 },
    )
    for (const edge of ['2000-02-29T23:59:59.999', '2100-03-01T00:00:00.000', '1999-12-31T23:59:59.001']) expect(formatTimestamp(t(edge))).toBe(edge + '000')
  })

  it('parses ISO timestamps, a zoneless one as UTC', () => {
    expect(parseTimestamp('2026-01-31T00:00:00')).toBe(t('2026-01-31T00:00:00'))
    expect(parseTimestamp('2026-01-31')).toBe(t('2026-01-31T00:00:00'))
    expect(parseTimestamp('2026-04-29T10:15:30.123456')).toBe(t('2026-04-29T10:15:30.123'))
    expect(parseTimestamp('2026-01-31T02:00:00+02:00')).toBe(t('2026-01-31T00:00:00'))
  })

  it('rejects impossible timestamps', () => {
    expect(parseTimestamp('2026-02-30T00:00:00')).toBeNaN()
    expect(parseTimestamp('tomorrow')).toBeNaN()
  })

  it('parses ISO-8601 durations', () => {
    expect(parseDuration('P1M')).toEqual({ months: 1, ms: 0 })
    expect(parseDuration('PT6M')).toEqual({ months: 0, ms: 360_000 })
    expect(parseDuration('P1DT12H')).toEqual({ months: 0, ms: 36 * 3_600_000 })
    expect(parseDuration('P1Y2M')).toEqual({ months: 14, ms: 0 })
    // ISO-8601's fraction on the smallest part, as the short forms take one (1.5h).
    expect(parseDuration('PT1.5H')).toEqual(parseDuration('1.5h'))
    expect(parseDuration('PT1.5H')).toEqual({ months: 0, ms: 90 * 60_000 })
    expect(parseDuration('P1DT0.5M')).toEqual({ months: 0, ms: 86_400_000 + 30_000 })
    expect(parseDuration('P0.5D')).toEqual({ months: 0, ms: 12 * 3_600_000 })
  })

  it('parses short durations', () => {
    expect(parseDuration('36h')).toEqual({ months: 0, ms: 36 * 3_600_000 })
    expect(parseDuration('90m')).toEqual({ months: 0, ms: 5_400_000 })
    expect(parseDuration('2w')).toEqual({ months: 0, ms: 14 * 86_400_000 })
    expect(parseDuration('1mo')).toEqual({ months: 1, ms: 0 })
  })

  it('rejects malformed durations', () => {
    for (const bad of ['P', 'PT', '', 'soon', '1x', '-1h', 'P1MT', 'PT1.5H30M', 'P1.5DT1H', 'P1.5M', 'P1.5Y']) expect(parseDuration(bad)).toBeNull()
  })

  it('adds calendar months from an anchor day, clamped to each month end', () => {
    const jan31 = t('2026-01-31T09:00:00')
    const m = parseDuration('P1M')!
    expect(formatTimestamp(addDuration(jan31, m, 1))).toBe('2026-02-28T09:00:00.000000')
    expect(formatTimestamp(addDuration(jan31, m, 2))).toBe('2026-03-31T09:00:00.000000')
    expect(formatTimestamp(addDuration(jan31, m, 3))).toBe('2026-04-30T09:00:00.000000')
    expect(formatTimestamp(addDuration(t('2028-01-31T00:00:00'), m, 1))).toBe('2028-02-29T00:00:00.000000')
    expect(formatTimestamp(addDuration(t('2028-02-29T00:00:00'), parseDuration('P1Y')!, 1))).toBe('2029-02-28T00:00:00.000000')
    expect(formatTimestamp(addDuration(t('2026-04-29T10:15:30.123'), m))).toBe('2026-05-29T10:15:30.123000')
    expect(formatTimestamp(addDuration(t('2026-12-15T00:00:00'), m))).toBe('2027-01-15T00:00:00.000000')
  })

  it('adds months by arithmetic exactly as through Date (any day, month count, leap year)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 253402300799999 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 86_400_000 }),
        (anchor, months, n, ms) => {
          expect(addDuration(anchor, { months, ms }, n)).toBe(addMonthsByDate(anchor, months * n) + ms * n)
        },
      ),
      { numRuns: 20000 },
    )
    // Month ends and leap days, where clamping decides.
    for (const a of ['2024-01-31T23:59:59.999', '2024-02-29T00:00:00.000', '2100-01-31T12:00:00.000', '2000-01-31T00:00:00.000', '9999-11-30T00:00:00.000'])
      for (let k = 1; k <= 30; k++) expect(addDuration(t(a), { months: 1, ms: 0 }, k)).toBe(addMonthsByDate(t(a), k))
  })

  it('formats times of alternating days the same as one by one (the day cache)', () => {
    const days = [t('2026-01-31T09:00:00'), t('2026-02-28T09:00:00'), t('2026-01-31T23:59:59.999'), t('2027-03-01T00:00:00')]
    for (let i = 0; i < 12; i++) {
      const ms = days[i % days.length]! + (i % 3) * 1000
      expect(formatTimestamp(ms)).toBe(new Date(ms).toISOString().slice(0, 23) + '000')
    }
  })

  it('writes the same timestamp as bytes, or declines outside whole milliseconds of 1970-9999', () => {
    const buf = new Uint8Array(40)
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253402300799999 }), fc.integer({ min: 0, max: 14 }), (ms, at) => {
        expect(writeTimestamp(ms, buf, at)).toBe(at + 26)
        expect(Buffer.from(buf.subarray(at, at + 26)).toString('latin1')).toBe(formatTimestamp(ms))
      }),
      { numRuns: 20000 },
    )
    for (const bad of [-1, 253402300800000, 1.5, NaN, Infinity]) expect(writeTimestamp(bad, buf, 0)).toBe(-1)
    // Alternating and returning days (the cache of the last two days).
    const days = [t('2026-01-31T09:00:00'), t('2026-02-28T09:00:00'), t('2026-01-31T23:59:59.999'), t('2027-03-01T00:00:00'), t('2026-02-28T10:00:00')]
    for (let i = 0; i < 40; i++) {
      const ms = days[(i * 7) % days.length]! + (i % 3) * 1000
      writeTimestamp(ms, buf, 0)
      expect(Buffer.from(buf.subarray(0, 26)).toString('latin1')).toBe(formatTimestamp(ms))
    }
  })
})
