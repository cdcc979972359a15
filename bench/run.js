// npm run bench: the speed and memory figures of dcb, measured side by side on this machine.
// Everything runs on 127.0.0.1; every load is bounded in count and time.
import autocannon from 'autocannon'
import { spawn, execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(ROOT, 'bin', 'dcb.js')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const MILLION = Number(process.env.BENCH_REQUESTS ?? 1_000_000)
const tmp = mkdtempSync(join(os.tmpdir(), 'dcb-bench-'))
const results = { machine: machine(), date: new Date().toISOString(), figures: {} }
const children = new Set()

function machine() {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
  }
}

function log(...a) {
  console.error('[bench]', ...a)
}

/** Starts a server process and resolves with its URL once it prints "listening on" (`exe`: the single executable instead of node). */
function start(args, script = BIN, exe = undefined) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const [command, argv] = exe ? [exe, args] : [process.execPath, [script, ...args]]
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
    children.add(child)
    let out = ''
    const onData = (d) => {
      out += d
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) {
        child.stdout.off('data', onData)
        resolve({ child, url: m[1], readyMs: performance.now() - t0, stop: () => stop(child) })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (d) => (out += d))
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)))
  })
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.removeAllListeners('exit')
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref()
    children.delete(child)
  })
}

const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
function call(url, path, body, method = 'POST') {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const req = http.request(
      url + path,
      {
        method,
        agent,
        headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json', ...(data ? { 'content-length': Buffer.byteLength(data) } : {}) },
      },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve(JSON.parse(text)))
      },
    )
    req.on('error', reject)
    req.end(data)
  })
}

