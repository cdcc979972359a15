import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from './paths.js'

let cached: string | undefined

/** The package version (read once from package.json). */
export function version(): string {
  if (!cached) {
    try {
      cached = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version
    } catch {
      cached = '0.0.0'
    }
  }
  return cached
}
