/**
 * Colour by the usual conventions, decided once at start-up: `--no-color` wins, then `--color` or
 * FORCE_COLOR (chalk reads them), then NO_COLOR (any non-empty value, on a terminal too), then
 * whether the output is a terminal.
 */
import chalk from 'chalk'

export function decideColor(argv: string[], env: NodeJS.ProcessEnv): void {
  const end = argv.indexOf('--')
  const flags = end === -1 ? argv : argv.slice(0, end)
  if (flags.includes('--no-color')) chalk.level = 0
  else if (flags.includes('--color') || 'FORCE_COLOR' in env) return
  else if (env.NO_COLOR) chalk.level = 0
}
