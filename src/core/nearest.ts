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
