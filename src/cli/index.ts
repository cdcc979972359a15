/**
 * The `dcb` command line. Each subcommand loads its code when it runs, so `dcb --help` and the
 * client commands never load the server. `main.ts` runs it; the command tree is exported so the
 * reference test reads the commands and options from commander itself.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { DEFAULT_BASE_URL, DEFAULT_DATA_FILE, DEFAULT_PORT, DEMO_API_KEY } from '../contract/defaults.js'
import { MERCHANT_CALLS } from '../contract/merchant-calls.js'
import { decideColor } from './color.js'
import { CliError, EXIT, invokedAs } from './errors.js'
import { version } from '../version.js'
import { decimal } from './numbers.js'
import { helpSettings, helpWidth } from './help-format.js'

decideColor(process.argv, process.env)
const name = invokedAs()
export const program = new Command()
program
  .name(name)
  .description('Local sandbox of the direct-carrier-billing subscription API: serve it, or call it.')
  .version(version(), '-V, --version')
  .option('--no-color', 'no colours (also: NO_COLOR=1; FORCE_COLOR=1 forces them)')
  .option('--color', 'colours even when the output is not a terminal')
  .exitOverride()
  // Help wraps at spaces to the terminal's width (or COLUMNS), never past it.
  .configureHelp(helpSettings)
  // Usage errors: one line, `dcb: what is wrong (see dcb --help)`.
  .configureOutput({
    getOutHelpWidth: () => helpWidth(process.stdout),
    getErrHelpWidth: () => helpWidth(process.stderr),
    outputError: (str, write) =>
      write(
        `dcb: ${str
          .replace(/^error: /, '')
          .replace(/\s*\n\s*/g, ' ')
          .trim()} (see ${name} --help)\n`,
      ),
  })

const int = (name: string, min: number, max: number) => (v: string) => {
  const n = decimal(v)
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`)
  return n
}
const collect = (v: string, prev: string[] = []) => [...prev, v]

