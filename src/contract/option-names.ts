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
    const known = Object.keys(names)
    const near = nearestName(key, known)
    return `unknown option ${key}${near ? ` (did you mean ${near}?)` : ''}; it takes ${known.join(', ')}`
  }
  return undefined
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
