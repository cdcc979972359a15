import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { networkInterfaces } from 'node:os'
import { relative } from 'node:path'
import chalk from 'chalk'
import module from 'node:module'
import { DEFAULT_HOST, DEFAULT_WORLD_FILE } from '../contract/defaults.js'
import { CONTROL_CALLS } from '../contract/calls.js'
import { MERCHANT_CALLS } from '../contract/merchant-calls.js'
import { renamedProblem } from '../contract/option-names.js'
import { defaultWorldPath, FixtureError } from '../world/default-world.js'
import { allowIpProblem, isWildcardAddress, ServeError, startSandbox } from '../server.js'
import { StoreError } from '../store/types.js'
import { CliError, EXIT, invokedAs } from './errors.js'
import { collectWhenIdle } from './idle-gc.js'
import { sampleInit } from './sample-init.js'

interface ServeCliOptions {
  port: number
  host?: string
  data: string
  /** --data was on the command line (not its default). */
  dataGiven?: boolean
  inMemory?: boolean
  store?: string
  /** The store came from DCB_STORE, not the command line. */
  storeFromEnv?: boolean
  replaceWorld?: boolean
  fixtures?: string[]
  trustProxy?: string
  allowHost?: string[]
  adminToken?: string
  /** The admin token came from DCB_ADMIN_TOKEN, not the flag. */
  adminTokenFromEnv?: boolean
  clock?: string
  clockRunning?: boolean
  failurePayload: 'auto' | 'null' | 'absent'
  requestLogSize?: number
  /** The old name of --request-log-size. */
  journalSize?: number
  maxSessions?: number
  requestLogMib?: number
  /** The old name of --request-log-mib. */
  journalMib?: number
  maxConnections: number
  smsPerMsisdn: number
  maxSms: number
  maxVerifications: number
  maxSubscriptions: number
  quiet?: boolean
  reasons: boolean
  allowIp?: string[]
  https?: boolean
  open?: boolean
  lan?: boolean
}

