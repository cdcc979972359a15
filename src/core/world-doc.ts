/**
 * The world as one fixture document (`GET /_sandbox/world`): `"extends": "none"`, every default
 * filled in, API keys in their `sha256` form (a secret is never shown), rules in the order they are
 * consulted. Loaded alone with `--fixtures`, it gives the same world.
 */
import { sha256 } from './world.js'
import type { World } from './world-schema.js'

export type WorldDocument = { extends: 'none' } & Omit<World, '$schema' | 'extends'>

export function worldDocument(world: World): WorldDocument {
  const { $schema: _schema, extends: _extends, ...rest } = world
  return {
    extends: 'none',
    ...rest,
    merchants: world.merchants.map((m) => ({ ...m, api_keys: m.api_keys.map((k) => (typeof k === 'string' ? { sha256: sha256(k) } : k)) })),
  }
}
