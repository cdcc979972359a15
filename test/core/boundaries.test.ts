import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = resolve(import.meta.dirname, '../../src')
const CORE = join(SRC, 'core')
const ARCHITECTURE = resolve(import.meta.dirname, '../../docs/architecture.md')
/** Packages the engine may use: zod (the world schema), node:crypto (ids, API key hashes) and re2js (rule regexes in linear time): computation, no I/O. */
const ALLOWED = new Set(['zod', 'node:crypto', 're2js'])

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  )
}

/** Every module specifier of a file: static imports and re-exports, and dynamic import(). */
function specifiers(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm)) out.push(m[1]!)
  for (const m of text.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) out.push(m[1]!)
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]!)
  return out
}

/** The specifiers a file loads when it runs: `import type` and `export type` left out. */
function runTimeSpecifiers(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/^\s*(import|export)(\s+type\b)?[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm)) if (!m[2]) out.push(m[3]!)
  for (const m of text.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) out.push(m[1]!)
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]!)
  return out
}

/** The layer a path under src/ belongs to: its folder (`core`), or the file itself at the top (`server.ts`). */
function unitOf(path: string): string {
  const rel = relative(SRC, path).replace(/\.js$/, '.ts')
  return rel.includes('/') ? rel.split('/')[0]! : rel
}

/** The file a relative specifier names (`./x.js` is the source `./x.ts`, except a browser module). */
function target(file: string, spec: string): string {
  const path = resolve(dirname(file), spec)
  return path.startsWith(join(SRC, 'console')) ? path : path.replace(/\.js$/, '.ts')
}

interface Row {
  units: string[]
  /** The layers it may import; null: any. */
  may: Set<string> | null
}

/** The layer table of docs/architecture.md: each row's folders or files, and the names of its "may import" cell. */
function layerTable(): Row[] {
  const text = readFileSync(ARCHITECTURE, 'utf8')
  const lines = text.split('\n')
  const head = lines.findIndex((l) => /^\|\s*folder\s*\|.*\|\s*may import\s*\|$/.test(l))
  if (head < 0) throw new Error('docs/architecture.md has no table with a "may import" column')
  const rows: Row[] = []
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break
    const cells = line.split('|').slice(1, -1)
    const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
    const units = names(cells[0]!).map((n) => n.replace(/^src\//, '').replace(/\/$/, ''))
    const cell = cells[cells.length - 1]!.trim()
    rows.push({ units, may: cell === 'all' ? null : new Set(cell === 'nothing' ? [] : names(cell)) })
  }
  return rows
}

describe('the layer table of docs/architecture.md holds', () => {
  const rows = layerTable()
  const allowed = new Map<string, Row>()
  for (const row of rows) for (const unit of row.units) allowed.set(unit, row)

  it('has a row for each folder or top file of src/, one for one', () => {
    const present = new Set(readdirSync(SRC).map((name) => name.replace(/\.js$/, '.ts')))
    expect(rows.length).toBeGreaterThan(10)
    expect([...present].filter((unit) => !allowed.has(unit))).toEqual([])
    expect([...allowed.keys()].filter((unit) => !present.has(unit))).toEqual([])
  })

  it('lets each file of src/ import only the layers its row allows', () => {
    const bad: string[] = []
    for (const file of files(SRC)) {
      const from = unitOf(file)
      const row = allowed.get(from)
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        if (!spec.startsWith('.') || !row || row.may === null) continue
        const to = unitOf(target(file, spec))
        if (to === from || row.may.has(to)) continue
        bad.push(`${relative(SRC, file)} -> ${relative(SRC, target(file, spec))} (${from} may import ${[...row.may].join(', ') || 'nothing'})`)
      }
    }
    expect(bad).toEqual([])
  })

  it('keeps zod out of what the client loads when it runs', () => {
    const seen = new Set<string>()
    const reaches: string[] = []
    const walk = (file: string, via: string[]) => {
      if (seen.has(file)) return
      seen.add(file)
      for (const spec of runTimeSpecifiers(readFileSync(file, 'utf8'))) {
        if (spec === 'zod') reaches.push([...via, relative(SRC, file)].join(' -> '))
        else if (spec.startsWith('.')) walk(target(file, spec), [...via, relative(SRC, file)])
      }
    }
    const client = files(join(SRC, 'client'))
    expect(client.length).toBeGreaterThanOrEqual(3)
    for (const file of client) walk(file, [])
    expect(reaches).toEqual([])
  })
})

describe('src/core stands alone', () => {
  const all = files(CORE)

  it('finds the core files with their imports', () => {
    expect(all.length).toBeGreaterThan(10)
    expect(specifiers(readFileSync(join(CORE, 'engine.ts'), 'utf8')).length).toBeGreaterThan(3)
  })

  it('imports from outside src/core only zod or I/O-free node modules', () => {
    const bad: string[] = []
    for (const file of all) {
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        const where = relative(CORE, file)
        if (spec.startsWith('.')) {
          const target = relative(CORE, resolve(file, '..', spec))
          if (target.startsWith('..')) bad.push(`${where}: ${spec}`)
        } else if (!ALLOWED.has(spec)) bad.push(`${where}: ${spec}`)
      }
    }
    expect(bad).toEqual([])
  })
})

describe('the layers below the HTTP layer stand without it', () => {
  const BELOW = ['core', 'store', 'contract', 'control', 'runtime', 'world']

  it('nothing in src/core, store, contract, control, runtime or world imports from src/http (or the server, library, client, CLI)', () => {
    const bad: string[] = []
    for (const layer of BELOW)
      for (const file of files(join(SRC, layer)))
        for (const spec of specifiers(readFileSync(file, 'utf8'))) {
          if (!spec.startsWith('.')) continue
          const target = relative(SRC, resolve(file, '..', spec))
          if (/^(http|cli|client|library)\//.test(target) || target === 'server.ts' || target === 'server.js') bad.push(`${relative(SRC, file)}: ${spec}`)
        }
    expect(files(join(SRC, 'runtime')).length).toBeGreaterThanOrEqual(4)
    expect(bad).toEqual([])
  })
})
