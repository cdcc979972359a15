// npm run bench: the speed and memory figures of dcb, measured side by side on this machine.
// Everything runs on 127.0.0.1; every load is bounded in count and time.
// `node bench/run.js` runs every stage, `node bench/run.js STAGE…` some of them, `report [--check]`
// only writes (or checks) the benchmarks page from bench/results.json.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, RESULTS_FILE, cleanUp, results } from './common.js'
import { PAGE, pageWithResults, writeResults } from './report.js'
import { consoleOpen, otpFlows, sessionWrites, shared, statusThroughput, writeLatency } from './stages-http.js'
import { instructionCounts } from './instructions.js'
import { advanceYear, binary, initsRss, library, memoryOverMillion, startup } from './stages-process.js'

const only = process.argv.slice(2)
if (only[0] === 'report') {
  // Rewrites the page's table from results.json (no measuring); `report --check` only says whether it is in step.
  Object.assign(results, JSON.parse(readFileSync(RESULTS_FILE, 'utf8')))
  cleanUp()
  if (only[1] === '--check') {
    const inStep = pageWithResults() === readFileSync(PAGE, 'utf8')
    console.log(
      inStep
        ? 'docs/reference/benchmarks.md has the figures of bench/results.json'
        : 'docs/reference/benchmarks.md differs from bench/results.json: run node bench/run.js report',
    )
    process.exit(inStep ? 0 : 1)
  }
  writeResults()
  process.exit(0)
}

// The stages in the order a full run measures them.
const stages = {
  status: statusThroughput,
  console: consoleOpen,
  flows: otpFlows,
  instructions: instructionCounts,
  shared,
  writes: writeLatency,
  sessions: sessionWrites,
  library,
  startup,
  binary,
  advance: advanceYear,
  memory: memoryOverMillion,
  inits: initsRss,
}
// A build of tsup alone lacks what `npm run build` checks once (dist/world.checked.json): its
// `dcb serve` then loads zod and layers the world at every start, and every figure reads slower.
for (const root of [ROOT, ...(process.env.BENCH_BASE ? [process.env.BENCH_BASE] : [])])
  if (!existsSync(join(root, 'dist', 'world.checked.json'))) {
    console.error(`bench: ${root} is not fully built (no dist/world.checked.json): run npm run build there first`)
    process.exit(2)
  }
try {
  for (const name of only) if (!(name in stages)) throw new Error(`unknown stage "${name}" (stages: ${Object.keys(stages).join(', ')})`)
  if (only.length) {
    // A partial run keeps the other figures of the last full run.
    try {
      const last = JSON.parse(readFileSync(RESULTS_FILE, 'utf8'))
      results.figures = { ...last.figures }
      // The date stays the full run's; the stages measured since say when they were.
      results.stages = { ...last.stages }
      for (const name of only) results.stages[name] = results.date
      results.date = last.date
    } catch {}
  }
  for (const [name, fn] of Object.entries(stages)) if (!only.length || only.includes(name)) await fn()
  writeFileSync(RESULTS_FILE, JSON.stringify(results, null, 2) + '\n')
  writeResults()
} finally {
  cleanUp()
}
