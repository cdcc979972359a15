import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ServeError, startSandbox } from '../../src/server.js'
import { describeUrl, serverVersionProblem, SharedStoreError } from '../../src/store/postgres.js'

// What `--store` accepts, and which servers it refuses, before any connection is made.
describe('the shared store URL and server version', () => {
  it('names HOST:PORT/DATABASE of a PostgreSQL URL, with the default port', () => {
    expect(describeUrl('postgres://u:secret@db.example:6543/sandbox')).toBe('db.example:6543/sandbox')
    expect(describeUrl('postgresql://u@10.0.0.5/sandbox')).toBe('10.0.0.5:5432/sandbox')
  })

  it('refuses what is not a PostgreSQL URL as a usage error, never showing the password', () => {
    for (const url of ['not a url', 'mysql://u:secret@h/db', 'postgres:///nohost']) {
      let err: unknown
      try {
        describeUrl(url)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(SharedStoreError)
      expect((err as SharedStoreError).usage).toBe(true)
      expect((err as Error).message).not.toContain('secret')
    }
  })

  it('refuses a server older than PostgreSQL 14, naming its version', () => {
    expect(serverVersionProblem('h:5432/db', '130011', '13.11')).toBe('the database at h:5432/db runs PostgreSQL 13.11: dcb needs PostgreSQL 14 or later')
    expect(serverVersionProblem('h:5432/db', '140000', '14.0')).toBeUndefined()
    expect(serverVersionProblem('h:5432/db', '180004', '18.4')).toBeUndefined()
  })
})

describe('replacing the world of a shared database', () => {
  it('startSandbox refuses replaceWorld without a store, by name, writing nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dcb-replace-'))
    try {
      const data = join(dir, 'sandbox.json')
      await expect(startSandbox({ port: 0, data, replaceWorld: true })).rejects.toThrow(
        new ServeError('--replace-world (replaceWorld) goes with --store (the world of a shared database)', 'usage'),
      )
      expect(readdirSync(dir)).toEqual([])
      await expect(startSandbox({ port: 0, inMemory: true, replaceWorld: true })).rejects.toThrow(ServeError)
      // A store that is not a PostgreSQL URL names the library's option too (dcb serve names --store or DCB_STORE).
      await expect(startSandbox({ port: 0, store: 'mysql://u:secret@h/db' })).rejects.toThrow(
        new SharedStoreError('--store (store) takes a PostgreSQL URL (postgres:// or postgresql://), not mysql://', true),
      )
      expect(readdirSync(dir)).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
