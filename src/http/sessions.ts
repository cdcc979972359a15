/**
 * The session calls of the control API: `GET /_sandbox/sessions` (every session with its counts,
 * the default one first) and `DELETE /_sandbox/sessions/NAME`. They act on the server, not on one
 * session, so they answer the same whatever X-DCB-Session says.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { SESSION_CALLS } from '../contract/calls.js'
import type { SessionDeletedAnswer, SessionsAnswer } from '../contract/control.js'
import { SandboxError } from '../core/errors.js'
import { formatTimestamp } from '../core/time.js'
import type { Host } from '../runtime/host.js'
import { queryObject } from './control.js'
import { safeDecode, sendJson, sendControlError } from './respond.js'

const { listSessions, deleteSession } = SESSION_CALLS
/** The list's path, and the part of a deletion's path before its name (the declared calls'). */
export const SESSIONS_PATH = `/_sandbox${listSessions.path}`
export const SESSION_PATH_PREFIX = `/_sandbox${deleteSession.path.slice(0, deleteSession.path.indexOf(':'))}`

/** Serves `/_sandbox/sessions` and `/_sandbox/sessions/NAME` (the app's dispatch table sends only these). */
export function sessionRoutes(sessions: Host, checkAccess: (req: IncomingMessage) => void) {
  return async function serve(req: IncomingMessage, res: ServerResponse, path: string, query: string): Promise<void> {
    try {
      checkAccess(req)
      // They take no query: a parameter (a filter, a force) would do nothing.
      if (query) queryObject(query, [], req.method ?? 'GET', path)
      const name = path === SESSIONS_PATH ? undefined : safeDecode(path.slice(SESSION_PATH_PREFIX.length))
      if (name === undefined) {
        if (req.method !== listSessions.method && req.method !== 'HEAD')
          throw new SandboxError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}; use ${listSessions.method}`)
        // Shared with other processes, the list and its counts are the database's (nothing to do otherwise).
        await sessions.syncSessions()
        await sessions.resync()
        // Shared: what the database's request log holds, not this process's copy of it (filled only as it is listed here).
        const requests = await sessions.requestCounts()
        const answer: SessionsAnswer = {
          sessions: sessions.all().map((s) => ({
            name: s.name,
            subscriptions: s.engine.state.subs.size,
            messages: s.engine.smsCount(),
            requests: requests.get(s.name) ?? 0,
            now: formatTimestamp(s.engine.now()),
          })),
        }
        return sendJson(res, 200, answer)
      }
      if (req.method !== deleteSession.method)
        throw new SandboxError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}; use ${deleteSession.method}`)
      if (!(await sessions.drop(name))) throw new SandboxError('SESSION_NOT_FOUND', `no session ${name}`)
      const deleted: SessionDeletedAnswer = { deleted: name }
      sendJson(res, 200, deleted)
    } catch (e) {
      if (!sendControlError(res, e)) throw e
    }
  }
}
