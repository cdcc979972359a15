/**
 * The one check of a value that goes in an HTTP header (an API key, an admin token): the clients
 * (`DcbClient`, `createClient`), `createSandbox` and a run file's keys refuse it by name with the
 * character at fault, before any call, rather than leave it to the transport's own error at the first.
 */
import { HEADER_VALUE } from '../contract/defaults.js'
import { SandboxError } from '../contract/index.js'

/** What a header value may hold, said as `HEADER_VALUE` takes it (what Node's http and fetch send). */
const ACCEPTED = 'a header carries tab and U+0020 to U+00FF except U+007F (printable ASCII and Latin-1)'

/** Why `value` cannot go in an HTTP header, naming its first character none can carry (`has a character …`); undefined when it can. */
export function headerValueProblem(value: string): string | undefined {
  for (const c of value)
    if (!HEADER_VALUE.test(c))
      return `has a character an HTTP header cannot carry: ${JSON.stringify(c)} (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}); ${ACCEPTED}`
  return undefined
}

/** Throws SandboxError BAD_REQUEST naming the first value (by the name its caller knows it by) that is not text a header can carry; undefined ones are skipped. */
export function checkHeaderValues(values: [name: string, value: unknown][]): void {
  for (const [name, value] of values) {
    if (value === undefined) continue
    if (typeof value !== 'string') throw new SandboxError('BAD_REQUEST', `${name} must be text (got ${typeof value} ${String(value)})`)
    const problem = headerValueProblem(value)
    if (problem) throw new SandboxError('BAD_REQUEST', `${name} ${problem}`)
  }
}
