/**
 * `dcb --help` and every command's help wrap at spaces within the width: no line longer than it
 * (a terminal would break it inside a word) but a word longer than a line, alone on it, and no word
 * broken, at 30, 40, 60, 80 and 120 columns, from
 * COLUMNS (a pipe) or the terminal's own width (a pty). Through the binary; the words are compared
 * with the same help printed unwrapped, and that with the descriptions commander holds.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import type { Command } from 'commander'
import { beforeAll, describe, expect, it } from 'vitest'
import { program } from '../../src/cli/index.js'
import { BIN, dcb } from './run.js'

/** Every command path with its own help: the program, each command, and the commands of a group. */
function paths(cmd: Command, prefix: string[] = []): [string[], Command][] {
  return cmd.commands
    .filter((sub) => sub.name() !== 'help')
    .flatMap((sub) => [[[...prefix, sub.name()], sub] as [string[], Command], ...paths(sub, [...prefix, sub.name()])])
}
const ALL: [string[], Command][] = [[[], program], ...paths(program)]

const words = (text: string) => text.split(/\s+/).filter(Boolean)
const help = async (path: string[], columns: number) => {
  const r = await dcb([...path, '--help'], { env: { COLUMNS: String(columns) } })
  expect([r.code, r.stderr]).toEqual([0, ''])
  return r.stdout
}

/** Runs `fn` on every item, a few at a time (each spawns the binary). */
async function eachOf<T, R>(items: T[], fn: (item: T) => Promise<R>, at = 4): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: at }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i]!)
      }
    }),
  )
  return out
}

/** The help of each command unwrapped (a width nothing reaches), once for the file. */
let wide: string[] = []
beforeAll(async () => {
  wide = await eachOf(ALL, ([path]) => help(path, 100_000))
}, 120_000)

describe('help wraps at word boundaries', () => {
  it('unwrapped, each description is on one line as commander holds it', async () => {
    expect(ALL.length).toBeGreaterThan(25)
    ALL.forEach(([, cmd], i) => {
      const lines = wide[i]!.split('\n')
      for (const option of cmd.options.filter((o) => !o.hidden))
        expect(lines.some((l) => l.includes(`${option.flags}  `) && l.includes(option.description))).toBe(true)
      for (const sub of cmd.commands.filter((s) => s.name() !== 'help'))
        expect(lines.some((l) => l.trimStart().startsWith(sub.name()) && l.includes(sub.description()))).toBe(true)
    })
  })

  // Below 60 columns a word may be longer than a line (serve's postgres://USER:PASSWORD@… URL): it stays whole, alone on its line.
  it.each([30, 40, 60, 80, 120])('at %i columns (COLUMNS): no line longer, no word broken, every command', { timeout: 120_000 }, async (columns) => {
    const wrapped = await eachOf(ALL, ([path]) => help(path, columns))
    ALL.forEach(([path], i) => {
      const text = wrapped[i]!
      const long = text.split('\n').filter((l) => l.length > columns && (columns >= 60 || /\s/.test(l.trim())))
      expect({ command: path.join(' '), long }).toEqual({ command: path.join(' '), long: [] })
      expect({ command: path.join(' '), words: words(text) }).toEqual({ command: path.join(' '), words: words(wide[i]!) })
    })
    // Something was wrapped: the narrow widths are not the unwrapped help again.
    if (columns < 120) expect(wrapped[0]!.split('\n').length).toBeGreaterThan(wide[0]!.split('\n').length)
  })

  it("on a terminal: the terminal's width, before COLUMNS", async () => {
    const onPty = (args: string[], columns: number) =>
      new Promise<string>((resolve) =>
        execFile(
          'python3',
          [join(import.meta.dirname, 'pty_drive.py'), '[]', '--', process.execPath, BIN, ...args],
          { env: { ...process.env, PTY_COLS: String(columns), COLUMNS: '200', NO_COLOR: '1' } },
          (_err, stdout) => resolve(stdout.replace(/\r\n/g, '\n')),
        ),
      )
    for (const [path, columns] of [
      [[], 60],
      [['serve'], 60],
      [['logs'], 80],
    ] as [string[], number][]) {
      const text = await onPty([...path, '--help'], columns)
      expect(text.split('\n').filter((l) => l.length > columns)).toEqual([])
      expect(words(text)).toEqual(words(wide[ALL.findIndex(([p]) => p.join(' ') === path.join(' '))]!))
    }
  })
})
