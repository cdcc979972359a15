/**
 * An options object's keys against the options a function takes: a typo (`clok`, `sesion`, `wiat`)
 * left out without a word changes what the call does. No zod and no Node: the client loads this file.
 */
import { SandboxError } from '../core/errors.js'
import { nearestName } from '../core/nearest.js'

/**
 * The problem with the first key `names` does not hold ("unknown option clok (did you mean clock?); it
 * takes …"), or undefined. `names` is a record of every option, so the compiler keeps it in step with the type.
 */
export function unknownOption(opts: object, names: Record<string, true>): string | undefined {
  for (const key of Object.keys(opts)) {
    if (Object.hasOwn(names, key)) continue
    // An old name still works, but the list says the new one only.
    const known = Object.keys(names).filter((n) => !OLD_NAMES.has(n))
    const near = nearestName(key, known)
    return `unknown option ${key}${near ? ` (did you mean ${near}?)` : ''}; it takes ${known.join(', ')}`
  }
  return undefined
}

/** Options renamed, by their new names: the old ones keep working (code written before the rename). */
export const RENAMED_OPTIONS = [
  ['requestLogSize', 'journalSize'],
  ['requestLogBytes', 'journalBytes'],
] as const

const OLD_NAMES: ReadonlySet<string> = new Set(RENAMED_OPTIONS.map(([, old]) => old))

/**
 * An option given both by its name and by its old name, with different values: what to say, or
 * undefined. `said` writes a name as the user typed it (the CLI's `--request-log-size`).
 */
export function renamedProblem(opts: object, name: string, old: string, said = (n: string) => n): string | undefined {
  const a = (opts as Record<string, unknown>)[name]
  const b = (opts as Record<string, unknown>)[old]
  if (a === undefined || b === undefined || a === b) return undefined
  return `${said(old)} is the old name of ${said(name)}: give one of them (${JSON.stringify(a)} and ${JSON.stringify(b)} were given)`
}

function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `${typeof value} ${String(value)}`
}

/**
 * Refuses an options object that is not one, and any key `fn` does not take, naming it (and the option it
 * is a typo of): left out without a word, `clok` ran the sandbox on real time and `apikey` called as the
 * demo merchant. `names` is a record of every option so the compiler keeps it in step with the type.
 */
export function checkOptionNames(fn: string, opts: unknown, names: Record<string, true>): void {
  const known = Object.keys(names)
  if (opts === undefined) throw new SandboxError('BAD_REQUEST', `${fn}: options are needed: ${fn}({ ${known[0]}: … })`)
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts))
    throw new SandboxError(
      'BAD_REQUEST',
      `${fn}: options must be an object such as { ${known[0]}: … } (got ${Array.isArray(opts) ? 'an array' : opts === null ? 'null' : shown(opts)})`,
    )
  const problem = unknownOption(opts, names)
  if (problem) throw new SandboxError('BAD_REQUEST', `${fn}: ${problem}`)
}
