/**
 * Errors the library throws name library calls: the control API's messages point to its own routes
 * and to the CLI (`POST /_sandbox/reset`, `dcb reset --clock`), which a test suite calling
 * `sandbox.setTime` does not use. The remedy part of those messages is said again in library terms.
 */

/** Control API remedies and their library wording, per error code. */
const REMEDIES: Record<string, [RegExp, (...groups: string[]) => string][]> = {
  CLOCK_BACKWARDS: [
    [/reset with a clock: POST \/_sandbox\/reset \{"clock": "([^"]*)"\} or dcb reset --clock \S+$/, (to) => `call sandbox.reset({ clock: '${to}' })`],
  ],
  SESSION_LIMIT: [
    [
      /^the server holds its limit of (\d+) sessions? \(--max-sessions\); delete one with DELETE \/_sandbox\/sessions\/NAME$/,
      (max) =>
        `the sandbox holds its limit of ${max} session${max === '1' ? '' : 's'} (createSandbox({ maxSessions })); raise maxSessions or use fewer session names`,
    ],
  ],
}

/** The message of a control error as the library says it. */
export function libraryMessage(code: string, message: string): string {
  for (const [pattern, say] of REMEDIES[code] ?? []) {
    const m = pattern.exec(message)
    if (m) return message.slice(0, m.index) + say(...m.slice(1))
  }
  return message
}
