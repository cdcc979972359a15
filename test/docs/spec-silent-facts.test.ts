/**
 * Nothing of "where the spec is silent" is lost in a rewrite. spec-silent-facts.json holds each
 * question the page answered (as of issue 47) with the key phrases of its answer: the code, codes,
 * statuses and figures it named. Each question and each phrase must still be found in the docs
 * (README.md or a page of docs/), on the page or where it moved.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const docPages = (dir = 'docs'): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? docPages(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : []))
/** The docs as one text: links as their text, white space collapsed, so a phrase may wrap or be linked. */
const docs = ['README.md', ...docPages()]
  .map((p) => readFileSync(p, 'utf8'))
  .join('\n')
  .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
  .replace(/\s+/g, ' ')
  .toLowerCase()
const facts = JSON.parse(readFileSync(join(import.meta.dirname, 'spec-silent-facts.json'), 'utf8')) as Record<string, string[]>
const found = (phrase: string) => docs.includes(phrase.replace(/\s+/g, ' ').toLowerCase())

describe('every fact of the spec-silent page has its place in the docs', () => {
  it('holds the questions of the page', () => {
    expect(Object.keys(facts).length).toBeGreaterThan(100)
  })

  it('finds each question', () => {
    expect(Object.keys(facts).filter((question) => !found(question))).toEqual([])
  })

  it('finds each key phrase of each question', () => {
    const lost = Object.entries(facts).flatMap(([question, phrases]) => phrases.filter((p) => !found(p)).map((p) => `${question}: ${p}`))
    expect(lost).toEqual([])
  })
})
