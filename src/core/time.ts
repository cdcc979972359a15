/**
 * Time helpers: the wire format of timestamps, ISO-8601 durations and calendar periods.
 * Pure functions over epoch milliseconds (UTC); no clock reads here.
 */

const DAY_MS = 86_400_000
/** Times this module computes by arithmetic (year 1970 to 9999); others go through Date. */
const MAX_MS = 253402300800000
/** The last time a timestamp can say (four-digit years): the sandbox clock stops short of it. */
export const LAST_TIME = MAX_MS - 1

/** Howard Hinnant's civil_from_days: days since 1970-01-01 to [year, month 1-12, day 1-31]. */
function civil(days: number): [number, number, number] {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d]
}

/** Hinnant's days_from_civil: the inverse of `civil`. */
function daysFrom(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y
  const era = Math.floor(yy / 400)
  const yoe = yy - era * 400
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31
}

/** Where formatTimestamp writes (one format, one writer: writeTimestamp). */
const scratch = new Uint8Array(26)

/**
 * `2026-04-29T10:15:30.123456`: UTC, six fractional digits, no zone (docs/reference/spec-silent.md).
 * Computed by arithmetic, without a Date (times outside whole milliseconds of 1970-9999 through Date).
 */
export function formatTimestamp(ms: number): string {
  // Outside: a record's time past the year 9999 (a renewal near the end of the clock) reads as
  // ISO-8601's expanded year, still with six fractional digits.
  if (writeTimestamp(ms, scratch, 0) < 0) return new Date(ms).toISOString().replace('Z', '000')
  return String.fromCharCode.apply(null, scratch as unknown as number[])
}

/** A time of day split into hours, minutes, seconds and milliseconds (reused: no object per call). */
const tod = { h: 0, mi: 0, sec: 0, milli: 0 }

function splitDay(ms: number): typeof tod {
  let rest = ms
  tod.h = Math.floor(rest / 3_600_000)
  rest -= tod.h * 3_600_000
  tod.mi = Math.floor(rest / 60_000)
  rest -= tod.mi * 60_000
  tod.sec = Math.floor(rest / 1000)
  tod.milli = rest - tod.sec * 1000
  return tod
}

/** The last two days written by writeTimestamp (an event's time and its expiry a period later). */
const ymd = [
  { days: -1, y: 0, m: 0, d: 0 },
  { days: -1, y: 0, m: 0, d: 0 },
]

/**
 * Writes `formatTimestamp(ms)` as ASCII into `buf` at `i` (26 bytes, room checked by the caller)
 * without making a string; answers where it ended, or -1 when the time is not a whole millisecond
 * of the years 1970 to 9999 (then use formatTimestamp).
 */
export function writeTimestamp(ms: number, buf: Uint8Array, i: number): number {
  if (!(ms >= 0 && ms < MAX_MS) || !Number.isInteger(ms)) return -1
  const days = Math.floor(ms / DAY_MS)
  let day = ymd[0]!
  if (day.days !== days) {
    day = ymd[1]!
    if (day.days !== days) {
      const [y, m, d] = civil(days)
      day.days = days
      day.y = y
      day.m = m
      day.d = d
    }
    ymd[1] = ymd[0]!
    ymd[0] = day
  }
  const { y, m, d } = day
  const { h, mi, sec, milli } = splitDay(ms - days * DAY_MS)
  buf[i] = 48 + Math.floor(y / 1000)
  buf[i + 1] = 48 + (Math.floor(y / 100) % 10)
  buf[i + 2] = 48 + (Math.floor(y / 10) % 10)
  buf[i + 3] = 48 + (y % 10)
  buf[i + 4] = 45 // -
  buf[i + 5] = 48 + Math.floor(m / 10)
  buf[i + 6] = 48 + (m % 10)
  buf[i + 7] = 45 // -
  buf[i + 8] = 48 + Math.floor(d / 10)
  buf[i + 9] = 48 + (d % 10)
  buf[i + 10] = 84 // T
  buf[i + 11] = 48 + Math.floor(h / 10)
  buf[i + 12] = 48 + (h % 10)
  buf[i + 13] = 58 // :
  buf[i + 14] = 48 + Math.floor(mi / 10)
  buf[i + 15] = 48 + (mi % 10)
  buf[i + 16] = 58 // :
  buf[i + 17] = 48 + Math.floor(sec / 10)
  buf[i + 18] = 48 + (sec % 10)
  buf[i + 19] = 46 // .
  buf[i + 20] = 48 + Math.floor(milli / 100)
  buf[i + 21] = 48 + (Math.floor(milli / 10) % 10)
  buf[i + 22] = 48 + (milli % 10)
  buf[i + 23] = 48
  buf[i + 24] = 48
  buf[i + 25] = 48
  return i + 26
}

