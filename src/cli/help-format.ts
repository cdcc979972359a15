/**
 * How `dcb --help` and every command's help fit the terminal: lines wrap at spaces within its width,
 * never past it (a terminal breaks an overlong line inside a word: "subscripti|ons"). Commander
 * leaves a description unwrapped when its column is narrower than 40; here a long term gets a line
 * of its own instead, and the description goes under it.
 */
import { Help } from 'commander'

/** Fewest columns a description gets beside its term (commander's minWidthToWrap). */
const MIN_DESCRIPTION = 40
/** Where a description goes when no column beside the terms fits it: under its term, this far in. */
const UNDER_INDENT = 6

/**
 * The width help wraps to: the terminal's when the output is one (a pty with no size reports 0),
 * else COLUMNS when it is a number (a pipe, a script), else 80.
 */
export function helpWidth(stream: NodeJS.WriteStream): number {
  const tty = stream.isTTY ? stream.columns : 0
  if (tty > 0) return tty
  const env = Number(process.env.COLUMNS)
  return Number.isInteger(env) && env > 0 ? env : 80
}

/** `text` wrapped at spaces to `width`, each line after the first `indent` spaces in; a word longer than a line stays whole. */
export function wrapWords(text: string, width: number, indent: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const room = width - (lines.length ? indent : 0)
    if (line && line.length + 1 + word.length > room) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  lines.push(line)
  return lines.map((l, i) => (i ? ' '.repeat(indent) + l : l))
}

/** A term on a line of its own, wrapped at spaces when wider than the help (mo's arguments at 40 columns). */
const termLines = (term: string, width: number) => wrapWords(term, width - 2, 4).map((l) => `  ${l}`)

/** The longest word of a text, in columns. */
const longestWord = (text: string) => Math.max(0, ...text.split(/\s+/).map((w) => w.length))

/** The help settings every command gets (commander copies them to each subcommand). */
export const helpSettings: Partial<Help> = {
  // Commander leaves the command's own description unwrapped below 40 columns: wrap it at any width.
  minWidthToWrap: 1,
  formatItem(this: Help, term: string, termWidth: number, description: string, helper: Help): string {
    const width = this.helpWidth ?? 80
    if (!description) return termLines(term, width).join('\n')
    // The column of the descriptions: after the terms, unless that leaves them too little room.
    const column = Math.min(termWidth, width - 4 - MIN_DESCRIPTION)
    const beside = width - column - 4
    const text = description.replace(/\s*\n\s*/g, ' ')
    // Beside (or under) the terms, aligned; a word too long for that column sends the item further left.
    if (column >= 10 && longestWord(text) <= beside) {
      const wrapped = wrapWords(text, beside, 0).map((l, i) => (i ? ' '.repeat(column + 4) + l : l))
      const own = helper.displayWidth(term) > column
      const first = own ? [...termLines(term, width), ' '.repeat(column + 4) + wrapped[0]] : [`  ${term.padEnd(column)}  ${wrapped[0]}`]
      return [...first, ...wrapped.slice(1)].join('\n')
    }
    return [...termLines(term, width), ...wrapWords(text, width - UNDER_INDENT, 0).map((l) => ' '.repeat(UNDER_INDENT) + l)].join('\n')
  },
  formatHelp(this: Help, cmd, helper): string {
    const width = this.helpWidth ?? 80
    // The usage line is not wrapped by commander: a long one (mo's arguments) goes on under "Usage:".
    return Help.prototype.formatHelp
      .call(this, cmd, helper)
      .split('\n')
      .flatMap((line) => (line.startsWith('Usage: ') && line.length > width ? wrapWords(line, width, 7) : [line]))
      .join('\n')
  },
}
