/**
 * The `dcb` command line. Each subcommand loads its code when it runs, so `dcb --help` and the
 * client commands never load the server.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { CliError, EXIT } from './errors.js'
import { version } from '../version.js'

const program = new Command()
program
  .name('dcb')
  .description('Local sandbox of the direct-carrier-billing subscription API: serve it, or call it.')
  .version(version(), '-V, --version')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()
  .configureOutput({ outputError: (str, write) => write(str) })

const int = (name: string, min: number, max: number) => (v: string) => {
  const n = Number(v)
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`)
  return n
}
const collect = (v: string, prev: string[] = []) => [...prev, v]

program
  .command('serve')
  .description('run the sandbox server (merchant API, control API under /_sandbox, consent pages)')
  .option('-p, --port <port>', 'port to listen on', int('--port', 0, 65535), 7700)
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--data <file>', 'data file (snapshot + journal beside it)', '.dcb/sandbox.json')
  .option('--in-memory', 'keep nothing on disk')
  .option('--fixtures <path>', 'fixture file or folder layered on the default world (repeatable)', collect)
  .option('--trust-proxy', 'believe X-Forwarded-For for the source IP (only behind your own proxy)')
  .addOption(new Option('--admin-token <token>', 'opens the control API to non-loopback clients with this bearer token').env('DCB_ADMIN_TOKEN'))
  .option('--clock <time>', 'start the sandbox clock at this time, frozen (e.g. 2026-01-31T00:00:00)')
  .option('--clock-running', 'with --clock: let the clock run from that time instead of freezing it')
  .addOption(new Option('--failure-payload <form>', 'payload of failures: as documented, or always null / always absent').choices(['auto', 'null', 'absent']).default('auto'))
  .option('--journal-size <n>', 'how many requests the request journal keeps', int('--journal-size', 1, 1_000_000), 1000)
  .option('--sms-per-msisdn <n>', 'how many SMS messages each handset keeps', int('--sms-per-msisdn', 1, 100_000), 50)
  .option('--quiet', 'print only errors')
  .action(async (opts) => (await import('./serve.js')).serve(opts))

const fixtures = program.command('fixtures').description('work with fixture files')
fixtures
  .command('validate')
  .description('check fixture files (layered on the default world) and print every problem')
  .argument('<paths...>', 'fixture files or folders')
  .action(async (paths: string[]) => (await import('./fixtures.js')).validate(paths))
fixtures
  .command('schema')
  .description('print the JSON Schema of fixture files')
  .action(async () => (await import('./fixtures.js')).schema())

async function main(): Promise<void> {
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

void main()