const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/

/**
 * Why a time a user gave is refused, in the words every caller uses (after its own label), or
 * undefined. The sandbox keeps milliseconds: a fraction finer than that is refused by name rather
 * than cut silently (`.123456` would have been `.123000`); `.123000`, as the sandbox writes its
 * times, is taken.
 */
export function timeProblem(text: string): string | undefined {
  if (Number.isNaN(parseTimestamp(text))) return `"${text}" is not a time: use ISO-8601, e.g. 2026-01-31T00:00:00`
  const frac = TIMESTAMP_RE.exec(text.trim())![7] ?? ''
  if (/[1-9]/.test(frac.slice(3)))
    return `"${text}" is finer than a millisecond, and the sandbox keeps time to the millisecond: use .${frac.slice(0, 3)} (or .${frac.slice(0, 3)}000)`
}

/** Parses an ISO-8601 date or date-time; a time without a zone is UTC. Returns NaN when invalid. */
export function parseTimestamp(text: string): number {
  const m = TIMESTAMP_RE.exec(text.trim())
  if (!m) return NaN
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m
  const ms = Number((frac + '000').slice(0, 3))
  let t = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s, ms)
  const check = new Date(t)
  if (check.getUTCFullYear() !== +y || check.getUTCMonth() !== +mo - 1 || check.getUTCDate() !== +d) return NaN
  if (+h > 23 || +mi > 59 || +s > 59) return NaN
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1
    const digits = zone.slice(1).replace(':', '')
    t -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000
  }
  return t
}

/** A duration split into its calendar part (months) and its exact part (milliseconds). */
export interface Duration {
  months: number
  ms: number
}

// Years and months are whole (a calendar month has no fixed length); ISO-8601 lets the smallest other part have a fraction.
const ISO_DURATION_RE =
  /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/
const SHORT_DURATION_RE = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|mo|y)$/

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** `1M` reads as a minute to some and a month to others: refused, naming both spellings. */
const AMBIGUOUS_M = /^(\d+(?:\.\d+)?)\s*M$/

export function ambiguousDuration(text: string): string | undefined {
  const m = AMBIGUOUS_M.exec(text.trim())
  if (m) return `"${text}" is ambiguous: write PT${m[1]}M or ${m[1]}m for minutes, P${m[1]}M or ${m[1]}mo for months`
  return undefined
}

/**
 * Parses `P1M`, `PT6M`, `P1DT12H`, `P2W`, `PT1.5H` (a fraction on the smallest part) or the short forms `36h`, `90m`, `10s`, `2d`, `1w`, `1mo`, `1y`.
 * Returns null when the text is not a duration (or is zero-length, e.g. `P`).
 */
export function parseDuration(text: string): Duration | null {
  const t = text.trim()
  const iso = ISO_DURATION_RE.exec(t.toUpperCase())
  if (iso && t.length > 1 && !/T$/i.test(t)) {
    const [, y, mo, w, d, h, mi, s] = iso
    // Only the last part given may have a fraction (`PT1.5H`; not `PT1.5H30M`).
    const given = [w, d, h, mi, s].filter((part) => part !== undefined)
    if (given.slice(0, -1).some((part) => part.includes('.'))) return null
    return {
      months: Number(y ?? 0) * 12 + Number(mo ?? 0),
      ms: Math.round(
        Number(w ?? 0) * UNIT_MS.w + Number(d ?? 0) * UNIT_MS.d + Number(h ?? 0) * UNIT_MS.h + Number(mi ?? 0) * UNIT_MS.m + Number(s ?? 0) * 1000,
      ),
    }
  }
  // `1M` is a minute to some and a month to others: refused (PT1M / 1m, P1M / 1mo say which).
  if (AMBIGUOUS_M.test(t)) return null
  const short = SHORT_DURATION_RE.exec(t.toLowerCase())
  if (short) {
    const n = Number(short[1])
    if (short[2] === 'mo') return Number.isInteger(n) ? { months: n, ms: 0 } : null
    if (short[2] === 'y') return Number.isInteger(n) ? { months: n * 12, ms: 0 } : null
    return { months: 0, ms: Math.round(n * UNIT_MS[short[2]]) }
  }
  return null
}

