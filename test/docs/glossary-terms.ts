/**
 * The glossary's headwords and where a page first uses each: the first use in prose (not in code, a
 * heading, a table, a comment, or the text of a link elsewhere) is the one that should link the
 * glossary.
 */

/** A glossary headword and its anchor in docs/reference/glossary.md. */
export interface Term {
  word: string
  anchor: string
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')

/** The `### ` headings of the glossary page. */
export function glossaryTerms(glossary: string): Term[] {
  return [...glossary.matchAll(/^### (.+)$/gm)].map((m) => ({ word: m[1]!.trim(), anchor: slug(m[1]!) }))
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A whole-word pattern for a term, plural included, across the spaces inside it. */
export function termPattern(word: string): RegExp {
  const parts = word.split(/\s+/).map(escape)
  const last = parts.pop()!
  const plural = /y$/i.test(last) ? `(?:${last}|${last.slice(0, -1)}ies)` : `${last}(?:s|es)?`
  return new RegExp(`(?<![\\w-])${[...parts, plural].join('\\s+')}(?![\\w-])`, 'gi')
}

/** A first use: where it starts in the page, the text matched, and whether a glossary link holds it. */
export interface Use {
  offset: number
  text: string
  linked: boolean
}

interface Span {
  start: number
  end: number
  /** For the text of a link: the glossary anchor it links to, or '' for a link elsewhere. */
  glossary?: string
}

/**
 * The parts of a page that are not prose to look in: fenced code, comments, tables, headings, code
 * spans, link targets, autolinks and tags; and the texts of links, which a link may not hold again.
 */
function masked(markdown: string): Span[] {
  const out: Span[] = []
  const add = (re: RegExp) => {
    for (const m of markdown.matchAll(re)) out.push({ start: m.index, end: m.index + m[0].length })
  }
  add(/^\s*(```+|~~~+)[\s\S]*?^\s*\1[^\n]*$/gm)
  add(/<!--[\s\S]*?-->/g)
  add(/^\s*(?:>\s?)*\s*(?:\||#{1,6}\s).*$/gm)
  add(/(`+)[^`][\s\S]*?\1(?!`)|<[^>\s][^>]*>/g)
  for (const m of markdown.matchAll(/\[([^\]]*)\]\(([^)\s]*)\)/g)) {
    const textEnd = m.index + 1 + m[1]!.length
    out.push({ start: m.index, end: textEnd + 1, glossary: /glossary\.md#([\w-]+)$/.exec(m[2]!)?.[1] ?? '' })
    out.push({ start: textEnd + 1, end: m.index + m[0].length })
  }
  return out
}

/**
 * Each term's first use in a page's prose. A use inside code, a heading, a table or a link target is
 * not a use; a use inside the text of a link to elsewhere (another page, another headword) is passed over.
 */
export function firstUses(markdown: string, terms: Term[]): Map<string, Use> {
  const spans = masked(markdown)
  const found = new Map<string, Use>()
  for (const term of terms)
    for (const m of markdown.matchAll(termPattern(term.word))) {
      const inside = spans.filter((s) => m.index >= s.start && m.index < s.end)
      if (inside.some((s) => s.glossary === undefined || s.glossary !== term.anchor)) continue
      found.set(term.word, { offset: m.index, text: m[0], linked: inside.length > 0 })
      break
    }
  return found
}
