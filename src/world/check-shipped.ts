/**
 * Build step (`npm run build`): checks the shipped default world with the fixture schema and writes
 * what the schema made of it, with the digest of its text, to `dist/world.checked.json`. A shipped
 * world the schema refuses fails the build, naming every problem.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_WORLD_FILE } from '../contract/defaults.js'
import { LayerSchema } from '../core/world-schema.js'
import { packageRoot } from '../paths.js'
import { CHECKED_WORLD_FILE, worldDigest } from './checked.js'

const root = packageRoot()
const text = readFileSync(join(root, DEFAULT_WORLD_FILE), 'utf8')
const parsed = LayerSchema.safeParse(JSON.parse(text))
if (!parsed.success) {
  for (const issue of parsed.error.issues) process.stderr.write(`${DEFAULT_WORLD_FILE}: ${issue.path.join('.')}: ${issue.message}\n`)
  process.exit(1)
}
writeFileSync(join(root, CHECKED_WORLD_FILE), JSON.stringify({ digest: worldDigest(text), layer: parsed.data }))
