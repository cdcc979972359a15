/**
 * The types of what a merchant's code hands the library: a world object and a runtime rule, as a
 * fixture file writes them (the schema's input side: fields with a default may be left out). Types
 * only: the sandbox checks the values as it checks a file.
 */
import type { z } from 'zod'
import type { RecordCollection, WorldSchema } from '../core/world-schema.js'

type WorldFile = z.input<typeof WorldSchema>
type Item<C extends RecordCollection> = NonNullable<WorldFile[C]>[number]
type Key = { merchants: 'id'; services: 'code'; countries: 'code'; carriers: 'code' }
/** A record as a layer may give it: its key, and any other fields (merged into the default world's record of that key). */
type Partial_<C extends RecordCollection, Nested extends string = never> = Pick<Item<C>, Key[C] & keyof Item<C>> &
  Partial<Omit<Item<C>, Key[C] | Nested>> & { [N in Nested & keyof Item<C>]?: Partial<NonNullable<Item<C>[N]>> }

/**
 * A world object: a whole world that replaces the default one (a field with a default, such as a
 * merchant's `allowlist`, a carrier's `otp` or a rule's `match`, may be left out), or, with
 * `extends: 'default'`, a layer on the default world whose records may be partial (the key and the
 * fields to change, e.g. `{ code: 'STREAMPLUS', return_url: '…' }`), as in a fixture file.
 */
export type World =
  | (WorldFile & { extends?: 'none' })
  | (Omit<WorldFile, 'extends' | RecordCollection> & {
      extends: 'default'
      merchants?: Partial_<'merchants'>[]
      services?: Partial_<'services'>[]
      countries?: Partial_<'countries'>[]
      carriers?: Partial_<'carriers', 'otp' | 'retry'>[]
    })

/** A carrier rule as a fixture file's `rules` hold it, for `rules.add`: the control operations' own type. */
export type { Rule } from '../contract/operations.js'
