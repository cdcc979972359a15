/**
 * The docs send a reader to the test that holds a claim: `test/FILE.test.ts` "title". A test renamed
 * or split leaves such a citation pointing at nothing, so each one is checked against the file.
 * A "…" in a cited title stands for any text; a title may be a describe's and its test's together.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'

const docPages = (dir = 'docs'): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? docPages(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : []))
const PAGES = ['README.md', ...docPages()]

interface Citation {
  page: string
  file: string
  titles: string[]
}

const citations: Citation[] = PAGES.flatMap((page) =>
  [...readFileSync(page, 'utf8').matchAll(/`(test\/[^`\s]+\.test\.ts)`((?: "[^"]+",?)*)/g)].map((m) => ({
    page,
    file: m[1],
    titles: [...m[2].matchAll(/"([^"]+)"/g)].map((q) => q[1]),
  })),
)

/** The titles of a file's describes and tests, each alone and each joined to the next (a describe, then its first test). */
const titlesOf = (file: string): string[] => {
  const titles = [...readFileSync(file, 'utf8').matchAll(/\b(?:it|test|describe)(?:\.\w+)*\(\s*(['"`])((?:\\.|(?!\1).)*)\1/g)].map((t) =>
    t[2].replace(/\\(.)/g, '$1'),
  )
  return [...titles, ...titles.slice(1).map((t, i) => `${titles[i]} ${t}`)]
}

/** Whether `title` matches a cited one, each "…" standing for any text. */
const matches = (cited: string, title: string): boolean => {
  const parts = cited.split('…')
  const first = parts[0]
  const last = parts.length > 1 ? parts.at(-1)! : ''
  if (parts.length === 1) return title === cited
  if (!title.startsWith(first) || !title.endsWith(last) || first.length + last.length > title.length) return false
  let at = first.length
  for (const part of parts.slice(1, -1)) {
    const found = title.indexOf(part, at)
    if (found < 0 || found + part.length > title.length - last.length) return false
    at = found + part.length
  }
  return true
}

/** A cited file: one path, or a glob of `*` in its last part naming at least one file. */
const filesOf = (file: string): string[] => {
  if (!file.includes('*')) return existsSync(file) ? [file] : []
  const pattern = new RegExp(`^${file.split('/').at(-1)!.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`)
  const dir = dirname(file)
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => pattern.test(f))
        .map((f) => join(dir, f))
    : []
}

describe('the docs cite tests that exist', () => {
  it('finds citations to check', () => {
    expect(citations.filter((c) => c.titles.length).length).toBeGreaterThan(5)
  })

  it('names test files that exist', () => {
    expect(citations.filter((c) => filesOf(c.file).length === 0).map((c) => `${c.page}: ${c.file}`)).toEqual([])
  })

  it('quotes titles each of those files holds', () => {
    const stale = citations.flatMap((c) => {
      const titles = filesOf(c.file).flatMap(titlesOf)
      return c.titles.filter((cited) => !titles.some((t) => matches(cited, t))).map((cited) => `${c.page}: ${c.file} "${cited}"`)
    })
    expect(stale).toEqual([])
  })
})
