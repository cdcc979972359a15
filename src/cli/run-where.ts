/**
 * Where `dcb run` goes: a fresh in-process sandbox, when `--fixtures`/`--clock` or the run file's
 * `fixtures`/`clock` keys ask for one, or else a running server. A flag comes before the file's key
 * (as `--base-url` before `base_url`), and a line on stderr says which key was not used.
 */
import { existsSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { expandFixturePaths } from '../world/fixture-paths.js'
import { timeProblem } from '../core/time.js'
import type { ClientCliOptions } from './common.js'
import { CliError, EXIT } from './errors.js'

export interface RunWhereOptions extends ClientCliOptions {
  reset?: boolean
  fixtures?: string[]
  clock?: string
}

/** A fresh in-process sandbox: its fixture files or folders, its clock (frozen there), and what asked for it. */
export interface InProcess {
  fixtures: string[]
  clock?: string
  /** The fixtures as the line at the run's start names them (a file's relative to the working folder). */
  shown: string[]
  /** What made the run one: `--fixtures`, `--clock`, or the file's `fixtures` / `clock`. */
  by: string
}

/** The flags of a run against a server, given with one that runs in process: each would be accepted and then not used. */
function refuseServerFlags(o: RunWhereOptions, by: string): void {
  const forServer = [
    ['--base-url', o.baseUrl !== undefined],
    ['--session', o.session !== undefined],
    ['--no-reset', o.reset === false],
    ['--admin-token', o.adminToken !== undefined],
    ['--timeout', o.timeout !== undefined],
  ].flatMap(([flag, given]) => (given ? [flag as string] : []))
  if (forServer.length)
    throw new CliError(
      `${by} runs a fresh in-process sandbox: ${forServer.join(', ')} ${forServer.length === 1 ? 'is' : 'are'} for a running server`,
      EXIT.USAGE,
    )
}

/** The flags alone, judged before the file is read. */
export function checkRunFlags(o: RunWhereOptions): void {
  if (o.fixtures === undefined && o.clock === undefined) return
  refuseServerFlags(o, o.fixtures !== undefined ? '--fixtures' : '--clock')
  // Judged here, by flag: the library's own check would name its option (clock).
  const problem = o.clock === undefined ? undefined : timeProblem(o.clock)
  if (problem) throw new CliError(`--clock ${problem}`, EXIT.USAGE)
}

/**
 * Where the run goes, from the flags and the file's `fixtures` (a path or a list of paths, relative
 * to the run file's folder) and `clock` (a time, as --clock). A bad key is refused by its JSON path
 * before anything runs, the flag that replaces it or not (a file's path is looked for only when used).
 */
export function runWhere(file: string, doc: { fixtures?: unknown; clock?: unknown; base_url?: string }, o: RunWhereOptions): InProcess | undefined {
  const at = (path: string, problem: string) => new CliError(`${file}: $.${path}: ${problem}`, EXIT.USAGE)
  let fileFixtures: string[] | undefined
  if (doc.fixtures !== undefined) {
    const list = typeof doc.fixtures === 'string' ? [doc.fixtures] : doc.fixtures
    const shape = `a fixture file or folder, or a list of them (paths relative to the run file's folder), not ${JSON.stringify(doc.fixtures)}`
    if (!Array.isArray(list) || !list.length) throw at('fixtures', `must be ${shape}`)
    list.forEach((p, i) => {
      if (typeof p !== 'string' || !p.trim())
        throw at(typeof doc.fixtures === 'string' ? 'fixtures' : `fixtures[${i}]`, `must be a path, not ${JSON.stringify(p)}`)
    })
    fileFixtures = list as string[]
  }
  if (doc.clock !== undefined) {
    if (typeof doc.clock !== 'string') throw at('clock', `must be a time such as "2026-01-31T00:00:00", not ${JSON.stringify(doc.clock)}`)
    const problem = timeProblem(doc.clock)
    if (problem) throw at('clock', problem)
  }
  const keys = [fileFixtures && '"fixtures"', doc.clock !== undefined && '"clock"'].filter(Boolean).join(' and ')
  if (keys) {
    refuseServerFlags(o, `${file} (with ${keys})`)
    // The file says both where to go and to go nowhere: its base_url could never be used.
    if (doc.base_url !== undefined) throw at('base_url', `is not used by a run file with ${keys}, which runs a fresh in-process sandbox: drop one of them`)
  }
  for (const [key, flag, given] of [
    ['fixtures', '--fixtures', fileFixtures && o.fixtures],
    ['clock', '--clock', doc.clock !== undefined && o.clock],
  ] as const)
    if (given) process.stderr.write(`dcb: ${file}: $.${key} is not used: ${flag} comes before it\n`)
  if (o.fixtures === undefined && o.clock === undefined && !keys) return undefined
  const folder = dirname(resolve(file))
  const fromFile = o.fixtures === undefined && fileFixtures !== undefined
  const fixtures = o.fixtures ?? (fileFixtures ?? []).map((p) => resolve(folder, p))
  if (fromFile)
    fixtures.forEach((p, i) =>
      checkFileFixture(folder, fileFixtures![i]!, p, (problem) => at(typeof doc.fixtures === 'string' ? 'fixtures' : `fixtures[${i}]`, problem)),
    )
  return {
    fixtures,
    clock: o.clock ?? (doc.clock as string | undefined),
    shown: fromFile ? fixtures.map((p) => relative(process.cwd(), p) || '.') : fixtures,
    by: o.fixtures !== undefined ? '--fixtures' : o.clock !== undefined ? '--clock' : `${file} (with ${keys})`,
  }
}

/** `path` is not `folder` or below it. */
const outside = (folder: string, path: string): boolean => {
  const rel = relative(folder, path)
  return rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)
}

/** The real path, links followed, or undefined when there is none (a dangling link: the loader names it). */
const real = (path: string): string | undefined => {
  try {
    return realpathSync(path)
  } catch {
    return undefined
  }
}

/**
 * A fixture path of the run file (`given`, resolved to `path`) stays in the run file's folder, links
 * followed, and so do the files of a folder it names: a run file handed over cannot make dcb read
 * (and quote in its errors) a file elsewhere. Fixtures elsewhere are given with --fixtures.
 */
function checkFileFixture(folder: string, given: string, path: string, refuse: (problem: string) => CliError): void {
  const elsewhere = `a run file's fixtures are in its folder (${folder}) or below it; give others with --fixtures`
  if (outside(folder, path)) throw refuse(`${JSON.stringify(given)} is outside the run file's folder: ${elsewhere}`)
  if (!existsSync(path)) throw refuse(`no such file or folder: ${path}`)
  const realFolder = real(folder) ?? folder
  let files: string[]
  try {
    files = [path, ...expandFixturePaths([path]).filter((f) => f !== path)]
  } catch {
    files = [path] // a folder with no fixture file: the loader says so
  }
  for (const f of files) {
    const to = real(f)
    if (to !== undefined && outside(realFolder, to))
      throw refuse(
        `${JSON.stringify(given)} leads outside the run file's folder${f === path ? '' : ` (its file ${relative(path, f)})`}, to ${to}: ${elsewhere}`,
      )
  }
}
