/**
 * An options object's keys against the options a function takes: a typo (`clok`, `sesion`, `wiat`)
 * left out without a word changes what the call does. No zod and no Node: the client loads this file.
 */
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
