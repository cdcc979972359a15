import { defaultWorldPath } from '../world/default-world.js'
import { FixtureError, loadWorld, worldJsonSchema } from '../world/load.js'
import { CliError, EXIT } from './errors.js'

export function validate(paths: string[], o: { json?: boolean } = {}): void {
  try {
    const { world, files, warnings } = loadWorld(paths)
    const counts = { merchants: world.merchants.length, services: world.services.length, carriers: world.carriers.length, rules: world.rules.length }
    if (o.json) return void process.stdout.write(JSON.stringify({ ok: true, files, ...counts, problems: [], warnings }, null, 2) + '\n')
    for (const w of warnings) process.stderr.write(`warning: ${w}\n`)
    // The default world is layered under the files unless the first extends nothing: it is not one of them.
    const onDefault = files[0] === defaultWorldPath() ? 1 : 0
    const given = files.length - onDefault
    process.stdout.write(
      `ok: ${given} file${given === 1 ? '' : 's'}${onDefault ? ' on the default world' : ''}: ${world.merchants.length} merchants, ${world.services.length} services, ${world.carriers.length} carriers, ${world.rules.length} rules\n`,
    )
  } catch (e) {
    if (e instanceof FixtureError) {
      if (o.json) process.stdout.write(JSON.stringify({ ok: false, problems: e.problems }, null, 2) + '\n')
      else for (const p of e.problems) process.stderr.write(`${p}\n`)
      throw new CliError(`${e.problems.length} problem${e.problems.length === 1 ? '' : 's'} found`, EXIT.FAIL)
    }
    throw e
  }
}

export function schema(): void {
  process.stdout.write(JSON.stringify(worldJsonSchema(), null, 2) + '\n')
}
