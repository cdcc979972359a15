/**
 * Build step (`npm run build`): checks the shipped default world with the fixture schema and writes
 * what the schema made of it, with the digest of its text, to `dist/world.checked.json`. A shipped
 * world the schema refuses fails the build, naming every problem.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_WORLD_FILE } from '../contract/defaults.js'
import { layerWorlds } from '../core/layering.js'
import { LayerSchema } from '../core/world-schema.js'
import { packageRoot } from '../paths.js'
import { CHECKED_WORLD_FILE, worldDigest } from './checked.js'

const root = packageRoot()
const text = readFileSync(join(root, DEFAULT_WORLD_FILE), 'utf8')
const data: unknown = JSON.parse(text)
const parsed = LayerSchema.safeParse(data)
// The world it makes on its own (what `dcb serve` without --fixtures runs): layered and cross-checked once, here.
const layered = layerWorlds([{ source: DEFAULT_WORLD_FILE, data }])
if (!parsed.success || !layered.ok) {
  for (const issue of parsed.error?.issues ?? []) process.stderr.write(`${DEFAULT_WORLD_FILE}: ${issue.path.join('.')}: ${issue.message}\n`)
  for (const problem of layered.ok ? [] : layered.problems) process.stderr.write(`${problem}\n`)
  process.exit(1)
}
const { world, sources, warnings } = layered
writeFileSync(join(root, CHECKED_WORLD_FILE), JSON.stringify({ digest: worldDigest(text), layer: parsed.data, layered: { world, sources, warnings } }))