async function subscribe(url, msisdn) {
  const init = await call(url, '/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
  const otp = await call(url, `/_sandbox/otp?msisdn=${msisdn}`, undefined, 'GET')
  const v = await call(url, '/subscriptions/verify', { verif_request_id: init.payload.verif_request_id, otp: otp.otp })
  if (v.status !== 'SUCCESS') throw new Error(`flow failed: ${JSON.stringify(v)}`)
  return v.payload.subscription_id
}

function cannon(opts) {
  if (opts.amount) {
    const { duration: _drop, ...rest } = opts
    opts = rest
  }
  return new Promise((resolve, reject) => {
    autocannon(
      {
        connections: 50,
        ...(opts.amount ? {} : { duration: SECONDS }),
        headers: { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
        method: 'POST',
        ...opts,
      },
      (err, r) => (err ? reject(err) : resolve(r)),
    )
  })
}

/** Distinct valid MSISDNs of the my OTP carrier (12 digits) ending 000-099 (the always-succeeds range). */
const msisdnOf = (i) => {
  if (i >= 1e7) throw new Error('msisdnOf: at most ten million distinct numbers')
  return `6012${String(Math.floor(i / 100)).padStart(5, '0')}0${String(i % 100).padStart(2, '0')}`
}

const cpuTicks = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return Number(f[11]) + Number(f[12])
}

/**
 * Status throughput against bare node:http, in paired rounds: each round runs bare, dcb and (with
 * BENCH_BASE, another built checkout of dcb: "before") the base one after another, in an order that
 * alternates, and a round's ratios are taken against that round's bare run. A first round warms every
 * server up (JIT) and is not counted.
 */
async function statusThroughput() {
  const ROUNDS = Number(process.env.BENCH_STATUS_ROUNDS ?? 7)
  const BASE = process.env.BENCH_BASE
  log(`Status throughput: dcb${BASE ? ` and the base at ${BASE}` : ''} vs bare node:http, ${ROUNDS} alternating rounds after a warm-up (paired ratios, median)`)
  const bare = await start([], join(ROOT, 'bench', 'bare-server.js'))
  const servers = [
    ['bare', bare, 'x'],
    ['dcb', await start(['serve', '--port', '0', '--data', join(tmp, 'status.json')])],
  ]
  if (BASE) servers.push(['base', await start(['serve', '--port', '0', '--data', join(tmp, 'status-base.json')], join(BASE, 'bin', 'dcb.js'))])
  for (const entry of servers) if (!entry[2]) entry[2] = await subscribe(entry[1].url, '60123456001')
  const runs = Object.fromEntries(servers.map(([name]) => [name, []]))
  const cpu = Object.fromEntries(servers.map(([name]) => [name, []]))
  const tick = 1e6 / 100 // µs per clock tick (USER_HZ 100)
  for (let round = 0; round <= ROUNDS; round++) {
    const order = round % 2 ? [...servers].reverse() : servers
    for (const [name, s, id] of order) {
      const t0 = cpuTicks(s.child.pid)
      const r = await cannon({
        url: `${s.url}/subscriptions/status`,
        body: JSON.stringify({ subscription_id: id }),
        duration: Math.max(2, Math.round(SECONDS / 2)),
      })
      if (r.non2xx || r.errors) throw new Error(`${name} status run had ${r.non2xx} non-2xx and ${r.errors} errors`)
      if (round === 0) continue // the warm-up
      runs[name].push(r)
      cpu[name].push(((cpuTicks(s.child.pid) - t0) * tick) / r.requests.total)
    }
  }
  for (const [, s] of servers) await s.stop()
  const ratiosOf = (name) => runs[name].map((r, i) => Math.round((r.requests.average / runs.bare[i].requests.average) * 100) / 100)
  const mid = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
  const ratios = ratiosOf('dcb')
  results.figures.status = {
    dcb_req_s: median(runs.dcb.map((r) => r.requests.average)),
    dcb_p50_ms: median(runs.dcb.map((r) => r.latency.p50)),
    dcb_p99_ms: median(runs.dcb.map((r) => r.latency.p99)),
    bare_req_s: median(runs.bare.map((r) => r.requests.average)),
    bare_p99_ms: median(runs.bare.map((r) => r.latency.p99)),
    ratio: mid(ratios),
    rounds: ratios,
    dcb_cpu_us: median(cpu.dcb),
    bare_cpu_us: median(cpu.bare),
    load_average: os.loadavg()[0],
  }
  if (BASE) {
    const before = ratiosOf('base')
    results.figures.status.base = { ratio: mid(before), rounds: before, req_s: median(runs.base.map((r) => r.requests.average)), cpu_us: median(cpu.base) }
    // After / before within each round: the machine's drift between rounds cancels out.
    results.figures.status.after_over_before = mid(ratios.map((r, i) => Math.round((r / before[i]) * 100) / 100))
  }
  log(results.figures.status)
}

/** Opens the console's live stream as a browser would and keeps reading it; answers how to close it. */
function openConsoleStream(url, onBytes) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/_sandbox/events`, { agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`event stream answered ${res.statusCode}`))
      res.on('data', (d) => onBytes(d.length))
      res.on('error', () => {})
      resolve(() => req.destroy())
    })
    req.on('error', reject)
  })
}

async function consoleOpen() {
  const ROUNDS = 8
  log(`Status throughput with one console open (an SSE client on /_sandbox/events) vs none, ${ROUNDS} alternating rounds (paired ratios, median)`)
  const dcb = await start(['serve', '--port', '0', '--data', join(tmp, 'console.json')])
  const id = await subscribe(dcb.url, '60123456001')
  const body = JSON.stringify({ subscription_id: id })
  const runs = { without: [], with: [] }
  // Server CPU per call too: unlike throughput, it barely moves when other processes load the machine.
  const cpu = { without: [], with: [] }
  const tick = 1e6 / 100 // µs per clock tick (USER_HZ 100)
  let streamed = 0
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so a drift of the machine does not favour one side.
    const order = round % 2 ? ['with', 'without'] : ['without', 'with']
    for (const mode of order) {
      const close = mode === 'with' ? await openConsoleStream(dcb.url, (n) => (streamed += n)) : null
      const t0 = cpuTicks(dcb.child.pid)
      const r = await cannon({ url: `${dcb.url}/subscriptions/status`, body, duration: Math.max(2, Math.round(SECONDS / 2)) })
      close?.()
      if (r.non2xx || r.errors) throw new Error(`console ${mode} run had ${r.non2xx} non-2xx and ${r.errors} errors`)
      runs[mode].push(r.requests.average)
      cpu[mode].push(((cpuTicks(dcb.child.pid) - t0) * tick) / r.requests.total)
    }
  }
  await dcb.stop()
  if (!streamed) throw new Error('the console stream sent nothing')
  const ratios = runs.with.map((w, i) => Math.round((w / runs.without[i]) * 1000) / 1000)
  results.figures.console = {
    with_req_s: median(runs.with),
    without_req_s: median(runs.without),
    ratio: [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)],
    rounds: ratios,
    streamed_kib: Math.round(streamed / 1024),
    with_cpu_us: Math.round(median(cpu.with.map((x) => x * 10))) / 10,
    without_cpu_us: Math.round(median(cpu.without.map((x) => x * 10))) / 10,
    load_average: os.loadavg()[0],
  }
  log(results.figures.console)
}

/**
 * Full OTP flows (Init, read the OTP, Verify) from 16 clients: the file store (each answer durable) and
 * the in-memory store in paired rounds after a warm-up, with server CPU per flow; with BENCH_BASE the
 * base checkout's file store in the same rounds (before / after).
 */
async function otpFlows() {
  const BASE = process.env.BENCH_BASE
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
  log(`full OTP flows per second: file store / in memory${BASE ? ' / the base file store' : ''}, ${ROUNDS} alternating rounds after a warm-up`)
  const servers = [
    ['file', await start(['serve', '--port', '0', '--data', join(tmp, 'flows.json')])],
    ['memory', await start(['serve', '--port', '0', '--in-memory'])],
  ]
  if (BASE) servers.push(['base', await start(['serve', '--port', '0', '--data', join(tmp, 'flows-base.json')], join(BASE, 'bin', 'dcb.js'))])
  // The floor under dcb's CPU per flow: node:http alone, then with the writes made durable as dcb makes them.
  const floor = join(ROOT, 'bench', 'floor-server.js')
  servers.push(['floor', await start([], floor)], ['floor_durable', await start(['--durable', join(tmp, 'floor.journal')], floor)])
  const seconds = Math.max(2, Math.round(SECONDS / 2))
  const tick = 1e6 / 100 // µs per clock tick (USER_HZ 100)
  let n = 0
  const runs = Object.fromEntries(servers.map(([k]) => [k, []]))
  const lat = []
  for (let round = 0; round <= ROUNDS; round++)
    for (const [kind, s] of round % 2 ? [...servers].reverse() : servers) {
      let done = 0
      const t0 = cpuTicks(s.child.pid)
      const until = performance.now() + seconds * 1000
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (performance.now() < until) {
            const t = performance.now()
            await subscribe(s.url, msisdnOf(n++))
            if (kind === 'file' && round) lat.push(performance.now() - t)
            done++
          }
        }),
      )
      if (round) runs[kind].push({ flows_s: done / seconds, cpu_us: ((cpuTicks(s.child.pid) - t0) * tick) / done })
    }
  for (const [, s] of servers) await s.stop()
  lat.sort((a, b) => a - b)
  const ratio = (a, b) => runs[a].map((r, i) => Math.round((r.flows_s / runs[b][i].flows_s) * 100) / 100)
  const mid = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
  results.figures.otp_flows = {
    flows_s: median(runs.file.map((r) => r.flows_s)),
    flow_p99_ms: Math.round(lat[Math.floor(lat.length * 0.99)] * 10) / 10,
    workers: 16,
    memory_flows_s: median(runs.memory.map((r) => r.flows_s)),
    file_over_memory: mid(ratio('file', 'memory')),
    rounds: ratio('file', 'memory'),
    cpu_us: median(runs.file.map((r) => r.cpu_us)),
    floor: {
      flows_s: median(runs.floor.map((r) => r.flows_s)),
      durable_flows_s: median(runs.floor_durable.map((r) => r.flows_s)),
      durable_over_bare: mid(ratio('floor_durable', 'floor')),
      cpu_us: median(runs.floor.map((r) => r.cpu_us)),
      durable_cpu_us: median(runs.floor_durable.map((r) => r.cpu_us)),
    },
    ...(BASE
      ? {
          base: {
            flows_s: median(runs.base.map((r) => r.flows_s)),
            cpu_us: median(runs.base.map((r) => r.cpu_us)),
            after_over_before: mid(ratio('file', 'base')),
          },
        }
      : {}),
  }
  log(results.figures.otp_flows)
}

async function writeLatency() {
  results.figures.write_p99 = {}
  for (const n of [1_000, 10_000, 100_000]) {
    log(`write latency with ${n} stored subscriptions`)
    const data = join(tmp, `w${n}.json`)
    execFileSync(process.execPath, [BIN, 'seed', '--subscriptions', String(n), '--data', data], { stdio: 'ignore' })
    const dcb = await start(['serve', '--port', '0', '--data', data])
    let i = 0
    const r = await cannon({
      url: `${dcb.url}/subscriptions/init`,
      connections: 10,
      requests: [
        { setupRequest: (req) => ({ ...req, body: JSON.stringify({ msisdn: msisdnOf(i++ % 50000), service_code: 'GAMECLUB', country_code: 'my' }) }) },
      ],
    })
    await dcb.stop()
    results.figures.write_p99[n] = { p99_ms: r.latency.p99, p50_ms: r.latency.p50, req_s: Math.round(r.requests.average), non2xx: r.non2xx }
    log(n, results.figures.write_p99[n])
  }
}

async function sessionWrites() {
  const N = 1000
  const ROUNDS = 3
  log(`write latency with ${N} live sessions vs the default session alone (Init), ${ROUNDS} alternating rounds on one server`)
  const data = join(tmp, 'sessions.json')
  const dcb = await start(['serve', '--port', '0', '--data', data])
  for (let k = 0; k < N; k++) {
    await new Promise((resolve, reject) =>
      http.get(`${dcb.url}/_sandbox/clock`, { agent, headers: { 'x-dcb-session': `s${k}` } }, (res) => res.resume().on('end', resolve)).on('error', reject),
    )
  }
  const tick = 1e6 / 100 // µs per clock tick (USER_HZ 100)
  const runs = { default: [], sessions: [] }
  let i = 0
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of ['default', 'sessions']) {
      const t0 = cpuTicks(dcb.child.pid)
      const r = await cannon({
        url: `${dcb.url}/subscriptions/init`,
        connections: 10,
        duration: Math.max(3, Math.round(SECONDS / 2)),
        requests: [
          {
            setupRequest: (req) => {
              const k = i++
              // Each request in the next session (a new MSISDN once every session had one), or all in the default one.
              const inSessions = name === 'sessions'
              const headers = inSessions ? { ...req.headers, 'x-dcb-session': `s${k % N}` } : req.headers
              const msisdn = msisdnOf(inSessions ? Math.floor(k / N) % 50000 : k % 50000)
              return { ...req, headers, body: JSON.stringify({ msisdn, service_code: 'GAMECLUB', country_code: 'my' }) }
            },
          },
        ],
      })
      if (r.non2xx || r.errors) log(`warning: ${name} round had ${r.non2xx} non-2xx and ${r.errors} errors`)
      runs[name].push({ p99: r.latency.p99, p50: r.latency.p50, req_s: r.requests.average, cpu_us: ((cpuTicks(dcb.child.pid) - t0) * tick) / r.requests.total })
    }
  }
  await dcb.stop()
  const fig = (rs) => ({
    p99_ms: median(rs.map((r) => r.p99)),
    p50_ms: median(rs.map((r) => r.p50)),
    req_s: Math.round(median(rs.map((r) => r.req_s))),
    cpu_us: Math.round(median(rs.map((r) => r.cpu_us))),
  })
  results.figures.session_writes = {
    sessions: N,
    ...fig(runs.sessions),
    default: fig(runs.default),
    rounds: runs.sessions.map((r, k) => `${r.p99}/${runs.default[k].p99}`),
  }
  log(results.figures.session_writes)
}

async function shared() {
  const { sharedFigures } = await import('./shared.js')
  const seconds = Math.max(2, Math.round(SECONDS / 2))
  results.figures.shared = await sharedFigures({ start, cpuTicks, tmp, seconds, msisdnOf, log })
  log(results.figures.shared)
}

async function library() {
  log('dcb-sandbox in-process: createSandbox, reset, OTP flows via sandbox.fetch and msw, memory per session')
  const { libraryFigures } = await import('./library.js')
  results.figures.library = await libraryFigures(ROOT, SECONDS, log)
}

/**
 * Start-up side by side: time to ready of a bare node:http server, of `dcb serve` and (BENCH_BASE) of
 * the base checkout's, started in turns (the order alternating), 9 times each; client commands' wall
 * times the same way.
 */
async function startup() {
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
async function initsRss() {
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
async function binary() {
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

function timed(n, fn) {
  const out = []
  for (let j = 0; j < n; j++) {
    const t = performance.now()
    fn()
    out.push(performance.now() - t)
  }
  return out
}

async function advanceYear() {
  results.figures.advance = []
  for (const n of [2_000, 5_000, 10_000]) {
    log(`advancing the clock a year over ${n} monthly subscriptions`)
    // Started over the past month, as real subscriptions are: renewals fall at distinct times.
    const seeded = `advance-${n}.json`
    execFileSync(process.execPath, [BIN, 'seed', '--subscriptions', String(n), '--spread', 'P1M', '--data', join(tmp, seeded)], { stdio: 'ignore' })
    const rounds = []
    for (let k = 0; k < 5; k++) {
      // Each round on a fresh copy of the seeded data (snapshot and journal), on a fresh server.
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

async function memoryOverMillion() {
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

function median(a) {
  const s = [...a].sort((x, y) => x - y)
  return Math.round(s[Math.floor(s.length / 2)])
}

/** The stages measured after the full run, with their dates (a partial run: `node bench/run.js STAGE`). */
function laterStages() {
  const later = Object.entries(results.stages ?? {}).map(([name, date]) => `\`${name}\` ${date.slice(0, 10)}`)
  return later.length ? ` Measured again since: ${later.join(', ')}.` : ''
}