export function isZeroDuration(d: Duration): boolean {
  return d.months === 0 && d.ms === 0
}

/**
 * `anchor` plus `n` times `d`. Months are calendar months counted from the anchor and clamped at
 * month end, so a Jan 31 anchor gives Feb 28/29, then Mar 31 (the anchor day is kept).
 */
export function addDuration(anchor: number, d: Duration, n = 1): number {
  let t = anchor
  if (d.months) {
    if (!Number.isInteger(anchor) || anchor < 0 || anchor >= MAX_MS) return addMonthsByDate(anchor, d.months * n) + d.ms * n
    // By arithmetic (every renewal of a long advance comes here).
    const days = Math.floor(anchor / DAY_MS)
    const [y, m, day] = civil(days)
    const total = m - 1 + d.months * n
    const year = y + Math.floor(total / 12)
    const month = total - Math.floor(total / 12) * 12 + 1
    t = daysFrom(year, month, Math.min(day, daysInMonth(year, month))) * DAY_MS + (anchor - days * DAY_MS)
  }
  return t + d.ms * n
}

/** `addDuration`'s months through Date (times outside the years 1970 to 9999). */
export function addMonthsByDate(anchor: number, months: number): number {
  const a = new Date(anchor)
  const totalMonths = a.getUTCMonth() + months
  const year = a.getUTCFullYear() + Math.floor(totalMonths / 12)
  const month = ((totalMonths % 12) + 12) % 12
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  const day = Math.min(a.getUTCDate(), lastDay)
  return Date.UTC(year, month, day, a.getUTCHours(), a.getUTCMinutes(), a.getUTCSeconds(), a.getUTCMilliseconds())
}

/** Duration in milliseconds when it has no calendar part; for months, an average (only for display). */
export function durationMs(d: Duration): number {
  return d.ms + d.months * 30 * UNIT_MS.d
}

/** Period words per language: [singular, plural] of each unit (SMS texts are wholly in one language). */
const PERIOD_WORDS: Record<string, Record<'year' | 'month' | 'week' | 'day' | 'hour' | 'minute' | 'second', [string, string]>> = {
  en: {
    year: ['year', 'years'],
    month: ['month', 'months'],
    week: ['week', 'weeks'],
    day: ['day', 'days'],
    hour: ['hour', 'hours'],
    minute: ['minute', 'minutes'],
    second: ['second', 'seconds'],
  },
  ms: {
    year: ['tahun', 'tahun'],
    month: ['bulan', 'bulan'],
    week: ['minggu', 'minggu'],
    day: ['hari', 'hari'],
    hour: ['jam', 'jam'],
    minute: ['minit', 'minit'],
    second: ['saat', 'saat'],
  },
  bg: {
    year: ['година', 'години'],
    month: ['месец', 'месеца'],
    week: ['седмица', 'седмици'],
    day: ['ден', 'дни'],
    hour: ['час', 'часа'],
    minute: ['минута', 'минути'],
    second: ['секунда', 'секунди'],
  },
}

/** A period in words for SMS texts and pages: "month", "year", "2 weeks", "90 seconds" (in `language`: en, ms, bg; else English). */
export function describePeriod(d: Duration, language = 'en'): string {
  const w = PERIOD_WORDS[language] ?? PERIOD_WORDS.en!
  const say = (n: number, unit: keyof typeof w) => (n === 1 ? w[unit][0] : `${n} ${w[unit][1]}`)
  if (d.months === 12 && !d.ms) return say(1, 'year')
  if (d.months) return say(d.months, 'month')
  const units: [number, 'week' | 'day' | 'hour' | 'minute'][] = [
    [604_800_000, 'week'],
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
  ]
  for (const [ms, name] of units) if (d.ms % ms === 0) return say(d.ms / ms, name)
  return `${d.ms / 1000} ${w.second[1]}`
}
