/**
 * The documentation kept true: the README as a short front page, and the reference in docs/ checked
 * against the code both ways (commands and options from commander's own tree, control calls from the
 * route table, error codes from their tables, generated tables as generated), every relative link
 * resolving, and no file named that the repository or the package does not contain.
 */
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import type { Command } from 'commander'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { program } from '../src/cli/index.js'
import { worldNames } from '../src/core/layering.js'
import { CONTROL_ERRORS } from '../src/core/errors.js'
import { OUTCOMES } from '../src/core/outcomes.js'
import { validateRule } from '../src/core/rule-check.js'
import { describeRule, scenarioTable } from '../src/core/scenarios.js'
import { EFFECTS, STEP_EFFECTS, STEPS } from '../src/core/world-schema.js'
import { CONSOLE_FILES } from '../src/http/console.js'
import { CONTROL_ROUTES, SESSION_ROUTES } from '../src/http/control-routes.js'
import { loadWorld } from '../src/world/load.js'
import { createClient } from '../src/client/create.js'
import { createSandbox } from '../src/library/sandbox.js'
import { startClient, type Client } from './helpers.js'
import { slug } from './docs/glossary-terms.js'

const read = (path: string) => readFileSync(path, 'utf8')
const docPages = (dir = 'docs'): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? docPages(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : []))
const PAGES = ['README.md', ...docPages()]

/** The text between `<!-- NAME:start -->` and `<!-- NAME:end -->`. */
function block(text: string, name: string): string {
  const m = new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`).exec(text)
  expect(m, `a ${name} block`).not.toBeNull()
  return m![1]!
}

/** Markdown sections by `### ` heading (the heading text without the hashes). */
function sections(text: string): Map<string, string> {
  const out = new Map<string, string>()
  const parts = text.split(/^### /m).slice(1)
  for (const part of parts) {
    const nl = part.indexOf('\n')
    out.set(part.slice(0, nl).trim(), part.slice(nl + 1).split(/^## /m)[0]!)
  }
  return out
}

function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const m of stripCode(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(m[1]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n ? `${base}-${n}` : base)
  }
  return out
}

const stripCode = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '')

/** What `items` has beyond `others`, counting repeats: `[a, a, b]` without `[a, b]` is `[a]`. */
function without<T>(items: readonly T[], others: readonly T[]): T[] {
  const left = [...others]
  return items.filter((item) => {
    const at = left.indexOf(item)
    if (at === -1) return true
    left.splice(at, 1)
    return false
  })
}

describe('the README', () => {
  const readme = read('README.md')

  it('is a front page of at most 12,000 bytes', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12_000)
  })

  it('names the two commands', () => {
    expect(readme).toContain('npm ci && npm start')
    expect(readme).toContain('npm ci && npm test')
  })

  it('links to the docs index, docs/README.md', () => {
    expect(readme).toContain('](docs/README.md)')
  })
})

