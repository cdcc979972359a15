/**
 * The defaults of the sandbox, written once: where `dcb serve` listens and keeps its data, the key
 * the default world gives the demo merchant, where the client commands look for the server.
 * Plain constants and checks (no imports): the CLI loads this at start-up.
 */
export const DEFAULT_PORT = 7700
export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_BASE_URL = `http://${DEFAULT_HOST}:${DEFAULT_PORT}`
/** The demo merchant's API key in the default world (`fixtures/world.json`). */
export const DEMO_API_KEY = 'sandbox-demo-key'
/** The data file of `dcb serve` and `dcb seed` (snapshot + write-ahead log beside it), relative to the working directory. */
export const DEFAULT_DATA_FILE = '.dcb/sandbox.json'
/** The default world, relative to the package root. */
export const DEFAULT_WORLD_FILE = 'fixtures/world.json'
/** The longest `GET /_sandbox/otp?wait=` in seconds. */
export const MAX_OTP_WAIT_S = 120
/** A session name (`X-DCB-Session`, `--session`): 1-64 characters of A-Z a-z 0-9 . _ - */
export const SESSION_NAME = /^[A-Za-z0-9._-]{1,64}$/
/** What a session name is, in the words of the refusals of one that is not. */
export const SESSION_NAME_RULE = '1-64 characters of A-Z a-z 0-9 . _ -'

/**
 * `.` and `..` fit the grammar but cannot name a new session: fetch, curl and browsers read them in
 * `/_sandbox/sessions/NAME` as path steps, so the session could never be deleted by URL. One kept
 * from an older version still loads, answers and can be deleted (`/_sandbox/sessions/%2E%2E` with curl).
 */
export function isDotName(name: string): boolean {
  return name === '.' || name === '..'
}

/** Why `.` or `..` is refused as a new session's name. */
export function dotNameRefusal(name: string): string {
  return `"${name}" cannot name a new session: URL clients read . and .. in /_sandbox/sessions/${name} as path steps, so it could never be deleted; use another name`
}
/**
 * What an HTTP header value may hold (tab, printable ASCII, Latin-1), as Node's http and fetch send
 * it: an API key or admin token with anything else is refused before a call, not by the transport.
 */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

/**
 * How a user writes a number (a control API query, a CLI option): decimal digits, with a fraction
 * where one is taken. Number() alone would also take `0x10` (16), `1e1`, ` 5`, `+5` and `` (0).
 */
export const DECIMAL = /^\d+(\.\d+)?$/
export const WHOLE_DECIMAL = /^\d+$/
