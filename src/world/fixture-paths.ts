/**
 * Where fixture files are: a path given, or a folder's *.json files. Light (no schema), so `dcb run`
 * can judge a run file's fixture paths before it loads the library.
 */
import { readdirSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { FixtureError } from './default-world.js'

/** A file as problems name it: relative to the working folder when under it. */
export function displayName(file: string): string {
  const rel = relative(process.cwd(), file)
  return rel && !rel.startsWith('..') ? rel : file
}

/** Expands a path: a directory stands for its *.json files (not subfolders), sorted by name. */
export function expandFixturePaths(paths: string[]): string[] {
  const out: string[] = []
  for (const p of paths) {
    const abs = resolve(p)
    let st
    try {
      st = statSync(abs)
    } catch {
      throw new FixtureError([`${displayName(abs)}: no such file or directory`])
    }
    if (st.isDirectory()) {
      const files = readdirSync(abs)
        .sort()
        .filter((name) => name.endsWith('.json') && !name.endsWith('.schema.json') && !name.endsWith('.run.json'))
      // A folder that gives nothing (a wrong one, files named .JSON) would load the default world without a word.
      if (!files.length) throw new FixtureError([`${displayName(abs)}: a folder with no fixture file (*.json; *.run.json and *.schema.json are skipped)`])
      out.push(...files.map((name) => join(abs, name)))
    } else out.push(abs)
  }
  return out
}
