// The stages of npm run bench that time processes and read their memory (library, startup, binary,
// advance, memory, inits): each puts its figures in `results.figures`.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { BIN, MILLION, ROOT, SECONDS, call, cannon, log, median, msisdnOf, results, rss, start, subscribe, tmp } from './common.js'

/** dcb-sandbox in-process, the built dist: bench/library.js. */
export async function library() {
  log('dcb-sandbox in-process: createSandbox, reset, OTP flows via sandbox.fetch and msw, memory per session')
  const { libraryFigures } = await import('./library.js')
  results.figures.library = await libraryFigures(ROOT, SECONDS, log)
}

/**
 * Start-up side by side: time to ready of a bare node:http server, of `dcb serve` and (BENCH_BASE) of
 * the base checkout's, started in turns (the order alternating), 9 times each; client commands' wall
 * times the same way.
 */
export async function startup() {
  const BASE = process.env.BENCH_BASE
  log(`serve: time to ready beside bare node:http${BASE ? ' and the base' : ''}, idle RSS; dcb status / --help: process wall time`)
  const kinds = [
    ['bare', [], join(ROOT, 'bench', 'bare-server.js')],
    ['dcb', ['serve', '--port', '0', '--in-memory'], BIN],
  ]
  if (BASE) kinds.push(['base', ['serve', '--port', '0', '--in-memory'], join(BASE, 'bin', 'dcb.js')])
  const ready = Object.fromEntries(kinds.map(([k]) => [k, []]))
  let idle = 0
  for (let k = 0; k < 9; k++) {
    for (const [kind, args, script] of k % 2 ? [...kinds].reverse() : kinds) {
      const s = await start(args, script)
      ready[kind].push(s.readyMs)
      if (kind === 'dcb' && k === 8) {
        await new Promise((r) => setTimeout(r, 1500)) // wall-clock: idle RSS once start-up's garbage is collected
        idle = rss(s.child.pid)
      }
      await s.stop()
    }
  }
  const s = await start(['serve', '--port', '0', '--in-memory'])
  const id = await subscribe(s.url, '60123456001')
  const clients = Object.fromEntries(['dcb', ...(BASE ? ['base'] : [])].map((k) => [k, { status: [], help: [] }]))
  for (let j = 0; j < 10; j++)
    for (const [kind, bin] of [['dcb', BIN], ...(BASE ? [['base', join(BASE, 'bin', 'dcb.js')]] : [])]) {
      let t = performance.now()
      execFileSync(process.execPath, [bin, 'status', id, '--base-url', s.url], { stdio: 'ignore' })
      clients[kind].status.push(performance.now() - t)
      t = performance.now()
      execFileSync(process.execPath, [bin, '--help'], { stdio: 'ignore' })
      clients[kind].help.push(performance.now() - t)
    }
  await s.stop()
  results.figures.cli = { status_wall_ms: median(clients.dcb.status), help_wall_ms: median(clients.dcb.help) }
  if (BASE) results.figures.cli.base = { status_wall_ms: median(clients.base.status), help_wall_ms: median(clients.base.help) }
  results.figures.serve = {
    ready_ms: median(ready.dcb),
    bare_ready_ms: median(ready.bare),
    ratio: Math.round((median(ready.dcb) / median(ready.bare)) * 100) / 100,
    idle_rss_mib: Math.round(idle),
    ...(BASE ? { base_ready_ms: median(ready.base) } : {}),
  }
  log(results.figures.serve, results.figures.cli)
}

/**
 * Memory per record: RSS 2 s after 200,000 Inits sent one after another at the default caps (half to
 * 200 handsets, half to new numbers), file store; with BENCH_BASE the base checkout's too, first.
 */
