/**
 * The shipped default world is checked once, when the package is built (`npm run build` writes
 * `dist/world.checked.json`: the schema's output and the digest of the text it came from), not by zod
 * at every start. At start the default world's text is trusted as checked only when its digest is the
 * one the build checked; an edited or unknown file is checked in full, as any fixture file is.
 */
import { createHash } from 'node:crypto'
import type { Layer } from '../core/world-schema.js'

/** Where the build writes the checked default world, by its path in the package. */
export const CHECKED_WORLD_FILE = 'dist/world.checked.json'

export function worldDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** The checked layer of the default world's `text`, when `checkedText` was made from this very text. */
export function checkedLayer(text: string, checkedText: string | undefined): Layer | undefined {
  if (checkedText === undefined) return undefined
  try {
    const checked = JSON.parse(checkedText) as { digest?: unknown; layer?: unknown }
    if (checked.digest !== worldDigest(text) || typeof checked.layer !== 'object' || checked.layer === null) return undefined
    return checked.layer as Layer
  } catch {
    return undefined
  }
}
