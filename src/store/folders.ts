/** The folders a store makes for its files, and taking them back when a start fails. */
import { existsSync, mkdirSync, rmdirSync } from 'node:fs'
import { dirname } from 'node:path'

/**
 * `mkdir -p` one level at a time, answering the folders it made, outermost first. (Node's recursive
 * mkdir loops forever where mkdir answers ENOENT for a folder whose parent exists, as under /proc.)
 */
export function makeDirs(dir: string): string[] {
  const missing: string[] = []
  let d = dir
  while (!existsSync(d)) {
    missing.push(d)
    const parent = dirname(d)
    if (parent === d) break
    d = parent
  }
  const made: string[] = []
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m)
      made.push(m)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
    }
  }
  return made
}

/** Removes folders `makeDirs` made, innermost first, as long as they are empty (anything put there stays). */
export function removeMadeDirs(made: readonly string[]): void {
  for (const dir of [...made].reverse()) {
    try {
      rmdirSync(dir)
    } catch {
      return
    }
  }
}
