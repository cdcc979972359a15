/**
 * Docs a newcomer reads once: on every page of README.md and docs/, the median sentence is at most
 * 20 words and at most 10% of sentences are over 40 words. Code blocks and tables are left out; an
 * inline code span counts its words but ends no sentence; a list item is a sentence.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { figures, sentences, words } from './sentences.js'

const MEDIAN = 20
const LONG = 40
const LONG_SHARE = 0.1

const docPages = (dir = 'docs'): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? docPages(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : []))
const PAGES = ['README.md', ...docPages()]

describe('the sentence splitter', () => {
  it('ends a sentence at a full stop, a question mark or an exclamation mark before a capital', () => {
    expect(sentences('One idea here. Another one? Yes! And a last.')).toEqual(['One idea here.', 'Another one?', 'Yes!', 'And a last.'])
  })

  it('does not end a sentence at an abbreviation, a version number or a file name', () => {
    expect(sentences('Use a tool, e.g. PostgreSQL 16.4 or Node 24.1.0, i.e. Not the old ones. Read docs/cli.md and v1.2 first.')).toEqual([
      'Use a tool, e.g. PostgreSQL 16.4 or Node 24.1.0, i.e. Not the old ones.',
      'Read docs/cli.md and v1.2 first.',
    ])
  })

  it('ends a sentence after a unit such as s, not after an initial', () => {
    expect(sentences('It closes after 5 s. Headers come first. Ask J. Smith.')).toEqual(['It closes after 5 s.', 'Headers come first.', 'Ask J. Smith.'])
  })

  it('ends a sentence after a word with an apostrophe, not after a capital letter', () => {
    expect(sentences("It keeps the last one's. So does plan B. Then stop.")).toEqual(["It keeps the last one's.", 'So does plan B. Then stop.'])
  })

  describe('an inline code span', () => {
    const split = () => sentences('Run `dcb serve. --clock 2026-01-01T00:00:00.000` now. Then stop.')

    it('is kept whole', () => {
      const [one, ...rest] = split()
      expect(rest).toEqual(['Then stop.'])
      expect(one).toBe('Run `dcb serve. --clock 2026-01-01T00:00:00.000` now.')
    })

    it('counts the words inside it', () => {
      const [one] = split()
      expect(words(one!)).toBe(6)
    })
  })

  it('starts a sentence at a code span after a full stop', () => {
    expect(sentences('It is done. `dcb reset` clears it.')).toEqual(['It is done.', '`dcb reset` clears it.'])
  })

  describe('on a page', () => {
    const page = [
      '# A heading. With dots',
      '',
      'A paragraph that goes',
      'over two lines.',
      '',
      '```sh',
      'echo "not. prose. at all"',
      '```',
      '',
      '| a | b |',
      '|---|---|',
      '| one. Two. | three |',
      '',
      '<!-- a comment. Here -->',
      '- an item without a stop',
      '- another item, [with a link](cli.md#a.b).',
      '  It goes on here.',
      '1. a numbered item',
    ].join('\n')
    /** The sentences of the page that hold any of `bits`. */
    const holding = (...bits: string[]) => sentences(page).filter((s) => bits.some((b) => s.includes(b)))

    it('reads only its prose', () => {
      expect(sentences(page)).toEqual([
        'A paragraph that goes over two lines.',
        'an item without a stop',
        'another item, with a link.',
        'It goes on here.',
        'a numbered item',
      ])
    })

    it('leaves out headings', () => {
      expect(holding('heading', 'With dots')).toEqual([])
    })

    it('leaves out code blocks', () => {
      expect(holding('echo', 'prose')).toEqual([])
    })

    it('leaves out tables', () => {
      expect(holding('|', 'one.', 'Two.', 'three')).toEqual([])
    })

    it('leaves out comments', () => {
      expect(holding('comment', 'Here')).toEqual([])
    })

    it('makes each list item a sentence', () => {
      expect(sentences(page)).toEqual(expect.arrayContaining(['an item without a stop', 'another item, with a link.', 'It goes on here.', 'a numbered item']))
    })
  })

  describe("a page's figures", () => {
    const long = Array.from({ length: 41 }, (_, i) => `W${i}`).join(' ') + '.'
    const f = figures(`One two three. One two three four five. ${long}`)

    it('count its sentences', () => {
      expect(f).toMatchObject({ sentences: 3 })
    })

    it('give the median sentence length in words', () => {
      expect(f).toMatchObject({ median: 5 })
    })

    it('give the share of sentences over 40 words', () => {
      expect(f.over40).toBeCloseTo(1 / 3)
    })

    it('give the longest sentence, with its length in words', () => {
      expect(f).toMatchObject({ longestWords: 41 })
      expect(f.longest).toBe(long)
    })
  })
})

describe('sentence figures of every page', () => {
  it('finds the pages', () => {
    expect(PAGES.length).toBeGreaterThan(15)
  })

  for (const page of PAGES) {
    const f = figures(readFileSync(page, 'utf8'))
    const said =
      `${page}: ${f.sentences} sentences, median ${f.median} words, ${(f.over40 * 100).toFixed(0)}% over ${LONG} words ` +
      `(at most ${MEDIAN} and ${LONG_SHARE * 100}%); its longest (${f.longestWords} words): ${f.longest}`
    it(`${page}: median sentence at most ${MEDIAN} words`, () => {
      expect(f.sentences, page).toBeGreaterThan(0)
      expect(f.median <= MEDIAN, said).toBe(true)
    })

    it(`${page}: at most ${LONG_SHARE * 100}% of sentences over ${LONG} words`, () => {
      expect(f.sentences, page).toBeGreaterThan(0)
      expect(f.over40 <= LONG_SHARE, said).toBe(true)
    })
  }
})
