/**
 * `dcb rules list | add <json|file> | remove <id> | clear`: the runtime carrier rules of a running
 * sandbox (`/_sandbox/rules`). `add` takes one rule, an array of rules, or a scenario file's
 * `{"rules": [...]}`, as JSON text or a file.
 */
import { readUserText, UserFileError, withoutBom } from '../user-text.js'
import { describeJsonProblem, parseJsonText } from '../json-text.js'
import chalk from 'chalk'
import { clientFrom, guard, out, printJson, sessionMissing, warnOfNewSession, type ClientCliOptions } from './common.js'
import { CliError, EXIT, invokedAs } from './errors.js'
import type { World } from '../core/world-schema.js'
import type { Rule } from '../contract/operations.js'

const VERBS = ['list', 'add', 'remove', 'clear']
/** How deep a rule (as text or in a file) may nest arrays and objects. */
const RULES_MAX_DEPTH = 64

/** The rules in a JSON text or file: a rule, an array of rules, or an object with `rules`. */
export function rulesFrom(arg: string): unknown[] {
  const isText = /^\s*[[{]/.test(arg)
  const text = isText ? withoutBom(arg) : readRuleFile(arg)
  // A file's text stays out of the error (the path may name any file); it says where the JSON breaks.
  const parsed = parseJsonText(text, RULES_MAX_DEPTH)
  if ('problem' in parsed) throw new CliError(`${isText ? 'the rule' : arg}: ${describeJsonProblem(parsed.problem)}`, EXIT.USAGE)
  const data = parsed.value
  refuseRecords(data, isText ? 'the JSON' : arg)
  const list = Array.isArray(data)
    ? data
    : data && typeof data === 'object' && Array.isArray((data as { rules?: unknown }).rules)
      ? (data as { rules: unknown[] }).rules
      : [data]
  if (!list.length) throw new CliError(`${isText ? 'the JSON' : arg} holds no rules`, EXIT.USAGE)
  return list
}

/** A fixture file's records, which only a server's start loads (not a rule's fields). */
const RECORD_KEYS = ['merchants', 'services', 'countries', 'carriers', 'messages', 'extends']

/**
 * A fixture file with records (a country, a carrier) given to `rules add`: its rules alone would be
 * added and the records left out without a word (or, with no `rules`, the file checked as one rule).
 */
function refuseRecords(data: unknown, name: string): void {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return
  const records = RECORD_KEYS.filter((k) => k in data)
  if (!records.length) return
  throw new CliError(
    `${name} has ${records.join(', ')}: a running sandbox takes rules only (records are loaded when a server starts: ${invokedAs()} serve --fixtures FILE, or ${invokedAs()} run --fixtures FILE); give a file with only "rules"`,
    EXIT.USAGE,
  )
}

function readRuleFile(path: string): string {
  try {
    return readUserText(path, 'rules')
  } catch (e) {
    if (!(e instanceof UserFileError)) throw e
    throw new CliError(`${path}: ${e.code === 'ENOENT' ? 'no such file (give a rule as JSON text or a file)' : e.message}`, EXIT.USAGE)
  }
}

/**
 * Every rule checked before any is added, by the server's own rule validation against the world it
 * runs (schema, step/effect table, names, ids in use): one run names every problem, and a file with a
 * bad rule adds none. The server checks each again as it adds it.
 */
async function checkAll(c: ReturnType<typeof clientFrom>, list: unknown[]): Promise<void> {
  const [{ validateRule }, { worldNames }, world, inForce] = await Promise.all([
    import('../core/rule-check.js'),
    import('../core/world-names.js'),
    guard(() => c.world()),
    guard(() => c.rules.list()),
  ])
  // The server's /world is the world document: its names, numbering and services, as the server checks a rule against.
  const names = worldNames(world as unknown as World)
  const taken = new Map(inForce.runtime.map((r) => [r.id, 'a runtime rule in force']))
  const lines: string[] = []
  list.forEach((rule, i) => {
    // A number or null in the list is no rule at all: checked as one, it would be told about its step.
    if (!rule || typeof rule !== 'object' || Array.isArray(rule)) {
      lines.push(`BAD_REQUEST: item [${i}] of the list is ${JSON.stringify(rule)}, not a rule object (such as {"step": "init", "effect": {"error": "BARRED"}})`)
      return
    }
    const given = rule as Record<string, unknown>
    const checked = validateRule({ id: 'rule', ...given }, names)
    const problems = checked.ok ? [] : checked.problems.map((p) => `${p.path.length ? p.path.join('.') + ': ' : ''}${p.message}`)
    if (typeof given.id === 'string') {
      const other = taken.get(given.id)
      if (other) problems.push(`a runtime rule "${given.id}" exists already (${other})`)
      taken.set(given.id, `rule ${i + 1} of this list`)
    }
    if (!problems.length) return
    const which = list.length > 1 ? `rule ${i + 1}${typeof given.id === 'string' ? ` (${given.id})` : ''}: ` : ''
    lines.push(`${problems.some((p) => p.includes('exists already')) && checked.ok ? 'RULE_EXISTS' : 'BAD_RULE'}: ${which}${problems.join('; ')}`)
  })
  if (!lines.length) return
  for (const line of lines.slice(0, -1)) process.stderr.write(`dcb: ${line}\n`)
  throw new CliError(`${lines.at(-1)!}${list.length > 1 ? ` (no rule was added: ${lines.length} of ${list.length} have problems)` : ''}`, EXIT.FAIL)
}

export async function rules(verb: string | undefined, arg: string | undefined, o: ClientCliOptions): Promise<void> {
  verb ??= 'list'
  const usage = `usage: ${invokedAs()} rules list | add <json|file> | remove <id> | clear`
  if (!VERBS.includes(verb)) throw new CliError(`unknown rules action "${verb}"; ${usage}`, EXIT.USAGE)
  if ((verb === 'add' || verb === 'remove') !== (arg !== undefined)) throw new CliError(usage, EXIT.USAGE)
  const c = clientFrom(o)
  if (verb === 'list') {
    await warnOfNewSession(c, o)
    const r = await guard(() => c.rules.list())
    if (o.json) return printJson(r)
    if (!r.runtime.length) out(chalk.dim('no runtime rules'))
    // Newest first: the order in which they are tried.
    for (const rec of [...r.runtime].reverse()) {
      const { id, description, ...rest } = rec.rule as { id: string; description?: string }
      out(`${chalk.bold(id)}  ${chalk.dim(`used ${rec.used}`)}  ${description ?? ''}`)
      out(chalk.dim(`  ${JSON.stringify(rest)}`))
    }
    // Stored but not in force (their regex is past a bound): said, with how to remove them.
    for (const d of r.left_out ?? []) out(chalk.yellow(`${d.id} is left out: ${d.problem}`))
    const fixture = r.rules.filter((x) => x.source !== 'runtime').length
    out(
      chalk.dim(
        `${fixture} fixture ${fixture === 1 ? 'rule' : 'rules'} after them (${invokedAs()} world lists every rule in the order consulted, ${invokedAs()} scenarios describes them)`,
      ),
    )
    return
  }
  if (verb === 'add') {
    const list = rulesFrom(arg!)
    await checkAll(c, list)
    const added = []
    for (const rule of list) {
      const rec = await guard(() => c.rules.add(rule as Rule))
      added.push(rec)
      const description = (rec.rule as { description?: string }).description
      if (!o.json) out(`${chalk.green('✔')} added ${chalk.bold(rec.id)}${description ? chalk.dim(` ${description}`) : ''}`)
    }
    if (o.json) printJson({ added })
    return
  }
  // A session that is not there has no rule: removing one fails, clearing them warns (and neither makes it).
  const missing = await sessionMissing(c, o, verb === 'remove' ? `runtime rule "${arg!}" was not removed` : 'no runtime rules to clear', verb === 'remove')
  const r = missing ? { deleted: 0 } : await guard(() => (verb === 'remove' ? c.rules.remove(arg!) : c.rules.clear()))
  if (o.json) return printJson(r)
  out(`${chalk.green('✔')} removed ${r.deleted} runtime rule(s)`)
}
