/**
 * The shipped default world is checked once, when the package is built (`npm run build` writes
 * `dist/world.checked.json`: the schema's output and the digest of the text it came from), not by zod
 * at every start. At start the default world's text is trusted as checked only when its digest is the
 * one the build checked; an edited or unknown file is checked in full, as any fixture file is.
 */
import { createHash } from 'node:crypto'
import type { LayeredWorld } from '../core/layering.js'
import type { Layer } from '../core/world-schema.js'

/** Where the build writes the checked default world, by its path in the package. */
export const CHECKED_WORLD_FILE = 'dist/world.checked.json'

export function worldDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** What the build made of the default world: its layer, and the world it layers to on its own. */
export interface CheckedWorld {
  layer: Layer
  layered: LayeredWorld
}

/** The build's check of the default world's `text`, when `checkedText` was made from this very text. */
export function checkedWorld(text: string, checkedText: string | undefined): CheckedWorld | undefined {
  if (checkedText === undefined) return undefined
  try {
    const checked = JSON.parse(checkedText) as { digest?: unknown; layer?: unknown; layered?: unknown }
    if (checked.digest !== worldDigest(text) || !isObject(checked.layer) || !isObject(checked.layered)) return undefined
    return { layer: checked.layer as Layer, layered: checked.layered as LayeredWorld }
  } catch {
    return undefined
  }
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null
}
