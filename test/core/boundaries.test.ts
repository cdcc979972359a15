import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const CORE = resolve(import.meta.dirname, '../../src/core')
/** Packages the engine may use: zod (the world schema), node:crypto (ids, API key hashes) and re2js (rule regexes in linear time): computation, no I/O. */
const ALLOWED = new Set(['zod', 'node:crypto', 're2js'])

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
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

describe('src/core stands alone', () => {
  const all = files(CORE)

  it('finds the core files and their imports', () => {
    expect(all.length).toBeGreaterThan(10)
    expect(specifiers(readFileSync(join(CORE, 'engine.ts'), 'utf8')).length).toBeGreaterThan(3)
  })

  it('imports nothing outside src/core but zod and I/O-free node modules', () => {
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
  const SRC = resolve(import.meta.dirname, '../../src')
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
