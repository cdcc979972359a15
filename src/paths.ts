import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The package root (where package.json and fixtures/ are), from src/ or dist/ alike. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'fixtures'))) return dir
    const up = dirname(dir)
    if (up === dir) throw new Error('cannot find the dcb package root')
    dir = up
  }
}
