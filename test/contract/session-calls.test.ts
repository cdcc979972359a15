/**
 * The session calls (list, delete) are declared once, in `SESSION_CALLS` (`src/contract/calls.ts`):
 * the route table, the router, the CLI and OpenAPI read their method and path there. A path written
 * again elsewhere would drift from it unseen, so the sources are searched for one.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SESSION_CALLS, sessionRequest } from '../../src/contract/calls.js'
import { SandboxError } from '../../src/core/errors.js'
import { SESSION_ROUTES } from '../../src/http/control-routes.js'
import { SESSION_PATH_PREFIX, SESSIONS_PATH } from '../../src/http/sessions.js'

const SRC = resolve(import.meta.dirname, '../../src')
const DECLARATION = 'contract/calls.ts'

/**
 * Each code line of a TypeScript source that writes a session path as a string (`'/sessions'`,
 * `"/_sandbox/sessions/"`, a template starting so); comments are left out, and so are messages
 * that name the path in a sentence (the quote does not open on it).
 */
function sessionPathLiterals(text: string): string[] {
  return text.split('\n').flatMap((line, i) => {
    const code = line.trim().startsWith('*') || line.trim().startsWith('/*') ? '' : line.replace(/(^|\s)\/\/.*$/, '')
    return /['"`](\/_sandbox)?\/sessions(\/|['"`$])/.test(code) ? [`${i + 1}: ${line.trim()}`] : []
  })
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

describe('the session calls are declared once', () => {
  it('mirrors the declared calls in the session routes, one route per call', () => {
    expect(SESSION_ROUTES.map((r) => `${r.operationId} ${r.method} ${r.path}`)).toEqual(
      Object.entries(SESSION_CALLS).map(([name, call]) => `${name} ${call.method} ${call.path}`),
    )
  })

  it('routes the list at GET /sessions, a deletion at DELETE /sessions/:name', () => {
    expect(SESSION_ROUTES.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /sessions', 'DELETE /sessions/:name'])
  })

  it('serves the list at exactly its declared path', () => {
    expect(SESSIONS_PATH).toBe(`/_sandbox${SESSION_CALLS.listSessions.path}`)
  })

  it('serves a deletion at the prefix of its declared path, before the name', () => {
    expect(`${SESSION_PATH_PREFIX}:name`).toBe(`/_sandbox${SESSION_CALLS.deleteSession.path}`)
  })

  it('makes the list request from the declaration', () => {
    expect(sessionRequest('listSessions', [])).toMatchObject({ method: 'GET', path: '/sessions' })
  })

  it('sends no body with the list request', () => {
    expect(sessionRequest('listSessions', []).body).toBeUndefined()
  })

  it('makes a deletion request with the name percent-encoded', () => {
    expect(sessionRequest('deleteSession', ['ci a/b'])).toMatchObject({ method: 'DELETE', path: '/sessions/ci%20a%2Fb' })
  })

  it('refuses a deletion of an empty name with BAD_REQUEST naming it', () => {
    expect(() => sessionRequest('deleteSession', [''])).toThrow(new SandboxError('BAD_REQUEST', 'name: must not be empty'))
  })

  it('finds a session path written as a string', () => {
    expect(sessionPathLiterals("c.control<SessionsAnswer>('GET', '/sessions')")).toHaveLength(1)
    expect(sessionPathLiterals("exact.set('/_sandbox/sessions', { kind: 'sessions' })")).toHaveLength(1)
    expect(sessionPathLiterals("  ['/_sandbox/sessions/', { kind: 'sessions' }],")).toHaveLength(1)
    expect(sessionPathLiterals('  path: `/sessions/${name}`,')).toHaveLength(1)
  })

  it('passes a session path in a comment', () => {
    expect(sessionPathLiterals(' * the sessions are `/_sandbox/sessions`')).toEqual([])
    expect(sessionPathLiterals("x() // as '/sessions' says")).toEqual([])
  })

  it('passes a session path named in a sentence', () => {
    expect(sessionPathLiterals("throw new Error('delete one with DELETE /_sandbox/sessions/NAME')")).toEqual([])
  })

  it('has no source but the declaration write a session path', () => {
    const found = tsFiles(SRC)
      .filter((f) => relative(SRC, f) !== DECLARATION)
      .flatMap((f) => sessionPathLiterals(readFileSync(f, 'utf8')).map((hit) => `${relative(SRC, f)}:${hit}`))
    expect(found).toEqual([])
  })

  it('finds the session paths the declaration writes', () => {
    expect(sessionPathLiterals(readFileSync(join(SRC, DECLARATION), 'utf8')).length).toBeGreaterThan(0)
  })
})