export async function serve(opts: ServeCliOptions): Promise<void> {
  // An empty token opens nothing: from the flag it is a mistake; an empty DCB_ADMIN_TOKEN is no token.
  if (opts.adminToken !== undefined && !opts.adminToken.trim()) {
    if (!opts.adminTokenFromEnv) throw new CliError('--admin-token needs a token (it was empty); leave it out to keep the control API to loopback', EXIT.USAGE)
    opts = { ...opts, adminToken: undefined }
  }
  // Alone it would do nothing (the clock runs unless --clock freezes it). Said here by flag: startSandbox's
  // own check names its option (clockRunning) too, for the library.
  if (opts.clockRunning && opts.clock === undefined) throw new CliError('--clock-running goes with --clock: the time the clock runs from', EXIT.USAGE)
  const cidrs = opts.allowIp ?? []
  for (const cidr of cidrs) {
    const problem = allowIpProblem(cidr)
    if (problem) throw new CliError(problem, EXIT.USAGE)
  }
  // An empty --host (an unset "$HOST") would make Node listen on every interface: refuse it.
  if (opts.host !== undefined && !opts.host.trim()) throw new CliError('--host needs an address, e.g. 127.0.0.1 or 0.0.0.0 (it was empty)', EXIT.USAGE)
  // An empty entry (an unset variable, a stray comma) would silently trust nothing: say so instead.
  if (opts.trustProxy !== undefined && opts.trustProxy.split(',').some((e) => !e.trim()))
    throw new CliError(
      `--trust-proxy ${JSON.stringify(opts.trustProxy)} has an empty entry: give addresses, CIDR ranges or loopback, linklocal, uniquelocal, comma-separated`,
      EXIT.USAGE,
    )
  for (const name of opts.allowHost ?? []) {
    // A name that can never equal a Host header (empty, `*`, spaces) would be silently ignored.
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(:\d+)?$/i.test(name.trim()))
      throw new CliError(`--allow-host ${JSON.stringify(name)} is not a host name (one name per --allow-host, no wildcards)`, EXIT.USAGE)
  }
  if (opts.store !== undefined) {
    if (opts.dataGiven || opts.inMemory)
      throw new CliError(
        `${opts.storeFromEnv ? 'DCB_STORE' : '--store'} keeps the state in PostgreSQL: it cannot go with ${opts.inMemory ? '--in-memory' : '--data'} (drop one of them)`,
        EXIT.USAGE,
      )
    const { describeUrl, SharedStoreError } = await import('../store/postgres.js')
    try {
      describeUrl(opts.store, opts.storeFromEnv ? 'DCB_STORE' : '--store')
    } catch (e) {
      if (e instanceof SharedStoreError) throw new CliError(e.message, EXIT.USAGE)
      throw e
    }
  } else if (opts.replaceWorld) throw new CliError('--replace-world goes with --store (the world of a shared database)', EXIT.USAGE)
  // Both given: one of them would be dropped without a word (the banner says "in memory", nothing is written).
  if (opts.inMemory && opts.dataGiven) throw new CliError('--in-memory keeps nothing on disk: it cannot go with --data (drop one of them)', EXIT.USAGE)
  const host = opts.host ?? (opts.lan ? '0.0.0.0' : DEFAULT_HOST)
  if (opts.lan && /^(127\.|::1$|localhost$)/.test(host)) throw new CliError(`--lan listens on the LAN: drop --host ${host} or give a LAN address`, EXIT.USAGE)
  // On the LAN the control API needs the admin token: one is made up when none is given.
  // With --quiet a made-up token would never be shown, so --lan --quiet needs one given.
  if (opts.lan && opts.quiet && !opts.adminToken)
    throw new CliError('--lan --quiet needs --admin-token (or DCB_ADMIN_TOKEN): a made-up token would not be printed', EXIT.USAGE)
  const adminToken = opts.adminToken ?? (opts.lan ? randomBytes(18).toString('base64url') : undefined)
  const viaListhen = opts.https || opts.lan || opts.open ? (await import('./listen.js')).listenWithListhen({ https: !!opts.https, lan: !!opts.lan }) : undefined
  // The signal handlers come first: a SIGTERM at any moment after this, the start included, is a graceful
  // close (one during the start closes the server as soon as it is up, before it says it is ready).
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined
  let stopping: string | null = null
  const shutdown = (running: NonNullable<typeof sandbox>, signal: string) => {
    if (!opts.quiet) process.stdout.write(`dcb: ${signal}: shutting down\n`)
    running
      .close()
      .then(() => process.exit(0))
      .catch((e) => {
        process.stderr.write(`dcb: shutdown failed: ${(e as Error).message}\n`)
        process.exit(EXIT.FAIL)
      })
  }
  const stop = (signal: string) => {
    if (stopping) return
    stopping = signal
    if (sandbox) shutdown(sandbox, signal)
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
  try {
    sandbox = await startSandbox({
      port: opts.port,
      host,
      data: opts.store === undefined ? opts.data : undefined,
      inMemory: opts.inMemory,
      store: opts.store,
      replaceWorld: opts.replaceWorld,
      fixtures: opts.fixtures,
      allowIps: cidrs,
      listen: viaListhen?.listen,
      trustProxy: opts.trustProxy,
      adminToken,
      allowHosts: opts.allowHost,
      clock: opts.clock,
      clockRunning: opts.clockRunning,
      failurePayload: opts.failurePayload,
      requestLogSize: oneOf(opts, 'requestLogSize', 'journalSize') ?? 1000,
      maxSessions: opts.maxSessions,
      requestLogBytes: (oneOf(opts, 'requestLogMib', 'journalMib') ?? 32) * 2 ** 20,
      maxConnections: opts.maxConnections,
      smsPerMsisdn: opts.smsPerMsisdn,
      maxSms: opts.maxSms,
      maxVerifications: opts.maxVerifications,
      maxSubscriptions: opts.maxSubscriptions,
      reasons: opts.reasons,
    })
  } catch (e) {
    if (e instanceof FixtureError) {
      for (const p of e.problems) process.stderr.write(`dcb: fixture error: ${p}\n`)
      throw new CliError('', EXIT.FAIL)
    }
    if (e instanceof ServeError) throw new CliError(e.message, e.kind === 'usage' ? EXIT.USAGE : EXIT.FAIL)
    if (e instanceof StoreError) throw new CliError(e.message, EXIT.FAIL)
    throw e
  }
  if (stopping) return shutdown(sandbox, stopping)
  collectWhenIdle(() => sandbox!.requests)
  const { url, engine, store } = sandbox
  const listening = viaListhen?.listening()
  for (const note of sandbox.recoveryNotes) process.stderr.write(`dcb: ${note}\n`)
  // The token counts when --lan made one up too.
  const exposure = exposureWarning(sandbox.host, !!adminToken, opts.trustProxy)
  if (exposure) process.stderr.write(exposure)
  if (sandbox.clockKept) {
    const now = engine.clockView().now
    process.stderr.write(
      `dcb: ${opts.store !== undefined ? 'the database' : opts.data} keeps its own clock (now ${now}); --clock ${opts.clock} was not applied${opts.store !== undefined ? ', nor to new sessions and resets (they start where the database says, through every replica)' : ''}. To start over at that time: ${invokedAs()} reset --clock ${opts.clock}\n`,
    )
  }
  // --quiet: one line, the URL (so --port 0 can be used from scripts); no banner, no QR code.
  if (opts.quiet) process.stdout.write(`${url}\n`)
  else {
    const info = store.info()
    // The default session's: other sessions' are listed by GET /_sandbox/sessions.
    const subs = `${engine.state.subs.size} ${engine.state.subs.size === 1 ? 'subscription' : 'subscriptions'} in the default session`
    const where =
      store.kind === 'file'
        ? `${info.path} (${subs})`
        : store.kind === 'postgres'
          ? `PostgreSQL ${info.database}, schema version ${info.schema_version} (shared: ${subs})`
          : 'in memory (nothing is kept)'
    const shown = (f: string) => (relative(process.cwd(), f).startsWith('..') ? f : relative(process.cwd(), f))
    const rules = engine.world.world.rules
    // An Init this world answers with SUCCESS (none: no active merchant with a key in clear sells anything here).
    const sample = sampleInit(engine.world.world)
    const ruleSources = engine.worldSources()?.rules ?? {}
    // Each file with the rules in force that it brought (a rule replaced by a later file counts there).
    const fileLines = sandbox.files.map((f, i) => {
      // The default world's rules name it as in the package, wherever the server runs.
      const source = f === defaultWorldPath() ? DEFAULT_WORLD_FILE : shown(f)
      const ids = rules.filter((r) => ruleSources[r.id] === source).map((r) => r.id)
      const list = ids.length > 6 ? `${ids.slice(0, 4).join(', ')}, … ${ids.at(-1)}` : ids.join(', ')
      return `  ${i ? '          ' : 'fixtures: '}${shown(f)} (${ids.length} rule${ids.length === 1 ? '' : 's'}${ids.length ? `: ${list}` : ''})`
    })
    // On every interface the URL above is the loopback one; the machine's other addresses follow it.
    const bound = (sandbox.server.address() as AddressInfo).address
    const everyInterface = isWildcardAddress(bound)
    const lan = opts.lan && listening ? await listening.lanUrls() : everyInterface ? interfaceUrls(bound, url) : []
    const lanNote = opts.lan
      ? 'consent pages open on a phone; the control API needs the admin token'
      : 'for other machines; the warning on stderr says what they reach'
    process.stdout.write(
      [
        `${chalk.green('dcb sandbox')} listening on ${chalk.bold(url)}${everyInterface ? `  (bound to ${bound === '::' ? '[::]' : bound}: every interface)` : ''}`,
        ...lan.map((u) => `  LAN:      ${chalk.bold(u)}  (${lanNote})`),
        ...(sample
          ? [
              `  API key:  ${sample.apiKey}   (header API-KEY)`,
              `  try:      curl -s${opts.https ? 'k' : ''} ${url}${MERCHANT_CALLS.init.path} -H 'API-KEY: ${sample.apiKey}' -H 'Content-Type: application/json' -d '${JSON.stringify(sample.body)}'`,
            ]
          : []),
        `  data:     ${where}`,
        `  clock:    ${engine.clockView().now}${engine.clockView().frozen ? ' (frozen)' : ''}`,
        ...fileLines,
        `  rules:    ${rules.length} in force  (${invokedAs()} world lists them in order, ${invokedAs()} scenarios describes them)`,
        ...(cidrs.length
          ? [
              `  allow-ip: ${cidrs.join(', ')} added to the allowlists of ${engine.world.world.merchants
                .filter((m) => m.allowlist.includes('127.0.0.0/8'))
                .map((m) => m.id)
                .join(', ')}`,
            ]
          : []),
        ...(opts.lan && !opts.adminToken ? [`  admin:    token ${adminToken}  (Authorization: Bearer …; --admin-token sets your own)`] : []),
        ...(opts.https ? ['  https:    a self-signed certificate (curl -k; browsers ask once)'] : []),
        `  control:  ${url}/_sandbox${CONTROL_CALLS.health.path}`,
        '',
      ].join('\n'),
    )
    if (opts.lan && listening) await listening.showQr()
  }
  // Node 22+: the modules compiled so far go to the compile cache now (a server is seldom stopped gently).
  ;(module as { flushCompileCache?: () => void }).flushCompileCache?.()
  if (opts.open && listening) {
    const consoleUrl = `${url}/`
    if (!opts.quiet) process.stdout.write(`  opening ${consoleUrl} in the default browser\n`)
    const { openBrowser } = await import('./listen.js')
    await openBrowser(consoleUrl, listening)
  }
}

/**
 * The URLs of this machine's own addresses, for a server bound to every interface (`bound`, 0.0.0.0
 * or ::) whose loopback URL is `url`: IPv4 ones, and with :: the IPv6 ones that need no zone.
 */
/** Kebab case of an option's attribute name, as the user typed it. */
const flag = (name: string) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`

/** An option given by its name or its old name; both, with different values, is refused by name. */
function oneOf(opts: ServeCliOptions, name: 'requestLogSize' | 'requestLogMib', old: 'journalSize' | 'journalMib'): number | undefined {
  const problem = renamedProblem(opts, name, old, flag)
  if (problem) throw new CliError(problem, EXIT.USAGE)
  return opts[name] ?? opts[old]
}

function interfaceUrls(bound: string, url: string): string[] {
  const { protocol, port } = new URL(url)
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && (a.family === 'IPv4' || (bound === '::' && a.scopeid === 0)))
    .map((a) => `${protocol}//${a!.family === 'IPv6' ? `[${a!.address}]` : a!.address}:${port}`)
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
