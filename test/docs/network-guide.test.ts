/**
 * The testing guide's "Testing what the network does" examples, run as written: each ```ts block of
 * the section is copied to a temporary module whose imports name this repository's files
 * (`dcb-sandbox` its sources, `msw/node` and `vitest` as installed here), and imported inside a
 * describe block, so its `it` calls are tests of this file. An example that stops working fails here.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const GUIDE = readFileSync(join(ROOT, 'docs', 'guides', 'testing-an-integration.md'), 'utf8')
const SECTION = /^## Testing what the network does\n([\s\S]*?)^## /m.exec(GUIDE)?.[1] ?? ''
const BLOCKS = [...SECTION.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)

/** Where each package the examples import is in this repository. */
const MODULES: Record<string, string> = {
  'dcb-sandbox': join(ROOT, 'src', 'index.ts'),
  'dcb-sandbox/msw': join(ROOT, 'src', 'msw.ts'),
  'msw/node': fileURLToPath(import.meta.resolve('msw/node')),
  vitest: fileURLToPath(import.meta.resolve('vitest')),
}

const dir = mkdtempSync(join(tmpdir(), 'dcb-guide-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('the section has two examples', () => {
  expect(BLOCKS).toHaveLength(2)
})

it('its first example goes through msw', () => {
  expect(BLOCKS[0]).toContain("from 'dcb-sandbox/msw'")
})

it('its second example runs against dcb serve', () => {
  expect(BLOCKS[1]).toContain('startSandbox(')
})

BLOCKS.forEach((code, i) => {
  const imports = [...code.matchAll(/from '([^']+)'/g)].map((m) => m[1]!)
  const file = join(dir, `example-${i + 1}.ts`)
  writeFileSync(
    file,
    code.replace(/from '([^']+)'/g, (_, name: string) => {
      const to = MODULES[name]
      if (!to) throw new Error(`the guide's example ${i + 1} imports ${name}, which this test does not map`)
      return `from ${JSON.stringify(pathToFileURL(to).href)}`
    }),
  )
  describe(`example ${i + 1} (${imports.join(', ')})`, async () => {
    await import(pathToFileURL(file).href)
  })
})
