/**
 * A page's sentences, as a reader meets them: code blocks, tables, headings and HTML comments left
 * out; an inline code span kept whole (its words count, its dots end nothing); each list item a
 * sentence of its own (or more, if it holds several).
 */

/** Words before a dot that do not end a sentence. */
const ABBREVIATIONS = new Set(['e.g', 'i.e', 'cf', 'vs', 'etc', 'approx', 'no', 'fig', 'resp', 'incl', 'min', 'max'])

/** Markdown without the parts that are not prose: fenced code, tables, headings, comments, front matter. */
function prose(markdown: string): string[] {
  const text = markdown.replace(/<!--[\s\S]*?-->/g, '\n')
  const blocks: string[] = []
  let current: string[] = []
  let fence: string | null = null
  const flush = () => {
    if (current.length) blocks.push(current.join(' '))
    current = []
  }
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+$/, '')
    const fenceMark = /^\s*(```+|~~~+)/.exec(line)
    if (fence) {
      if (fenceMark && fenceMark[1]!.startsWith(fence)) fence = null
      continue
    }
    if (fenceMark) {
      flush()
      fence = fenceMark[1]!
      continue
    }
    const body = line.replace(/^\s*(>\s?)+/, '')
    if (body.trim() === '' || /^\s*\|/.test(body) || /^\s*#{1,6}\s/.test(body) || /^\s*(-{3,}|\*{3,})\s*$/.test(body)) {
      flush()
      continue
    }
    // A list item starts a block of its own; its indented lines continue it.
    const item = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(body)
    if (item) {
      flush()
      current.push(item[1]!)
    } else current.push(body.trim())
  }
  flush()
  return blocks
}

/** The code spans of a block replaced by placeholders (\u0000n\u0000), and the spans themselves. */
function hideCode(block: string): { text: string; spans: string[] } {
  const spans: string[] = []
  const text = block.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, _ticks: string, inner: string) => {
    spans.push(inner.trim())
    return `\u0000${spans.length - 1}\u0000`
  })
  return { text, spans }
}

/** Links to their text, images to their alt text, autolinks to one word, emphasis marks gone. */
const plain = (text: string) =>
  text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/!?\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<(https?:[^>]+)>/g, '$1')
    .replace(/<\/?[a-z][^>]*>/gi, ' ')
    .replace(/\*+|(?<!\w)_+|_+(?!\w)/g, '')

/**
 * One block's sentences. A sentence ends at `.`, `!` or `?` (after any closing quotes or brackets)
 * followed by white space and a capital, a digit, a quote, a bracket or a code span; a dot with no
 * space after it (a version, a file name, a URL) or after an abbreviation ends nothing.
 */
function splitBlock(block: string): string[] {
  const hidden = hideCode(block)
  const { spans } = hidden
  const text = plain(hidden.text)
  const out: string[] = []
  let start = 0
  const end = /([.!?])(["'”’)\]]*)(\s+)(?=["'“‘(\[\u0000*_]|\p{Lu}|\p{N})/gu
  for (let m = end.exec(text); m; m = end.exec(text)) {
    const before = text.slice(start, m.index)
    const word = /([\p{L}.'’]+)$/u.exec(before)?.[1] ?? ''
    const lastWord = word.toLowerCase()
    if (m[1] === '.' && (ABBREVIATIONS.has(lastWord) || /^\p{Lu}$/u.test(word) || /(^|\.)\p{L}\.\p{L}$/u.test(lastWord))) continue
    out.push(text.slice(start, m.index + m[1]!.length + m[2]!.length))
    start = m.index + m[0].length
  }
  out.push(text.slice(start))
  return out.map((s) => s.replace(/\u0000(\d+)\u0000/g, (_, i: string) => `\`${spans[Number(i)]}\``).trim()).filter((s) => words(s) > 0)
}

/** The words of a sentence: white-space separated tokens with a letter or a digit (inside code too). */
export function words(sentence: string): number {
  return sentence.split(/\s+/).filter((t) => /[\p{L}\p{N}]/u.test(t)).length
}

/** Every sentence of a Markdown page, in order. */
export function sentences(markdown: string): string[] {
  return prose(markdown).flatMap(splitBlock)
}

export interface Figures {
  sentences: number
  median: number
  /** The share of sentences over 40 words, 0 to 1. */
  over40: number
  longest: string
  longestWords: number
}

/** A page's sentence figures: how many, the median length in words, the share over 40 words, the longest. */
export function figures(markdown: string): Figures {
  const all = sentences(markdown)
  const lengths = all.map(words).sort((a, b) => a - b)
  const n = lengths.length
  const median = n === 0 ? 0 : n % 2 ? lengths[(n - 1) / 2]! : (lengths[n / 2 - 1]! + lengths[n / 2]!) / 2
  const longest = all.reduce((a, b) => (words(b) > words(a) ? b : a), '')
  return { sentences: n, median, over40: n ? lengths.filter((l) => l > 40).length / n : 0, longest, longestWords: words(longest) }
}
