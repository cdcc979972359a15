/**
 * Making a session in a database several `dcb serve` replicas share: one at a time across the
 * replicas (count, then insert) under the session cap the database counts, whether the session is
 * made on first use (`postgres-shared-sessions.ts`) or made anew by a write after another replica
 * deleted it (`postgres-session.ts`). Loaded with the database.
 */
import type pg from 'pg'
import { dotNameRefusal, isDotName } from '../contract/defaults.js'
import { SandboxError } from '../core/errors.js'
import { sharedSessionLimit } from './types.js'

/**
 * Sessions are made one at a time: a lock of its own, in the one-key space (the sessions' turns and
 * the schema use the two-key one), so no session's turn waits for it.
 */
const MAKING_SESSIONS = 4242

/**
 * In the caller's transaction: whether `name` is stored, made now unless the database holds `max`
 * named sessions or more (`count`: what it holds then). A session made is told to the other replicas
 * (`S+name`) as the transaction commits; a refusal changes nothing.
 */
export async function makeSession(client: pg.PoolClient, name: string, max: number): Promise<{ stored: true } | { stored: false; count: number }> {
  await client.query(`SELECT pg_advisory_xact_lock(${MAKING_SESSIONS})`)
  if (((await client.query(`SELECT 1 FROM dcb_sessions WHERE name = $1`, [name])).rowCount ?? 0) > 0) return { stored: true }
  const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM dcb_sessions WHERE name <> 'default'`)
  const count = Number(rows[0]!.n)
  if (count >= max) return { stored: false, count }
  await client.query(`INSERT INTO dcb_sessions (name) VALUES ($1)`, [name])
  await client.query(`SELECT pg_notify('dcb', $1)`, [`S+${name}`])
  return { stored: true }
}

/**
 * In a turn's transaction: a session another replica deleted, made anew by a write as a new session
 * is made, or refused as one is (a SandboxError: SESSION_LIMIT at the cap; BAD_REQUEST for `.` and
 * `..`, which name no new session: one kept from an older version, once deleted, is not made again).
 * `max` null: a turn that makes no session (soft changes alone, a read's counts; a snapshot): SESSION_NOT_FOUND.
 */
export async function remakeSession(client: pg.PoolClient, name: string, max: number | null): Promise<void> {
  if (max === null) throw new SandboxError('SESSION_NOT_FOUND', `no session ${name}: another replica deleted it, and a read makes none anew`)
  if (isDotName(name)) throw new SandboxError('BAD_REQUEST', dotNameRefusal(name))
  const made = await makeSession(client, name, max)
  if (!made.stored) throw sharedSessionLimit(made.count, max)
}
