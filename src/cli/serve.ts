import chalk from 'chalk'
import { DEMO_API_KEY } from '../contract/defaults.js'
import { FixtureError } from '../world/load.js'
import { ServeError, startSandbox } from '../server.js'
import { StoreError } from '../store/types.js'
import { CliError, EXIT } from './errors.js'

interface ServeCliOptions {
  port: number
  host: string
  data: string
  inMemory?: boolean
  fixtures?: string[]
  trustProxy?: string
  allowHost?: string[]
  adminToken?: string
  clock?: string
  clockRunning?: boolean
  failurePayload: 'auto' | 'null' | 'absent'
  journalSize: number
  maxSessions?: number
  journalMib: number
  maxConnections: number
  smsPerMsisdn: number
  maxSms: number
  maxVerifications: number
  quiet?: boolean
  reasons: boolean
}

export async function serve(opts: ServeCliOptions): Promise<void> {
  let sandbox
  try {
    sandbox = await startSandbox({
      port: opts.port,
      host: opts.host,
      data: opts.data,
      inMemory: opts.inMemory,
      fixtures: opts.fixtures,
      trustProxy: opts.trustProxy,
      adminToken: opts.adminToken,
      allowHosts: opts.allowHost,
      clock: opts.clock,
      clockRunning: opts.clockRunning,
      failurePayload: opts.failurePayload,
      journalSize: opts.journalSize,
      maxSessions: opts.maxSessions,
      journalBytes: opts.journalMib * 2 ** 20,
      maxConnections: opts.maxConnections,
      smsPerMsisdn: opts.smsPerMsisdn,
      maxSms: opts.maxSms,
      maxVerifications: opts.maxVerifications,
      reasons: opts.reasons,
    })
  } catch (e) {
    if (e instanceof FixtureError) {
      for (const p of e.problems) process.stderr.write(`dcb: fixture error: ${p}\n`)
      throw new CliError('', EXIT.FAIL)
    }
    if (e instanceof ServeError || e instanceof StoreError) throw new CliError(e.message, EXIT.FAIL)
    throw e
  }
  const { url, engine, store } = sandbox
  for (const note of (store.info().recovered as { notes?: string[] } | undefined)?.notes ?? []) process.stderr.write(`dcb: ${note}\n`)
  const exposure = exposureWarning(sandbox.host, !!opts.adminToken, opts.trustProxy)
  if (exposure) process.stderr.write(exposure)
  if (sandbox.clockKept) {
    const now = engine.clockView().now
    process.stderr.write(
      `dcb: ${opts.data} keeps its own clock (now ${now}); --clock ${opts.clock} was not applied. To start over at that time: dcb reset --clock ${opts.clock}\n`,
    )
  }
  // --quiet: one line, the URL (so --port 0 can be used from scripts).
  if (opts.quiet) process.stdout.write(`${url}\n`)
  else {
    const info = store.info()
    const where = store.kind === 'file' ? `${info.path} (${engine.state.subs.size} subscriptions)` : 'in memory (nothing is kept)'
    process.stdout.write(
      [
        `${chalk.green('dcb sandbox')} listening on ${chalk.bold(url)}`,
        `  API key:  ${DEMO_API_KEY}   (header API-KEY)`,
        `  try:      curl -s ${url}/subscriptions/init -H 'API-KEY: ${DEMO_API_KEY}' -H 'Content-Type: application/json' -d '{"msisdn":"60123456001","service_code":"STREAMPLUS","country_code":"my"}'`,
        `  data:     ${where}`,
        `  clock:    ${engine.clockView().now}${engine.clockView().frozen ? ' (frozen)' : ''}`,
        `  control:  ${url}/_sandbox/health`,
        '',
      ].join('\n'),
    )
  }
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    if (!opts.quiet) process.stdout.write(`dcb: ${signal}: shutting down\n`)
    sandbox
      .close()
      .then(() => process.exit(0))
      .catch((e) => {
        process.stderr.write(`dcb: shutdown failed: ${(e as Error).message}\n`)
        process.exit(EXIT.FAIL)
      })
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
}

/** The warning of a server reachable from other machines: what they can reach, and what guards it. */
export function exposureWarning(host: string, adminToken: boolean, trustProxy: string | undefined): string | undefined {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (h === 'localhost' || h === '::1' || /^127\./.test(h)) return
  return [
    `dcb: warning: listening on ${host}, not loopback: other machines that can reach this one get`,
    `dcb:   the merchant API (API keys and each merchant's IP allowlist still apply) and the consent pages;`,
    adminToken
      ? `dcb:   the control API and console only with the admin token (Authorization: Bearer); keep it secret`
      : `dcb:   not the control API or console (loopback only: no --admin-token given)`,
    trustProxy ? `dcb:   X-Forwarded-For is believed only from ${trustProxy}` : `dcb:   X-Forwarded-For is ignored (no --trust-proxy)`,
    '',
  ].join('\n')
}
