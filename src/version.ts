import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { embeddedFile } from './assets.js'
import { packageRoot } from './paths.js'

let cached: string | undefined

/** The package version (read once from package.json). */
export function version(): string {
  if (!cached) {
    try {
      const text = embeddedFile('package.json')?.toString('utf8') ?? readFileSync(join(packageRoot(), 'package.json'), 'utf8')
      cached = (JSON.parse(text) as { version: string }).version
    } catch {
      cached = '0.0.0'
    }
  }
  return cached
}