function markdown() {
  const f = results.figures
  const m = results.machine
  const rows = [
    `Measured ${results.date.slice(0, 10)} on ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, Node ${m.node} (${m.os}); ${SECONDS} s per load, all on 127.0.0.1.${laterStages()}`,
    '',
    '| figure | value | goal |',
    '|---|---|---|',
  ]
  if (f.status) {
    rows.push(
      `| Status throughput, dcb / bare node:http (median of ${f.status.rounds.length} paired rounds after a warm-up: ${f.status.rounds.join(', ')}) | ${f.status.dcb_req_s} / ${f.status.bare_req_s} req/s = **${f.status.ratio}** (p99 ${f.status.dcb_p99_ms} / ${f.status.bare_p99_ms} ms) | ratio >= 0.8 |`,
    )
    if (f.status.base)
      rows.push(
        `| Status throughput / bare node:http, before (${f.status.base.rounds.join(', ')}) and after, in the same rounds; after / before per round, median | before **${f.status.base.ratio}**, after **${f.status.ratio}**: after / before = **${f.status.after_over_before}** (server CPU ${f.status.base.cpu_us} -> ${f.status.dcb_cpu_us} µs per call) | up (> 1) |`,
      )
    rows.push(
      `| server CPU per Status call, dcb / bare | ${f.status.dcb_cpu_us} / ${f.status.bare_cpu_us} µs = ${Math.round((f.status.bare_cpu_us / f.status.dcb_cpu_us) * 100) / 100} | |`,
    )
  }
  if (f.console)
    rows.push(
      `| Status throughput with one console open (an SSE client reading /_sandbox/events) / with none (median of ${f.console.rounds.length} paired rounds: ${f.console.rounds.join(', ')}) | ${f.console.with_req_s} / ${f.console.without_req_s} req/s = **${f.console.ratio}** (${f.console.streamed_kib} KiB streamed) | within 5% (>= 0.95) |`,
    )
  if (f.console?.with_cpu_us)
    rows.push(
      `| server CPU per Status call, console open / none (load average ${f.console.load_average.toFixed(1)} during the run) | ${f.console.with_cpu_us} / ${f.console.without_cpu_us} µs | |`,
    )
  if (f.otp_flows) {
    const o = f.otp_flows
    rows.push(`| full OTP flows (init, read OTP, verify), 16 clients, each answer durable | ${o.flows_s} flows/s (p99 ${o.flow_p99_ms} ms) | |`)
    if (o.file_over_memory)
      rows.push(
        `| OTP flows, file store / in-memory store (median of ${o.rounds.length} paired rounds: ${o.rounds.join(', ')}) | ${o.flows_s} / ${o.memory_flows_s} flows/s = **${o.file_over_memory}** | >= 0.75 |`,
      )
    if (o.base)
      rows.push(
        `| server CPU per OTP flow, file store, before / after (same rounds; flows/s after / before ${o.base.after_over_before}) | ${o.base.cpu_us} / ${o.cpu_us} µs = **${Math.round((o.cpu_us / o.base.cpu_us) * 100) / 100}** | <= 0.67 (a third less) |`,
      )
    if (o.floor)
      rows.push(
        `| the floor under dcb, same rounds: bare node:http answering the three calls with canned envelopes / the same with each Init and Verify made durable as dcb does (O_DSYNC, zeroed ahead, group commit; bench/floor-server.js): flows/s, and server CPU per flow beside dcb's with the file store | ${o.floor.flows_s} / ${o.floor.durable_flows_s} flows/s = ${o.floor.durable_over_bare}; ${o.floor.cpu_us} / ${o.floor.durable_cpu_us} µs (dcb ${o.cpu_us} µs${o.base ? `, the goal ${Math.round(o.base.cpu_us * 0.67)} µs` : ''}) | |`,
      )
  }
  if (f.shared) {
    const { file, one, three } = f.shared
    const by = `median of ${f.shared.rounds} paired rounds after a warm-up`
    rows.push(
      `| OTP flows (init, read OTP, verify), ${f.shared.flow_clients} clients: shared store (PostgreSQL ${f.shared.postgres}, one database) through 1 replica / through 3 replicas (each call to the next replica) / file store (${by}; per round 1 replica / file ${one.flow_rounds.join(', ')}, 3 replicas / file ${three.flow_rounds.join(', ')}) | ${one.flows_s} / ${three.flows_s} / ${file.flows_s} flows/s = **${one.flows_over_file}** / **${three.flows_over_file}** of the file store's (dcb CPU per flow, all replicas: ${one.flow_cpu_us} / ${three.flow_cpu_us} / ${file.flow_cpu_us} µs) | beside the file store's |`,
      `| Status, ${f.shared.status_clients} clients: shared store through 1 replica / through 3 replicas / file store (${by}; load average ${f.shared.load_average.toFixed(1)} at the end) | p50 ${one.status_p50_ms} / ${three.status_p50_ms} / ${file.status_p50_ms} ms, p99 **${one.status_p99_ms}** / **${three.status_p99_ms}** / ${file.status_p99_ms} ms; ${one.status_req_s} / ${three.status_req_s} / ${file.status_req_s} req/s (dcb CPU per call ${one.status_cpu_us} / ${three.status_cpu_us} / ${file.status_cpu_us} µs) | beside the file store's |`,
    )
  }
  if (f.write_p99)
    for (const [n, w] of Object.entries(f.write_p99))
      rows.push(
        `| write (Init) p99 with ${Number(n).toLocaleString('en')} stored subscriptions | ${w.p99_ms} ms (p50 ${w.p50_ms} ms, ${w.req_s} req/s) | flat, < 20 ms |`,
      )
  if (f.session_writes)
    rows.push(
      f.session_writes.default
        ? `| write (Init) p99 with ${f.session_writes.sessions.toLocaleString('en')} live sessions (each request in one of them, file store) / in the default session alone, same server, median of ${f.session_writes.rounds.length} alternating rounds (${f.session_writes.rounds.join(', ')} ms) | ${f.session_writes.p99_ms} / ${f.session_writes.default.p99_ms} ms (p50 ${f.session_writes.p50_ms} / ${f.session_writes.default.p50_ms} ms; ${f.session_writes.req_s} / ${f.session_writes.default.req_s} req/s; server CPU ${f.session_writes.cpu_us} / ${f.session_writes.default.cpu_us} µs per write) | flat (as the default session's) |`
        : `| write (Init) p99 with ${f.session_writes.sessions.toLocaleString('en')} live sessions (each request in one of them, file store) | ${f.session_writes.p99_ms} ms (p50 ${f.session_writes.p50_ms} ms, ${f.session_writes.req_s} req/s) | flat |`,
    )
  if (f.library) {
    const l = f.library
    rows.push(`| createSandbox() median (default world) | ${l.create_ms} ms | < 10 ms |`)
    rows.push(`| reset() median (3 subscriptions) | ${l.reset_ms} ms | < 1 ms |`)
    rows.push(
      l.fetch_cpu_us
        ? `| OTP flows (Init, sandbox.otp, Verify) in-process via sandbox.fetch, median of 3 alternating rounds | ${l.fetch_flows_s} flows/s (${l.fetch_cpu_us} µs CPU per flow: ${Math.round(1e6 / l.fetch_cpu_us)} flows per CPU-second) | >= 5,000/s |`
        : `| OTP flows (Init, sandbox.otp, Verify) in-process, via sandbox.fetch / via msw + global fetch | ${l.fetch_flows_s} / ${l.msw_flows_s} flows/s | >= 5,000/s |`,
    )
    if (l.msw_ceiling_flows_s)
      rows.push(
        `| OTP flows via msw + global fetch (sandboxHandlers) / msw's ceiling on this machine (the same 2 requests per flow answered by a handler returning a constant Response) | ${l.msw_flows_s} / ${l.msw_ceiling_flows_s} flows/s (${l.msw_cpu_us} / ${l.msw_ceiling_cpu_us} µs CPU per flow) | >= 5,000/s (above msw's ceiling here) |`,
      )
    rows.push(`| memory per empty session (1,000 sessions, heap after GC) | ${l.session_kb} KB | < 50 KB |`)
  }
  if (f.inits_rss) {
    rows.push(
      `| RSS 2 s after ${f.inits_rss.inits.toLocaleString('en')} Inits one after another (half to 200 handsets, half to new numbers), default caps${f.inits_rss.base_rss_mib ? `; before: ${f.inits_rss.base_rss_mib} MiB` : ''} | ${f.inits_rss.rss_mib} MiB | < 180 MiB |`,
    )
    const h = f.inits_rss.heap
    const b = f.inits_rss.base_heap
    const bytes = (x) => `${x.verification_bytes} / ${x.sms_bytes} / ${x.subscription_bytes} B (an OTP Init: ${x.otp_init_bytes} B)`
    if (h)
      rows.push(
        `| heap per retained verification / SMS / subscription (${h.records.toLocaleString('en')} of each kind in a fresh engine, changes serialized as the file store's journal does; heap growth after forced GC)${b ? `; before: ${bytes(b)}` : ''} | ${bytes(h)} | down, for the RSS goal above |`,
      )
    if (h?.at_caps_init_bytes)
      rows.push(
        `| heap per retained Init at the default caps under churn (${h.churn_inits.toLocaleString('en')} Inits in-process as the RSS load, heap after forced GC / the 50,000 verification requests kept, each with its SMS)${b?.at_caps_init_bytes ? `; before: ${b.at_caps_init_bytes} B` : ''} | ${h.at_caps_init_bytes} B | down, for the RSS goal above |`,
      )
  }
  if (f.serve)
    rows.push(
      f.serve.bare_ready_ms
        ? `| dcb serve: time to ready / a bare node:http server's, started in turns (median of 9 each)${f.serve.base_ready_ms ? `; before: ${f.serve.base_ready_ms} ms` : ''}; idle RSS | ${f.serve.ready_ms} / ${f.serve.bare_ready_ms} ms = **${f.serve.ratio}x**; ${f.serve.idle_rss_mib} MiB | <= 2x |`
        : `| dcb serve: time to ready / idle RSS | ${f.serve.ready_ms} ms / ${f.serve.idle_rss_mib} MiB | |`,
    )
  if (f.cli)
    rows.push(
      `| dcb status / dcb --help: process wall time${f.cli.base ? ` (before: ${f.cli.base.status_wall_ms} / ${f.cli.base.help_wall_ms} ms)` : ''} | ${f.cli.status_wall_ms} ms / ${f.cli.help_wall_ms} ms | no slower than before |`,
    )
  if (f.binary)
    rows.push(
      `| single executable (dist/dcb-linux-x64, ${f.binary.size_mib} MiB): serve time to ready / idle RSS; dcb status / dcb --help wall time | ${f.binary.ready_ms} ms / ${f.binary.idle_rss_mib} MiB; ${f.binary.status_wall_ms} ms / ${f.binary.help_wall_ms} ms | |`,
    )
  if (f.advance)
    for (const a of [].concat(f.advance))
      rows.push(
        `| clock/advance P1Y over ${a.subscriptions.toLocaleString('en')} monthly subscriptions started over a month (${a.events.toLocaleString('en')} renewals, each charged, recorded, with its SMS notice and its event in the answer; one durable write; over HTTP, median of 5 fresh servers) | ${a.ms} ms with the ${a.answer_mb ?? '?'} MB answer received and parsed (server ${a.server_ms ?? '?'} ms) | well under a second |`,
      )
  if (f.memory) {
    const q = (a) => [0, 1, 2, 3].map((k) => a.slice(Math.floor((k * a.length) / 4), Math.floor(((k + 1) * a.length) / 4)))
    const rq = q(f.memory.rss_samples_mib)
    rows.push(
      `| RSS over ${f.memory.requests.toLocaleString('en')} requests (half Init, every 2 s; a sawtooth between snapshot compactions) | max per quarter ${rq.map((x) => Math.max(...x)).join(' / ')} MiB; min per quarter ${rq.map((x) => Math.min(...x)).join(' / ')} MiB (${f.memory.seconds} s) | flat |`,
    )
  }
  return rows.join('\n')
}