program
  .command('serve')
  .description('run the sandbox server (merchant API, control API under /_sandbox, consent pages)')
  .option('-p, --port <port>', 'port to listen on', int('--port', 0, 65535), DEFAULT_PORT)
  .option('--host <host>', 'address to listen on (default 127.0.0.1; with --lan 0.0.0.0)')
  .option('--data <file>', 'data file (snapshot + write-ahead log beside it)', DEFAULT_DATA_FILE)
  .option('--in-memory', 'keep nothing on disk')
  .addOption(
    new Option('--store <url>', 'keep the state in PostgreSQL (postgres://USER:PASSWORD@HOST:PORT/DATABASE): replicas with the same URL are one sandbox').env(
      'DCB_STORE',
    ),
  )
  .option('--replace-world', "with --store: make this server's world (fixtures) the database's")
  .option('--fixtures <path>', 'fixture file or folder layered on the default world (repeatable)', collect)
  .option(
    '--trust-proxy <list>',
    'proxies whose X-Forwarded-For is believed: comma-separated addresses, CIDRs, loopback, linklocal, uniquelocal (read right to left)',
  )
  .option('--allow-host <name>', 'a host name the server answers on a loopback listener besides localhost and 127.0.0.1 (repeatable)', collect)
  .addOption(new Option('--admin-token <token>', 'opens the control API to non-loopback clients with this bearer token').env('DCB_ADMIN_TOKEN'))
  .option('--clock <time>', 'start the sandbox clock at this time, frozen (e.g. 2026-01-31T00:00:00)')
  .option('--clock-running', 'with --clock: let the clock run from that time instead of freezing it')
  .addOption(
    new Option('--failure-payload <form>', 'payload of failures: as documented, or always null / always absent')
      .choices(['auto', 'null', 'absent'])
      .default('auto'),
  )
  .option(
    '--request-log-size <n>',
    'how many requests the request log keeps (default: 1000; old name: --journal-size)',
    int('--request-log-size', 1, 1_000_000),
  )
  // The old names keep working: hidden, and said in the new ones' help.
  .addOption(new Option('--journal-size <n>').hideHelp().argParser(int('--journal-size', 1, 1_000_000)))
  .option(
    '--max-sessions <n>',
    'the most sessions (X-DCB-Session) beside the default one; more is 429 SESSION_LIMIT',
    int('--max-sessions', 0, 1_000_000),
    1000,
  )
  .option(
    '--request-log-mib <n>',
    'how many MiB of request bodies the request logs keep, all sessions together (default: 32; old name: --journal-mib)',
    int('--request-log-mib', 1, 4096),
  )
  .addOption(new Option('--journal-mib <n>').hideHelp().argParser(int('--journal-mib', 1, 4096)))
  .option('--max-connections <n>', 'connections open at once; more are refused', int('--max-connections', 1, 1_000_000), 1024)
  .option('--sms-per-msisdn <n>', 'how many SMS messages each handset keeps', int('--sms-per-msisdn', 1, 100_000), 50)
  .option('--max-sms <n>', 'how many SMS messages each session keeps (the oldest go first)', int('--max-sms', 1, 100_000_000), 50_000)
  .option(
    '--max-verifications <n>',
    'how many verification requests each session keeps (the oldest go first)',
    int('--max-verifications', 1, 100_000_000),
    50_000,
  )
  .option(
    '--max-subscriptions <n>',
    'how many subscriptions each session keeps (none is dropped: past it a new one is refused until a reset)',
    int('--max-subscriptions', 1, 100_000_000),
    100_000,
  )
  .option('--quiet', 'print only the URL (http://HOST:PORT) and errors')
  .option('--no-reasons', 'send no X-DCB-Reason header with failures')
  .option('--allow-ip <cidr>', 'add an address or CIDR range to the allowlists of the merchants that allow loopback (the demo keys) (repeatable)', collect)
  .option('--https', 'HTTPS with a self-signed certificate (via listhen; loopback unless --host)')
  .option('--open', 'open the console in the default browser ($BROWSER if set)')
  .option('--lan', 'listen on the LAN (0.0.0.0), print the LAN URL and a QR code; the control API needs the admin token (one is made up if none is given)')
  .action(async (opts, cmd: Command) =>
    (await import('./serve.js')).serve({
      ...opts,
      dataGiven: cmd.getOptionValueSource('data') === 'cli',
      storeFromEnv: cmd.getOptionValueSource('store') === 'env',
      adminTokenFromEnv: cmd.getOptionValueSource('adminToken') === 'env',
    }),
  )

program
  .command('seed')
  .description('add many ACTIVE subscriptions to a data file at once (for load tests and benchmarks; no server may hold the file)')
  .requiredOption('--subscriptions <n>', 'how many', int('--subscriptions', 1, 10_000_000))
  .option('--data <file>', 'data file', DEFAULT_DATA_FILE)
  .option('--service <code>', 'service code', 'STREAMPLUS')
  .option('--country <cc>', 'country code', 'my')
  .option('--merchant <id>', 'merchant id', 'demo')
  .option(
    '--first-msisdn <msisdn>',
    "MSISDNs count up from this one, through endings 000-099 only (default: the country's first carrier's first number, 601200000000 in my)",
  )
  .option('--spread <duration>', 'start the subscriptions evenly over this long before now (e.g. P1M: renewals fall at realistic, distinct times), not all now')
  .option('--json', 'print the result as JSON ({seeded, data, total, ms})')
  .action(async (opts) => (await import('./seed.js')).seed(opts))

/**
 * What a client command calls, and so which credential it can use: the merchant API takes the API key,
 * the control API the admin token, a consent page neither. `init` calls the merchant API and carries
 * the admin token to the control commands of its `next:` line.
 */
