/**
 * The default world as the build checked it (`dist/world.checked.json`, `src/world/checked.ts`),
 * without zod or the layering: what `dcb serve` with no fixture files needs at start. Fixture files,
 * or a default world the build did not check, go through `loadWorld` (`load.ts`).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_WORLD_FILE } from '../contract/defaults.js'
import { embeddedFile, isSingleExecutable } from '../assets.js'
import type { LayeredWorld } from '../core/layering.js'
import { packageRoot } from '../paths.js'
import { CHECKED_WORLD_FILE, checkedWorld } from './checked.js'

export class FixtureError extends Error {
  constructor(public readonly problems: string[]) {
    super(problems.join('\n'))
    this.name = 'FixtureError'
  }
}

/** The default world's file; in the single executable its path inside the package (it is embedded). */
export function defaultWorldPath(): string {
  return isSingleExecutable() ? DEFAULT_WORLD_FILE : join(packageRoot(), DEFAULT_WORLD_FILE)
}

export interface LoadedWorld extends LayeredWorld {
  files: string[]
}

/** The build's check of the default world (`npm run build`), if there is one. */
export function checkedWorldText(): string | undefined {
  const embedded = embeddedFile(CHECKED_WORLD_FILE)
  if (embedded) return embedded.toString('utf8')
  try {
    return readFileSync(join(packageRoot(), CHECKED_WORLD_FILE), 'utf8')
  } catch {
    return undefined
  }
}

/**
 * The default world alone, as the build layered and checked it, when its text is the very text the
 * build checked; otherwise undefined (then `loadWorld` reads and checks it in full, naming any problem).
 */
export function checkedDefaultWorld(): LoadedWorld | undefined {
  let text: string
  try {
    const embedded = embeddedFile(DEFAULT_WORLD_FILE)
    text = embedded ? embedded.toString('utf8') : readFileSync(defaultWorldPath(), 'utf8')
  } catch {
    return undefined
  }
  const checked = checkedWorld(text, checkedWorldText())
  return checked && { ...checked.layered, files: [defaultWorldPath()] }
}