export async function initsRss() {
  const BASE = process.env.BENCH_BASE
  const N = Number(process.env.BENCH_INITS ?? 200_000)
  log(`RSS 2 s after ${N.toLocaleString('en')} Inits one after another (half to 200 handsets, half to new numbers)${BASE ? ', the base and then dcb' : ''}`)
  const run = async (script, file) => {
    const s = await start(['serve', '--port', '0', '--data', join(tmp, file)], script)
    for (let i = 0; i < N; i++) {
      const r = await call(s.url, '/subscriptions/init', { msisdn: msisdnOf(i % 2 ? i % 200 : 1000 + i), service_code: 'STREAMPLUS', country_code: 'my' })
      if (r.status !== 'SUCCESS') throw new Error(`Init ${i} answered ${JSON.stringify(r)}`)
    }
    await new Promise((r) => setTimeout(r, 2000)) // wall-clock: the figure is the RSS 2 s after the last Init
    const mib = Math.round(rss(s.child.pid))
    await s.stop()
    return mib
  }
  // One after the other: run side by side, the same build read ~50 MiB apart depending on its slot.
  const before = BASE ? await run(join(BASE, 'bin', 'dcb.js'), 'inits-base.json') : null
  const after = await run(BIN, 'inits.json')
  results.figures.inits_rss = {
    inits: N,
    rss_mib: after,
    ...(before !== null ? { base_rss_mib: before } : {}),
    heap: heapPerRecord(ROOT),
    ...(BASE ? { base_heap: heapPerRecord(BASE) } : {}),
  }
  log(results.figures.inits_rss)
}

/** Heap bytes per retained verification, SMS and subscription of a checkout's engine (bench/heap-per-record.js, forced GC). */
function heapPerRecord(root) {
  const out = execFileSync(process.execPath, ['--expose-gc', join(ROOT, 'bench', 'heap-per-record.js'), root], { encoding: 'utf8' })
  return JSON.parse(out.trim().split('\n').at(-1))
}

/** The single executable (npm run build:binary): size, serve time to ready and idle RSS, client wall times. */
export async function binary() {
  const exe = join(ROOT, 'dist', 'dcb-linux-x64')
  if (!existsSync(exe)) throw new Error(`${exe} is missing: run npm run build:binary first`)
  log('the single executable: size, serve time to ready, idle RSS, dcb status and --help wall time')
  const ready = []
  let idle = 0
  let walls = []
  let help = []
  for (let k = 0; k < 5; k++) {
    const s = await start(['serve', '--port', '0', '--in-memory'], undefined, exe)
    ready.push(s.readyMs)
    if (k === 4) {
      await new Promise((r) => setTimeout(r, 1500))
      idle = rss(s.child.pid)
      const id = await subscribe(s.url, '60123456001')
      walls = timed(10, () => execFileSync(exe, ['status', id, '--base-url', s.url], { stdio: 'ignore' }))
      help = timed(5, () => execFileSync(exe, ['--help'], { stdio: 'ignore' }))
    }
    await s.stop()
  }
  results.figures.binary = {
    size_mib: Math.round((statSync(exe).size / 2 ** 20) * 10) / 10,
    ready_ms: median(ready),
    idle_rss_mib: Math.round(idle),
    status_wall_ms: median(walls),
    help_wall_ms: median(help),
  }
  log(results.figures.binary)
}

/** Wall times (ms) of `n` runs of `fn`, one after another. */
function timed(n, fn) {
  const out = []
  for (let j = 0; j < n; j++) {
    const t = performance.now()
    fn()
    out.push(performance.now() - t)
  }
  return out
}