type Calls = 'merchant' | 'control' | 'both' | 'page'
const CALLS_WORDS: Record<Calls, string> = {
  merchant: 'calls the merchant API, which takes the merchant key (--api-key), not the admin token',
  control: 'calls the control API, which takes no merchant key (from another machine: --admin-token)',
  both: '',
  page: "posts to the consent page, the subscriber's side, which takes no key or token",
}

/** The options every client command takes; a credential it cannot use is refused by name (hidden from its help). */
function clientCommand(name: string, description: string, calls: Calls, hint?: string, manySessions = false): Command {
  const apiKey = calls === 'merchant' || calls === 'both'
  const adminToken = calls === 'control' || calls === 'both'
  const cmd = program
    .command(name)
    .description(description)
    .option('--base-url <url>', `server base URL (env DCB_BASE_URL, default ${DEFAULT_BASE_URL})`)
    .addOption(hiddenUnless(apiKey, new Option('--api-key <key>', `merchant API key (env DCB_API_KEY, default ${DEMO_API_KEY})`)))
    .addOption(hiddenUnless(adminToken, new Option('--admin-token <token>', 'control API token for a non-loopback server (env DCB_ADMIN_TOKEN)')))
    .option('--timeout <seconds>', 'give up after this many seconds (default 30)', int('--timeout', 1, 3600))
    .addOption(
      manySessions
        ? new Option('--session <name>', 'read this sandbox session (header X-DCB-Session; env DCB_SESSION); repeat it to merge sessions').argParser(
            (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
          )
        : new Option('--session <name>', 'work in this sandbox session (header X-DCB-Session; env DCB_SESSION)'),
    )
    .option('--json', 'print the answer as JSON')
  // Accepted and then not sent, a key or token would look like it was used (dcb coverage --api-key K showed every merchant).
  cmd.hook('preAction', (_parent, action) => {
    const refused = [
      ['--api-key', 'apiKey', apiKey],
      ['--admin-token', 'adminToken', adminToken],
    ].find(([, key, usable]) => !usable && action.getOptionValueSource(key as string) === 'cli')
    if (refused)
      action.error(`${refused[0]} does not apply to ${program.name()} ${action.name()}: it ${CALLS_WORDS[calls]}${hint ? `; ${hint}` : ''}`, {
        exitCode: EXIT.USAGE,
        code: 'dcb.inapplicable',
      })
  })
  return cmd
}
const hiddenUnless = (shown: boolean, option: Option) => (shown ? option : option.hideHelp())
const client = () => import('./client.js')

clientCommand('init', `start a subscription flow (POST ${MERCHANT_CALLS.init.path})`, 'both')
  .option('--msisdn <msisdn>', 'subscriber MSISDN, digits, calling code first')
  .option('--service <code>', 'service code, e.g. STREAMPLUS')
  .option('--country <cc>', 'country code, lower case, e.g. my')
  .option('--language <tag>', 'language of the SMS texts')
  .action(async (o) => (await client()).init(o))
clientCommand('verify', `submit the OTP (POST ${MERCHANT_CALLS.verify.path})`, 'merchant')
  .option('--id <verif_request_id>', 'the verif_request_id from init')
  .option('--otp <code>', 'the OTP the subscriber received')
  .option('--language <tag>', 'language of the SMS texts')
  .action(async (o) => (await client()).verify(o))
clientCommand('status', `read a subscription (POST ${MERCHANT_CALLS.status.path})`, 'merchant')
  .argument('[subscription_id]')
  .action(async (id, o) => (await client()).status(id, o))
clientCommand('otp', "print the latest OTP sent to an MSISDN, or a verification request's (the code alone)", 'control')
  .argument('[msisdn]')
  .option('--id <verif_request_id>', "that verification request's OTP, whatever later Inits sent")
  .option('--wait <seconds>', 'wait up to this long for one')
  .action(async (m, o) => (await client()).otp(m, o))
clientCommand('sms', "show a handset's messages, newest first", 'control')
  .argument('<msisdn>')
  .action(async (m, o) => (await client()).sms(m, o))
clientCommand('mo', 'send an SMS from a handset to a short code (PSMS keyword, STOP)', 'control')
  .argument('<msisdn>')
  .argument('<short_code>')
  .argument('<text...>')
  .action(async (m, sc, t, o) => (await client()).mo(m, sc, t, o))
clientCommand('consent', 'approve or deny a redirect consent page', 'page')
  .argument('<url>', 'the redirect_url from init (or its id)')
  .argument('<action>', 'approve or deny')
  .action(async (u, a, o) => (await client()).consent(u, a, o))
clientCommand('cancel', 'cancel a subscription on the carrier side', 'control')
  .argument('<subscription_id>')
  .action(async (id, o) => (await client()).cancel(id, o))
clientCommand('clock', 'show the sandbox clock, or move it: clock advance P1M | clock set 2026-01-31T00:00:00', 'control')
  .argument('[args...]')
  .option('--all', 'list every event of a big move (a person gets counts and the first and last few)')
  .action(async (args, o) => (await client()).clock(args, o))
clientCommand('subscriptions', 'list subscriptions of every merchant', 'control', "one merchant's: --merchant ID")
  .option('--msisdn <msisdn>', "only this handset's")
  .option('--merchant <id>', "only this merchant's, e.g. demo")
  .option('--service <code>', 'only of this service, e.g. STREAMPLUS')
  .option('--status <status>', 'ACTIVE, CANCELED or EXPIRED')
  .action(async (o) => (await client()).subscriptions(o))
clientCommand('subscription', 'one subscription with its charge history and the messages about it (--json: the control API answer as it is)', 'control')
  .argument('<subscription_id>')
  .action(async (id, o) => (await client()).subscription(id, o))
clientCommand('rules', 'runtime carrier rules: rules list | add <json|file> | remove <id> | clear', 'control')
  .argument('[action]', 'list (default), add, remove or clear')
  .argument('[rule]', 'add: a rule as JSON, or a file with a rule, an array or {"rules": [...]}; remove: the rule id')
  .action(async (verb, arg, o) => (await import('./rules.js')).rules(verb, arg, o))
clientCommand('logs', 'show the request log', 'control')
  .option('-f, --follow', 'keep printing new requests')
  .option('--limit <n>', 'how many of the latest to show first (default 20)')
  .option('--msisdn <msisdn>', 'only requests about this MSISDN')
  .option('--subscription <id>', 'only requests about this subscription, the ones that created it included')
  .option('--all', `every entry the request log holds, oldest first (with --json: a file for ${name} replay)`)
  .action(async (o) => (await client()).logs(o))
clientCommand('reset', 'back to the loaded fixtures (drops subscriptions, messages, runtime rules) and empties the request log', 'control')
  .option('--clock <time>', 'start over at this sandbox time (earlier than now too)')
  .option('--seed <n>', 'draw delay distributions from this seed (default 0, the same at every reset)', int('--seed', 0, Number.MAX_SAFE_INTEGER))
  .action(async (o) => (await client()).reset(o))
clientCommand(
  'replay',
  `replay a recorded session (${name} logs --json --all) and compare every answer; resets the session first (its subscriptions, request log and coverage start over)`,
  'both',
)
  .argument('<file>')
  .option('--merchant <id>', "whose requests to replay (default: the first merchant in the file; send the key's merchant)")
  .option('--no-reset', 'replay into the session as it is: its subscriptions, request log and coverage stay, and its clock only moves forward')
  .action(async (f, o) => (await import('./replay.js')).replay(f, o))
clientCommand('world', 'print the world in force: carriers, services, merchants, rules in the order consulted, each with its file', 'control').action(
  async (o) => (await import('./world.js')).world(o),
)
clientCommand(
  'coverage',
  "what each merchant's traffic exercised (outcomes seen) and did wrong (findings), since the session's last reset",
  'control',
  "one merchant's: --merchant ID",
  true,
)
  .option('--merchant <id>', 'only this merchant (default: every merchant with traffic)')
  .option('--sessions <glob>', 'merge every session whose name matches (e.g. "ci-*")')
  .option('--junit <file>', 'also write a JUnit XML report: a test case per outcome, one per finding (with a policy: failing only what the policy fails)')
  .option('--allow-empty', 'with --junit: a session with no calls writes a report with no test case and exits 0 (without it: one failing case, exit 1)')
  .option('--min <percent>', 'exit 1 when a merchant with a call past authentication is below this percentage of outcomes seen', int('--min', 0, 100))
  .option('--policy <file>', 'a JSON policy { "require": [ids or globs], "allow": [finding codes], "min": percent }: exit 1 on each reason it fails')
  .option('--require <id>', 'exit 1 when this outcome (or every one a glob such as "verify.*" matches) was never seen; repeatable', collect)
  .option('--allow <finding>', 'a finding code that does not fail (others do); repeatable', collect)
  .option('--fail-on-findings', 'exit 1 when a finding not allowed was raised')
  .action(async (o) => (await import('./coverage.js')).coverage(o))
clientCommand('scenarios', 'list the magic numbers and rules of the running sandbox', 'control')
  .option('--markdown', 'as a Markdown table')
  .action(async (o) => (await client()).scenarios(o))
clientCommand('flow', 'a guided end-to-end subscription (asks on a terminal; flags for scripts)', 'both')
  .option('--msisdn <msisdn>', 'subscriber MSISDN, digits, calling code first (default: a number of the country)')
  .option('--service <code>', 'service code, e.g. STREAMPLUS')
  .option('--country <cc>', 'country code, lower case, e.g. my')
  .option('--language <tag>', 'language of the SMS texts')
  .option('--scenario <ending>', 'a magic ending, e.g. 201 (with --country: a number of that country)')
  .option('--otp <code>', 'use this OTP instead of reading the inbox')
  .option('--deny', 'deny the consent page (redirect flow)')
  .action(async (o) => (await import('./flow.js')).flow(o))
clientCommand(
  'run',
  "run a scripted scenario file (JSON steps with expectations); resets the sandbox first, or runs in process with --fixtures/--clock (or the file's fixtures/clock)",
  'both',
)
  .argument('<file>')
  .option('--no-reset', 'keep the sandbox state instead of resetting it first')
  .option(
    '--fixtures <path>',
    "run against a fresh in-process sandbox with these fixture files or folders, no server (repeatable; before the file's fixtures)",
    collect,
  )
  .option(
    '--clock <time>',
    "run against a fresh in-process sandbox with its clock frozen at this time (with --fixtures, or the default world; before the file's clock)",
  )
  .action(async (f, o) => (await import('./run.js')).runFile(f, o))

const fixtures = program.command('fixtures').description('work with fixture files')
fixtures
  .command('validate')
  .description('check fixture files (layered on the default world) and print every problem')
  .argument('<paths...>', 'fixture files or folders')
  .option('--json', 'print the result as JSON')
  .action(async (paths: string[], o) => (await import('./fixtures.js')).validate(paths, o))
fixtures
  .command('schema')
  .description('print the JSON Schema of fixture files')
  .action(async () => (await import('./fixtures.js')).schema())

export async function main(): Promise<void> {
  // A closed pipe (dcb scenarios | head) ends the command quietly.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0)
    })
  }
  try {
    await program.parseAsync(process.argv)
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') process.exit(0)
      process.exit(EXIT.USAGE)
    }
    if (err instanceof CliError) {
      if (err.message) process.stderr.write(`dcb: ${err.message}\n`)
      process.exit(err.exitCode)
    }
    process.stderr.write(`dcb: unexpected error: ${(err as Error)?.message ?? err}\n`)
    if (process.env.DCB_DEBUG) console.error(err)
    process.exit(EXIT.FAIL)
  }
}