describe('the docs index (docs/README.md)', () => {
  it('lists every page of docs/', () => {
    const index = read('docs/README.md')
    const linked = new Set([...stripCode(index).matchAll(/\]\(([^)#\s]+)/g)].map((m) => normalize(join('docs', m[1]!))))
    // A page no index lists is a page nobody finds: each one new in docs/ gets its line in docs/README.md.
    const unlisted = docPages().filter((p) => p !== normalize('docs/README.md') && !linked.has(p))
    expect(unlisted).toEqual([])
  })
})

describe('relative links', () => {
  /** The links whose file is missing, and those whose file lacks the heading of their anchor. */
  function brokenLinks() {
    const noFile: string[] = []
    const noHeading: string[] = []
    for (const page of PAGES) {
      const text = stripCode(read(page)).replace(/`[^`\n]*`/g, '')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue
        const [path, anchor] = target!.split('#') as [string, string | undefined]
        const file = path ? normalize(join(dirname(page), path)) : page
        if (!existsSync(file)) {
          noFile.push(`${page}: ${target} (no ${file})`)
          continue
        }
        if (anchor !== undefined && (!file.endsWith('.md') || !anchors(read(file)).has(anchor))) noHeading.push(`${page}: ${target} (no heading #${anchor})`)
      }
    }
    return { noFile, noHeading }
  }

  it('resolve to a file of the repository', () => {
    expect(brokenLinks().noFile).toEqual([])
  })

  it('with an anchor resolve to a heading of their file', () => {
    expect(brokenLinks().noHeading).toEqual([])
  })
})

describe('the CLI reference (docs/reference/cli.md)', () => {
  const page = sections(read('docs/reference/cli.md'))
  const COMMON = 'Options of every client command'
  const optionsIn = (section: string) => [...section.matchAll(/^- `(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]!).sort()

  /** Every command that runs, from commander's own tree: `fixtures validate`, not `fixtures`. */
  function commands(cmd: Command, prefix: string[] = []): [string, Command][] {
    return cmd.commands.flatMap((sub) => {
      const path = [...prefix, sub.name()]
      return sub.commands.length ? commands(sub, path) : [[path.join(' '), sub] as [string, Command]]
    })
  }
  const tree = new Map(commands(program).filter(([name]) => name !== 'help'))
  /** `dcb fixtures validate PATH…` → `fixtures validate`: the lower-case words after dcb. */
  const documented = new Map(
    [...page]
      .filter(([heading]) => heading.startsWith('`dcb '))
      .map(([heading, text]) => [/^`dcb ((?:[a-z]+(?: |`|$))+)/.exec(heading)![1]!.replace(/[ `]+$/, ''), text]),
  )

  it('has a section for every command', () => {
    expect(tree.size).toBeGreaterThan(20)
    expect(without([...tree.keys()], [...documented.keys()])).toEqual([])
  })

  it('has no section for a command that does not exist', () => {
    expect(without([...documented.keys()], [...tree.keys()])).toEqual([])
  })

  /** Per command, the options its code has and its section does not (`missing`), and the other way round (`extra`). */
  function optionGaps() {
    const common = optionsIn(page.get(COMMON)!)
    expect(common).toContain('--base-url')
    const missing: Record<string, string[]> = {}
    const extra: Record<string, string[]> = {}
    for (const [name, cmd] of tree) {
      const text = documented.get(name) ?? ''
      const docs = [...new Set([...optionsIn(text), ...(text.includes('(#options-of-every-client-command)') ? common : [])])].sort()
      const code = cmd.options.map((o) => o.long!).sort()
      if (without(code, docs).length) missing[name] = without(code, docs)
      if (without(docs, code).length) extra[name] = without(docs, code)
    }
    return { missing, extra }
  }

  it("lists each command's options", () => {
    expect(optionGaps().missing).toEqual({})
  })

  it('lists no option a command does not have', () => {
    expect(optionGaps().extra).toEqual({})
  })

  it("lists the program's own options", () => {
    expect(optionsIn(page.get('Global options')!)).toEqual(program.options.map((o) => o.long!).sort())
  })
})

describe('the control API reference (docs/reference/control-api.md)', () => {
  const text = read('docs/reference/control-api.md')
  const calls = (table: string) =>
    table
      .split('\n')
      .filter((row) => row.startsWith('| `'))
      .flatMap((row) =>
        [...row.split('|')[1]!.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`\s?]*)/g)].map((m) => `${m[1]} ${m[2]!.replace(/\{(\w+)\}/g, ':$1')}`),
      )
  const [main, others] = text.split('\nOther paths the server answers:\n') as [string, string]
  const tableCalls = [...CONTROL_ROUTES, ...SESSION_ROUTES].map((r) => `${r.method} /_sandbox${r.path}`)

  it('lists every call of the route table', () => {
    expect(tableCalls.length).toBeGreaterThan(15)
    expect(without(tableCalls, calls(main))).toEqual([])
  })

  it('lists no call the route table does not have', () => {
    expect(calls(main).filter((call) => !tableCalls.includes(call))).toEqual([])
  })

  it('lists each call once', () => {
    expect(without(calls(main), [...new Set(calls(main))])).toEqual([])
  })

  describe('the other paths it names', () => {
    it('are none of the calls of the route table', () => {
      const listed = calls(others)
      expect(listed.length).toBeGreaterThan(3)
      for (const call of listed) expect(tableCalls).not.toContain(call)
    })

    let c: Client
    beforeAll(async () => {
      c = await startClient()
    })
    afterAll(() => c.close())

    it('are answered by a real server (none is an unknown path)', async () => {
      const listed = calls(others)
      expect(listed.length).toBeGreaterThan(3)
      const init = await c.api('/subscriptions/init', { msisdn: '359883456001', service_code: 'STREAMPLUS', country_code: 'bg' })
      const consentId = new URL(init.body.payload.redirect_url).pathname.split('/').pop()!
      const answers: Record<string, number> = {}
      for (const call of listed) {
        const [method, path] = call.split(' ') as [string, string]
        const abort = new AbortController()
        const res = await fetch(c.url + path.replace(':id', consentId), {
          method,
          headers: { 'content-type': 'application/json' },
          body: method === 'GET' ? undefined : '{}',
          signal: abort.signal,
        })
        answers[call] = res.status
        abort.abort() // the live stream never ends
      }
      expect(Object.entries(answers).filter(([, status]) => status === 404)).toEqual([])
    })
  })
})

describe('the library reference (docs/reference/library.md)', () => {
  /** The functions an object offers, own and inherited. */
  const functions = (o: Record<string, unknown>, prefix = '') => {
    const out = new Set<string>()
    for (let p = o; p && p !== Object.prototype; p = Object.getPrototypeOf(p))
      for (const k of Object.getOwnPropertyNames(p)) if (k !== 'constructor' && typeof o[k] === 'function') out.add(prefix + k)
    return [...out]
  }

  /** The functions of a sandbox, a session and a client, and those the page names. */
  let code: string[]
  let documented: string[]
  beforeAll(async () => {
    const sandbox = (await createSandbox()) as unknown as Record<string, unknown>
    const client = createClient({ baseUrl: 'http://127.0.0.1:7700' }) as unknown as Record<string, unknown>
    const session = (sandbox.session as (n: string) => Record<string, unknown>)('docs')
    code = [...new Set([sandbox, client, session].flatMap((o) => [...functions(o), ...functions(o.rules as Record<string, unknown>, 'rules.')]))]
    await (sandbox.close as () => Promise<void>)()
    const page = read('docs/reference/library.md')
    const table = /\| sandbox \(and `sandbox\.session\(name\)`[^\n]*\n\|---\|---\|\n((?:\|.*\n)+)/.exec(page)![1]!
    documented = [...new Set(table.split('\n').flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([\w.]+)\(/g)].map((m) => m[1]!)))]
  })

  it('names every function of a sandbox, a session or a client', () => {
    expect(without(code, documented)).toEqual([])
  })

  it('names no function a sandbox, a session or a client lacks', () => {
    expect(without(documented, code)).toEqual([])
  })
})

describe('the errors reference (docs/reference/errors.md)', () => {
  const text = read('docs/reference/errors.md')

  it("has the merchant API's outcome table as src/core/outcomes.ts has it", () => {
    const rows = Object.entries(OUTCOMES).map(
      ([code, s]) =>
        `| \`${code}\` | ${s.http} | ${s.message ? `\`${s.message}\`` : '`""`'} | ${code === 'SUCCESS' ? '(the answer)' : s.payload === 'null' ? '`null`' : 'absent'} | ${s.describe} |`,
    )
    expect(block(text, 'outcomes')).toBe(['| outcome | HTTP | `message` | payload on failure | what it means |', '|---|---|---|---|---|', ...rows].join('\n'))
  })

  it('has the control error table as src/core/errors.ts has it', () => {
    const rows = Object.entries(CONTROL_ERRORS).map(([code, s]) => `| \`${code}\` | ${s.status} | ${s.describe} |`)
    expect(block(text, 'control-errors')).toBe(['| code | HTTP | what it means |', '|---|---|---|', ...rows].join('\n'))
  })
})

describe('the fixtures and magic endings references', () => {
  it('shows the magic-number table generated from the default world', () => {
    const { world } = loadWorld()
    expect(block(read('docs/reference/magic-endings.md'), 'scenarios')).toBe(scenarioTable(world.rules.map((r) => describeRule(r, 'fixture'))))
  })

  const fixturesPage = read('docs/reference/fixtures.md')
  /** The example rules of docs/reference/fixtures.md, their comments cut off. */
  const exampleRules = () =>
    /```jsonc\n([\s\S]*?)```/
      .exec(fixturesPage)![1]!
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line.replace(/\s+\/\/.*$/, '')))

  it('keeps the step/effect table of the engine', () => {
    const page = fixturesPage
    const table = /\| step \| when \| effects \|\n\|---\|---\|---\|\n((?:\|.*\n)+)/.exec(page)![1]!
    const documented = new Map<string, string[]>()
    for (const row of table.trim().split('\n')) {
      const [steps, , effects] = row
        .split('|')
        .slice(1, 4)
        .map((c) => c.trim())
      const names = [...effects!.matchAll(/`(\w+)`/g)].map((m) => m[1]!).filter((e) => (EFFECTS as readonly string[]).includes(e))
      for (const step of steps!.matchAll(/`(\w+)`/g)) documented.set(step[1]!, names)
    }
    for (const step of STEPS) expect([step, ...[...documented.get(step)!].sort()]).toEqual([step, ...[...STEP_EFFECTS[step]].sort()])
  })

  it('has example rules for exactly the steps of the engine', () => {
    const examples = exampleRules()
    expect(new Set(examples.map((r) => (Array.isArray(r.step) ? r.step : [r.step])).flat())).toEqual(new Set(STEPS))
  })

  it('has example rules that each pass the one rule validation', () => {
    const names = worldNames(loadWorld().world)
    for (const rule of exampleRules()) expect(validateRule(rule, names)).toMatchObject({ ok: true })
  })
})

describe('the console and benchmarks references', () => {
  it("states the console's page weight as it is", () => {
    const bytes = CONSOLE_FILES.reduce((n, f) => n + statSync(`src/console/${f}`).size, 0)
    expect(read('docs/reference/console.md')).toContain(`Page weight: **${bytes} bytes** in all`)
  })

  it('has the figures of bench/results.json (bench/run.js report --check)', async () => {
    const run = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(process.execPath, ['bench/run.js', 'report', '--check'], (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
      ),
    )
    expect(run).toEqual({ code: 0, out: 'docs/reference/benchmarks.md has the figures of bench/results.json\n' })
  })
})

describe('files named', () => {
  /** Every text file of the repository (tracked or new, not ignored), relative to its root. */
  const repoFiles = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { encoding: 'utf8' })
    .split('\0')
    .filter((f) => f && existsSync(f))
  const textual = (f: string) => /\.(ts|js|mjs|cjs|json|md|py|sh|css|html|svg|yml|yaml)$|^\.ci\/run$|^bin\//.test(f) && f !== 'package-lock.json'
  const named = (text: string) => [...text.matchAll(/[\w.-]*[\w-]\.md\b/g)].map((m) => m[0].split('/').pop()!)
  const notContained = (files: string[], readText: (f: string) => string) => {
    const names = new Set(files.map((f) => f.split('/').pop()!))
    const missing: string[] = []
    for (const f of files.filter(textual)) for (const name of named(readText(f))) if (!names.has(name)) missing.push(`${f}: ${name}`)
    return missing
  }

  it('the repository names none of the notes kept outside it (SANDBOX, TEAM, STYLE, api-spec)', () => {
    expect(repoFiles.length).toBeGreaterThan(100)
    const outside = ['SANDBOX', 'TEAM', 'STYLE', 'api-spec'].map((n) => `${n}.md`)
    const citing = repoFiles.filter(textual).filter((f) => outside.some((n) => read(f).includes(n)))
    expect(citing).toEqual([])
  })

  it('the repository names no .md file it does not contain', () => {
    expect(repoFiles.length).toBeGreaterThan(100)
    expect(notContained(repoFiles, read)).toEqual([])
  })

  describe('the package', () => {
    /** The files `npm pack` would ship. */
    let files: string[]
    beforeAll(() => {
      const [pack] = JSON.parse(
        execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
      )
      files = pack.files.map((f: { path: string }) => f.path)
    })

    it('ships no single executable', () => {
      expect(files).toContain('docs/reference/cli.md')
      // The single executable (123 MiB) is built beside the package, never shipped in it.
      expect(files.filter((f) => f.startsWith('dist/dcb-'))).toEqual([])
    })

    it('names no .md file it does not contain', () => {
      expect(files).toContain('docs/reference/cli.md')
      expect(notContained(files, read)).toEqual([])
    })

    it('has relative links that resolve inside it', () => {
      expect(files).toContain('docs/reference/cli.md')
      const outside: string[] = []
      for (const page of files.filter((f) => f.endsWith('.md')))
        for (const [, target] of stripCode(read(page)).matchAll(/\]\(([^)\s#]+)/g))
          if (
            !/^[a-z]+:/i.test(target!) &&
            !files.some((f) => f === normalize(join(dirname(page), target!)) || f.startsWith(normalize(join(dirname(page), target!)) + '/'))
          )
            outside.push(`${page}: ${target}`)
      expect(outside).toEqual([])
    })
  })
})
