// The `instructions` stage: instructions per OTP flow, counted by valgrind (callgrind) rather than timed.
// CPU time on a shared VM drifts by a factor of two between rounds; an instruction count of the same work
// drifts by a few percent, so a change of 3% can be seen. Each server runs under callgrind: a warm-up of
// flows (the JIT settles), the counters zeroed, the counted flows, a dump. The main thread's count is
// dcb's own work and node's; the other threads' (V8's compiler and GC helpers) depend on timing that
// valgrind's slowdown distorts, so they are reported beside it, not as the figure.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { BIN, ROOT, log, median, msisdnOf, results, subscribe, tmp } from './common.js'

const WARM = Number(process.env.BENCH_WARM_FLOWS ?? 3000)
const COUNTED = Number(process.env.BENCH_COUNTED_FLOWS ?? 1000)

/** Runs `argv` under callgrind; answers the instructions per flow of the counted flows, main thread and all threads. */
async function countFlows(label, argv, first) {
  const dir = mkdtempSync(join(tmp, `cg-${label}-`))
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', '--separate-threads=yes', '--dump-instr=no', `--callgrind-out-file=${join(dir, 'cg.%p')}`, process.execPath, ...argv],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  )
  let out = ''
  child.stderr.on('data', (d) => (out += d))
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) resolve(m[1])
    })
    child.on('exit', (code) => reject(new Error(`${label} exited ${code}: ${out.slice(-500)}`)))
  })
  let n = first
  const load = async (count) => {
    let left = count
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (left-- > 0) await subscribe(url, msisdnOf(n++))
      }),
    )
  }
  // callgrind_control reaches an idle server too (vgdb), so nothing else runs while it waits.
  const control = (flag) => new Promise((resolve) => spawn('callgrind_control', [flag, String(child.pid)], { stdio: 'ignore' }).on('exit', resolve))
  await load(WARM)
  await control('-z')
  await load(COUNTED)
  await control('-d')
  child.removeAllListeners('exit')
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  // One file per thread of the dump (part 1): `cg.PID.1-01` is the main thread.
  const perThread = readdirSync(dir)
    .filter((f) => /\.1-\d+$/.test(f))
    .map((f) => ({ thread: Number(f.split('-').pop()), ir: Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'))?.[1] ?? 0) }))
  const main = perThread.find((t) => t.thread === 1)?.ir ?? 0
  const all = perThread.reduce((s, t) => s + t.ir, 0)
  return { main: Math.round(main / COUNTED), all: Math.round(all / COUNTED) }
}

/** Two at a time (two cores here); each server's flows use MSISDNs of their own. */
async function inPairs(jobs) {
  const out = {}
  for (let i = 0; i < jobs.length; i += 2) {
    const pair = jobs.slice(i, i + 2)
    const done = await Promise.all(pair.map(([label, argv], k) => countFlows(label, argv, (i + k) * 100_000)))
    pair.forEach(([label], k) => (out[label] = done[k]))
  }
  return out
}

export async function instructionCounts() {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    log('instructions: valgrind is not installed (apt-get install valgrind): stage skipped')
    return
  }
  const BASE = process.env.BENCH_BASE
  const ROUNDS = Number(process.env.BENCH_INSTRUCTION_ROUNDS ?? 1)
  log(`instructions per OTP flow under callgrind: ${WARM} warm-up flows, then ${COUNTED} counted, ${ROUNDS} round(s)`)
  const data = (name) => join(tmp, `${name}-${Math.random().toString(36).slice(2)}.json`)
  const rounds = []
  for (let r = 0; r < ROUNDS; r++) {
    const jobs = [
      ['file', [BIN, 'serve', '--port', '0', '--data', data('ir-file')]],
      ['memory', [BIN, 'serve', '--port', '0', '--in-memory']],
      ['floor', [join(ROOT, 'bench', 'floor-server.js')]],
    ]
    // The base in memory too: what the base's engine and HTTP layer took with no disk at all.
    if (BASE)
      jobs.unshift(
        ['base', [join(BASE, 'bin', 'dcb.js'), 'serve', '--port', '0', '--data', data('ir-base')]],
        ['base_memory', [join(BASE, 'bin', 'dcb.js'), 'serve', '--port', '0', '--in-memory']],
      )
    rounds.push(await inPairs(jobs))
    log(rounds.at(-1))
  }
  const figure = (label, kind) => median(rounds.map((r) => r[label][kind]))
  const kinds = ['file', 'memory', 'floor', ...(BASE ? ['base', 'base_memory'] : [])]
  results.figures.instructions = {
    warm_flows: WARM,
    counted_flows: COUNTED,
    rounds: ROUNDS,
    main: Object.fromEntries(kinds.map((k) => [k, figure(k, 'main')])),
    all: Object.fromEntries(kinds.map((k) => [k, figure(k, 'all')])),
  }
  log(results.figures.instructions)
}