const PAGE = join(ROOT, 'docs', 'reference', 'benchmarks.md')
const MARKED = /(<!-- results:start -->\n)[\s\S]*?(\n<!-- results:end -->)/

/** The benchmarks page with the figures of `results` in its table (between its markers). */
function pageWithResults() {
  const text = readFileSync(PAGE, 'utf8')
  if (!MARKED.test(text)) throw new Error(`${PAGE} has no <!-- results:start --> ... <!-- results:end --> block`)
  return text.replace(MARKED, (_, start, end) => start + markdown() + end)
}

/** Writes the figures into the benchmarks page of the docs, the one place they are published. */
function writeResults() {
  writeFileSync(PAGE, pageWithResults())
  console.log(markdown())
}

const only = process.argv.slice(2)
if (only[0] === 'report') {
  // Rewrites the page's table from results.json (no measuring); `report --check` only says whether it is in step.
  Object.assign(results, JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')))
  rmSync(tmp, { recursive: true, force: true })
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
const stages = {
  status: statusThroughput,
  console: consoleOpen,
  flows: otpFlows,
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
try {
  for (const name of only) if (!(name in stages)) throw new Error(`unknown stage "${name}" (stages: ${Object.keys(stages).join(', ')})`)
  if (only.length) {
    // A partial run keeps the other figures of the last full run.
    try {
      const last = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8'))
      results.figures = { ...last.figures }
      // The date stays the full run's; the stages measured since say when they were.
      results.stages = { ...last.stages }
      for (const name of only) results.stages[name] = results.date
      results.date = last.date
    } catch {}
  }
  for (const [name, fn] of Object.entries(stages)) if (!only.length || only.includes(name)) await fn()
  writeFileSync(join(ROOT, 'bench', 'results.json'), JSON.stringify(results, null, 2) + '\n')
  writeResults()
} finally {
  for (const c of children) c.kill('SIGKILL')
  agent.destroy()
  rmSync(tmp, { recursive: true, force: true })
}
