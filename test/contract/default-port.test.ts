/**
 * The default port is written once, in the contract: the CLI, the client, the server and the console
 * page (filled in as it is served) read it from there.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_BASE_URL, DEFAULT_PORT } from '../../src/contract/defaults.js'
import { useSandbox } from '../helpers.js'

const SRC = join(import.meta.dirname, '../../src')
const files = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]))

describe('the default port', () => {
  it('appears in code only in src/contract/defaults.ts (not counting comments or longer numbers)', () => {
    const port = new RegExp(`(?<![0-9#])${DEFAULT_PORT}(?![0-9])`)
    const found = files(SRC)
      .filter((f) => /\.(ts|js|html)$/.test(f) && !f.endsWith(join('contract', 'defaults.ts')))
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .filter((line) => !/^\s*(\*|\/\/|\/\*\*)/.test(line) && port.test(line))
          .map((line) => `${f.slice(SRC.length + 1)}: ${line.trim()}`),
      )
    expect(found).toEqual([])
  })

  describe('in the console page', () => {
    const c = useSandbox()
    it('is filled in from the contract as the page is served', async () => {
      const html = await (await fetch(c.url + '/')).text()
      expect(html).toContain(`<meta name="dcb-default-base-url" content="${DEFAULT_BASE_URL}" />`)
      expect(html).not.toContain('content="DEFAULT_BASE_URL"')
    })
  })
})