/** clock/advance P1Y over 2,000, 5,000 and 10,000 monthly subscriptions, on 5 fresh servers each. */
export async function advanceYear() {
  results.figures.advance = []
  for (const n of [2_000, 5_000, 10_000]) {
    log(`advancing the clock a year over ${n} monthly subscriptions`)
    // Started over the past month, as real subscriptions are: renewals fall at distinct times.
    const seeded = `advance-${n}.json`
    execFileSync(process.execPath, [BIN, 'seed', '--subscriptions', String(n), '--spread', 'P1M', '--data', join(tmp, seeded)], { stdio: 'ignore' })
    const rounds = []
    for (let k = 0; k < 5; k++) {
      // Each round on a fresh copy of the seeded data (snapshot and write-ahead log), on a fresh server.
      const copy = `advance-${n}-${k}.json`
      for (const f of readdirSync(tmp).filter((f) => f.startsWith(seeded))) copyFileSync(join(tmp, f), join(tmp, copy + f.slice(seeded.length)))
      const dcb = await start(['serve', '--port', '0', '--data', join(tmp, copy)])
      const t = performance.now()
      const r = await call(dcb.url, '/_sandbox/clock/advance', { by: 'P1Y' })
      const ms = performance.now() - t
      const server = (await call(dcb.url, '/_sandbox/requests?limit=1', undefined, 'GET')).requests[0].duration_ms
      await dcb.stop()
      const renewed = r.events.filter((e) => e.type === 'renewed').length
      if (renewed !== n * 12) throw new Error(`expected ${n * 12} renewals, got ${renewed}`)
      rounds.push({ ms, server, events: r.events.length, mb: Buffer.byteLength(JSON.stringify(r)) / 1e6 })
    }
    const mid = (k) => median(rounds.map((x) => x[k]))
    results.figures.advance.push({
      subscriptions: n,
      events: rounds[0].events,
      ms: Math.round(mid('ms')),
      server_ms: Math.round(mid('server')),
      answer_mb: Math.round(mid('mb') * 10) / 10,
      rounds: rounds.map((x) => Math.round(x.ms)),
    })
    log(results.figures.advance.at(-1))
  }
}

/** RSS and heap every 2 s over BENCH_REQUESTS requests (half Init, half Status), file store; BENCH_REQUESTS=0 skips it. */
export async function memoryOverMillion() {
  if (!MILLION) return
  log(`RSS over ${MILLION} requests (init and status, file store)`)
  const dcb = await start(['serve', '--port', '0', '--data', join(tmp, 'million.json')])
  const id = await subscribe(dcb.url, '60123456001')
  const samples = []
  const heap = []
  const timer = setInterval(() => {
    samples.push(Math.round(rss(dcb.child.pid)))
    call(dcb.url, '/_sandbox/health', undefined, 'GET').then(
      (h) => heap.push(h.memory_mib.heap_used),
      () => {},
    )
  }, 2000)
  let i = 0
  const t0 = performance.now()
  const r = await cannon({
    url: `${dcb.url}/subscriptions/status`,
    amount: MILLION,
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          path: '/subscriptions/init',
          body: JSON.stringify({ msisdn: msisdnOf(i++), service_code: 'GAMECLUB', country_code: 'my' }),
        }),
      },
      { setupRequest: (req) => ({ ...req, path: '/subscriptions/status', body: JSON.stringify({ subscription_id: id }) }) },
    ],
  })
  clearInterval(timer)
  const health = await call(dcb.url, '/_sandbox/health', undefined, 'GET')
  await dcb.stop()
  // Every Init must have been a real write: the verification requests reach their cap.
  if (health.sizes.verifications < Math.min(i, 50_000)) throw new Error(`only ${health.sizes.verifications} verification requests after ${i} inits`)
  const q = Math.max(1, Math.floor(samples.length / 4))
  results.figures.memory = {
    requests: r.requests.total,
    seconds: Math.round((performance.now() - t0) / 1000),
    rss_first_quarter_mib: Math.max(...samples.slice(0, q)),
    rss_last_quarter_mib: Math.max(...samples.slice(-q)),
    rss_max_mib: Math.max(...samples),
    heap_first_quarter_mib: median(heap.slice(0, Math.max(1, Math.floor(heap.length / 4)))),
    heap_last_quarter_mib: median(heap.slice(-Math.max(1, Math.floor(heap.length / 4)))),
    rss_samples_mib: samples,
    heap_samples_mib: heap,
    non2xx: r.non2xx,
  }
  log(results.figures.memory)
}
