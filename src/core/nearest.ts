/**
 * The nearest existing name to a misspelt one, for "did you mean" in problems: a typo in a key
 * (`sbx-my-otpp`) is told from a name that has nothing near it.
 */

/** Edit distance (insertions, deletions, substitutions, and swaps of two neighbours). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = []
  for (let i = 0; i <= a.length; i++) rows.push([i, ...new Array<number>(b.length).fill(0)])
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = d
    }
  return rows[a.length]![b.length]!
}

/**
 * The candidate closest to `name` (case ignored), if one is close enough to be a typo of it: at most
 * 2 edits, and fewer than half its length. Ties go to the first candidate.
 */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  const n = name.toLowerCase()
  let best: string | undefined
  let bestD = Infinity
  for (const c of candidates) {
    const d = editDistance(n, c.toLowerCase())
    if (d < bestD) {
      best = c
      bestD = d
    }
  }
  return best !== undefined && bestD <= 2 && bestD * 2 < Math.max(n.length, 1) ? best : undefined
}

/**
 * `nearestName` for short codes too: a two-letter country code (`mx` for `my`) is never fewer edits
 * than half its length from another, so one edit away is taken when no other candidate is as near.
 */
export function nearestCode(name: string, candidates: Iterable<string>): string | undefined {
  const all = [...candidates]
  const near = nearestName(name, all)
  if (near !== undefined || name.length > 3) return near
  const n = name.toLowerCase()
  const one = all.filter((c) => editDistance(n, c.toLowerCase()) === 1)
  return one.length === 1 ? one[0] : undefined
}

/** `; did you mean X?` when `name` is a likely typo of a candidate, else `` (`code`: a short code, see `nearestCode`). */
export function didYouMean(name: string, candidates: Iterable<string>, code = false): string {
  const near = code ? nearestCode(name, candidates) : nearestName(name, candidates)
  return near === undefined ? '' : `; did you mean ${near}?`
}

/**
 * An error map for zod parses of what users write (world files, rules, control bodies, run files):
 * an unknown key close to one its object takes and was not given is named with it
 * (`Unrecognized key: "efect" (did you mean effect?)`). Every other issue keeps zod's message.
 * Passed to each parse, not set globally: a merchant's own zod schemas keep their messages.
 */
export function unknownKeyHints(issue: { code: string; keys?: string[]; input?: unknown; inst?: unknown }): string | undefined {
  if (issue.code !== 'unrecognized_keys' || !issue.keys?.length) return undefined
  const shape = (issue.inst as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape
  if (!shape) return undefined
  const given = issue.input !== null && typeof issue.input === 'object' ? issue.input : {}
  const free = Object.keys(shape).filter((k) => !Object.hasOwn(given, k))
  const named = issue.keys.map((k) => {
    const near = nearestName(k, free)
    return near === undefined ? JSON.stringify(k) : `${JSON.stringify(k)} (did you mean ${near}?)`
  })
  return `Unrecognized key${named.length > 1 ? 's' : ''}: ${named.join(', ')}`
}

/** The parse options that name the nearest key of an unknown one (see `unknownKeyHints`). */
export const HINT_KEYS = { error: unknownKeyHints } as const
