/**
 * `dcb run FILE --fixtures F… [--clock T]`: the run file against a fresh in-process sandbox (the
 * library's `createSandbox`) with those fixtures, no server needed. The steps call it through the
 * shape of the HTTP client a run otherwise uses.
 */
import type { DcbClient } from '../client/index.js'
import { merchantClient } from '../client/fetch.js'
import { DEMO_API_KEY } from '../contract/defaults.js'
import { SandboxError } from '../core/errors.js'
import { createSandbox } from '../library/sandbox.js'
import { FixtureError } from '../world/load.js'
import { CliError, EXIT } from './errors.js'

/** What the steps of a run call. */
export type RunTarget = Pick<
  DcbClient,
  'init' | 'verify' | 'status' | 'otp' | 'sms' | 'mo' | 'consent' | 'cancel' | 'subscription' | 'advance' | 'setTime' | 'reset' | 'rules'
>

/** A fresh sandbox with these fixtures and clock; `target(apiKey)` is what a step with that key calls. */
export async function localSandbox(
  fixtures: string[],
  clock: string | undefined,
): Promise<{ target: (apiKey?: string) => RunTarget; close: () => Promise<void> }> {
  let sandbox: Awaited<ReturnType<typeof createSandbox>>
  try {
    // The fixtures' warnings (a service left with no integration, …), as dcb serve --fixtures prints them.
    const onWarning = (w: string) => void process.stderr.write(`dcb: warning: ${w}\n`)
    sandbox = await createSandbox({ fixtures, onWarning, ...(clock !== undefined ? { clock } : {}) })
  } catch (e) {
    if (e instanceof FixtureError) throw new CliError(`fixture error: ${e.problems.join('\ndcb: fixture error: ')}`, EXIT.FAIL)
    if (e instanceof SandboxError) throw new CliError(`--clock: ${e.message}`, EXIT.USAGE)
    throw e
  }
  const target = (apiKey = DEMO_API_KEY): RunTarget => {
    const m = merchantClient((url, init) => sandbox.fetch(url, init), 'http://localhost', { apiKey, headers: {} })
    // The merchant answers have the HTTP client's shape already; a consent's query and reason are read as the HTTP client reads them.
    return {
      init: (body) => m.init(body),
      verify: (body) => m.verify(body),
      status: (body) => m.status(body),
      consent: (url, action) => m.consentDetail(url, action),
      otp: (msisdn, opts) => sandbox.otp(msisdn, opts),
      sms: (msisdn) => sandbox.sms(msisdn),
      mo: (message) => sandbox.mo(message),
      cancel: (id) => sandbox.cancel(id),
      subscription: (id) => sandbox.subscription(id),
      advance: (by) => sandbox.advance(by),
      setTime: (to) => sandbox.setTime(to),
      reset: (opts) => sandbox.reset(opts),
      rules: sandbox.rules,
    }
  }
  return { target, close: () => sandbox.close() }
}
