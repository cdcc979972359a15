/** Exit codes of every dcb command. */
export const EXIT = {
  OK: 0,
  /** A FAIL envelope, a failed expectation, or a server that could not start. */
  FAIL: 1,
  /** Bad or missing options. */
  USAGE: 2,
  /** The server is unreachable or does not speak the API. */
  UNREACHABLE: 3,
  /** A question canceled with Ctrl-C (128 + SIGINT, as a shell reports an interrupted command). */
  CANCELED: 130,
} as const

/** An error that ends the command with one line on stderr and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.FAIL,
  ) {
    super(message)
  }
}

/**
 * The name the user typed, so hints can be pasted back: the name of the link or copy it was run by
 * (`dcb-sandbox`, as iproute2 ships another `dcb`; a copy of the single executable, whose first
 * argument is its own name as run), or `dcb` for a script Node was handed (`node bin/dcb.js`, npm's
 * shims on Windows) or no name at all; `npx NAME` when npx ran it, since the bare name is not on PATH there.
 */
export function invokedAs(): string {
  const base = (process.argv[1] ?? '').split(/[\\/]/).pop() ?? ''
  const name = base === '' || /\.(c|m)?js$/.test(base) ? 'dcb' : base.replace(/\.exe$/i, '')
  // npm exec runs `npx dcb …` as a script named after the command; a tool npx ran (npx vitest) that runs dcb names itself there.
  const env = process.env
  const byNpx = env.npm_lifecycle_event === 'npx' && /^['"]?([^'"\s]+)/.exec(env.npm_lifecycle_script ?? '')?.[1] === name
  return byNpx ? `npx ${name}` : name
}
