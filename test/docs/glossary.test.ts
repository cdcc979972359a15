/**
 * The glossary (docs/reference/glossary.md) defines dcb's in-house words, and each page that uses one
 * links it there the first time, so a newcomer is never left with an unexplained word.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { firstUses, glossaryTerms, termPattern } from './glossary-terms.js'

const GLOSSARY = 'docs/reference/glossary.md'
const docPages = (dir = 'docs'): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? docPages(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : []))
const PAGES = ['README.md', ...docPages()].filter((p) => normalize(p) !== normalize(GLOSSARY))
const terms = glossaryTerms(readFileSync(GLOSSARY, 'utf8'))

describe('the glossary', () => {
  const words = terms.map((t) => t.word.toLowerCase())

  it('defines the in-house words the docs use', () => {
    for (const w of ['session', 'world', 'rule', 'step', 'effect', 'magic ending', 'request log', 'write-ahead log', 'sandbox clock', 'inbox'])
      expect(words).toContain(w)
    for (const w of ['coverage outcome', 'finding', 'policy', 'fault', 'replica', 'shared store', 'fixture file', 'run file', 'scenario', 'occurrence'])
      expect(words).toContain(w)
  })

  it('defines each word under a heading of its own', () => {
    expect(new Set(words).size).toBe(words.length)
  })
})

describe('a first use of a glossary word, found as a reader meets it', () => {
  const uses = () => {
    const ts = [
      { word: 'session', anchor: 'session' },
      { word: 'default session', anchor: 'default-session' },
      { word: 'rule', anchor: 'rule' },
    ]
    const page = [
      '# A session heading',
      '',
      '```sh',
      'a session in code',
      '```',
      '| a session in a table |',
      'Code `--session` and [a session elsewhere](cli.md) do not count;',
      'the [default session](glossary.md#default-session) is another word.',
      'Sessions count here, and [rules](glossary.md#rule) are linked.',
    ].join('\n')
    return firstUses(page, ts)
  }

  it('is found in prose, not in a heading, code, a table or a link elsewhere', () => {
    expect(uses().get('session')).toMatchObject({ text: 'Sessions', linked: false })
  })

  it('of a longer word (default session) counts for that word alone', () => {
    expect(uses().get('default session')).toMatchObject({ linked: true })
  })

  it('is linked when it links to the glossary, in the plural too', () => {
    expect(uses().get('rule')).toMatchObject({ text: 'rules', linked: true })
  })

  it('may be a plural in -ies', () => {
    expect('a retries b'.match(termPattern('retry'))).toEqual(['retries'])
  })

  it('is never part of a hyphenated word', () => {
    expect('direct-carrier-billing'.match(termPattern('carrier'))).toBeNull()
  })
})

describe('each page links a glossary word the first time it uses it', () => {
  for (const page of PAGES)
    it(page, () => {
      const text = readFileSync(page, 'utf8')
      const target = relative(dirname(page), GLOSSARY)
      const unlinked = [...firstUses(text, terms)]
        .filter(([, use]) => !use.linked)
        .map(([word, use]) => {
          const line = text.slice(0, use.offset).split('\n').length
          const anchor = terms.find((t) => t.word === word)!.anchor
          return `${page}:${line}: "${use.text}" should be [${use.text}](${target}#${anchor})`
        })
      expect(unlinked).toEqual([])
    })
})
