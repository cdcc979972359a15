/**
 * A run file read whole before anything runs: a regular file within its size (USER_FILES.run),
 * UTF-8 (or UTF-16 with its mark), JSON nested at most RUN_MAX_DEPTH deep, an object with `steps`.
 * What is wrong says where, never what the file holds: the path may name any file.
 */
import { describeJsonProblem, parseJsonText } from '../json-text.js'
import { readUserText, UserFileError } from '../user-text.js'
import { CliError, EXIT } from './errors.js'

/** How deep a run file may nest arrays and objects (its steps, their bodies and rules). */
export const RUN_MAX_DEPTH = 64

/** The run file's JSON document, or a CliError (exit 2) naming the file and what is wrong with it. */
export function readRunDocument(file: string): Record<string, unknown> {
  let text: string
  try {
    text = readUserText(file, 'run')
  } catch (e) {
    if (e instanceof UserFileError) throw new CliError(`${file}: ${e.message}`, EXIT.USAGE)
    throw e
  }
  const parsed = parseJsonText(text, RUN_MAX_DEPTH)
  if ('problem' in parsed) throw new CliError(`${file}: ${describeJsonProblem(parsed.problem)}`, EXIT.USAGE)
  const doc = parsed.value
  // Some other JSON file (a package.json, a key file): said so, without its keys or values.
  if (!doc || typeof doc !== 'object' || Array.isArray(doc) || !('steps' in doc))
    throw new CliError(`${file}: is not a run file: a JSON object with "steps" (a list of steps) was expected`, EXIT.USAGE)
  return doc as Record<string, unknown>
}
