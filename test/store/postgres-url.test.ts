import { describe, expect, it } from 'vitest'
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
