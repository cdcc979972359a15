// The stages of npm run bench that load dcb's HTTP API (status, console, flows, shared, writes,
// sessions): each puts its figures in `results.figures`.
import { execFileSync } from 'node:child_process'
import http from 'node:http'
import os from 'node:os'
import { join } from 'node:path'
import { BIN, ROOT, SECONDS, US_PER_TICK, agent, cannon, cpuTicks, log, median, middle, msisdnOf, results, start, subscribe, tmp } from './common.js'

/**
 * Status throughput against bare node:http, in paired rounds: each round runs bare, dcb and (with
 * BENCH_BASE, another built checkout of dcb: "before") the base one after another, in an order that
 * alternates, and a round's ratios are taken against that round's bare run. A first round warms every
 * server up (JIT) and is not counted.
 */
export async function statusThroughput() {
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
      cpu[name].push(((cpuTicks(s.child.pid) - t0) * US_PER_TICK) / r.requests.total)
    }
  }
  for (const [, s] of servers) await s.stop()
  const ratiosOf = (name) => runs[name].map((r, i) => Math.round((r.requests.average / runs.bare[i].requests.average) * 100) / 100)
  const ratios = ratiosOf('dcb')
  results.figures.status = {
    dcb_req_s: median(runs.dcb.map((r) => r.requests.average)),
    dcb_p50_ms: median(runs.dcb.map((r) => r.latency.p50)),
    dcb_p99_ms: median(runs.dcb.map((r) => r.latency.p99)),
    bare_req_s: median(runs.bare.map((r) => r.requests.average)),
    bare_p99_ms: median(runs.bare.map((r) => r.latency.p99)),
    ratio: middle(ratios),
    rounds: ratios,
    dcb_cpu_us: median(cpu.dcb),
    bare_cpu_us: median(cpu.bare),
    load_average: os.loadavg()[0],
  }
  if (BASE) {
    const before = ratiosOf('base')
    results.figures.status.base = { ratio: middle(before), rounds: before, req_s: median(runs.base.map((r) => r.requests.average)), cpu_us: median(cpu.base) }
    // After / before within each round: the machine's drift between rounds cancels out.
    results.figures.status.after_over_before = middle(ratios.map((r, i) => Math.round((r / before[i]) * 100) / 100))
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

/** Status throughput with one console open (an SSE client on /_sandbox/events) against none, in paired rounds. */
export async function consoleOpen() {
  const ROUNDS = 8
  log(`Status throughput with one console open (an SSE client on /_sandbox/events) vs none, ${ROUNDS} alternating rounds (paired ratios, median)`)
  const dcb = await start(['serve', '--port', '0', '--data', join(tmp, 'console.json')])
  const id = await subscribe(dcb.url, '60123456001')
  const body = JSON.stringify({ subscription_id: id })
  const runs = { without: [], with: [] }
  // Server CPU per call too: unlike throughput, it barely moves when other processes load the machine.
  const cpu = { without: [], with: [] }
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
      cpu[mode].push(((cpuTicks(dcb.child.pid) - t0) * US_PER_TICK) / r.requests.total)
    }
  }
  await dcb.stop()
  if (!streamed) throw new Error('the console stream sent nothing')
  const ratios = runs.with.map((w, i) => Math.round((w / runs.without[i]) * 1000) / 1000)
  results.figures.console = {
    with_req_s: median(runs.with),
    without_req_s: median(runs.without),
    ratio: middle(ratios),
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
export async function otpFlows() {
  const BASE = process.env.BENCH_BASE
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
  log(`full OTP flows per second: file store / in memory${BASE ? ' / the base file store' : ''}, ${ROUNDS} alternating rounds after a warm-up`)
  // Every flow keeps its subscription: a long run on a fast machine passes the default cap of 100,000 a session.
  const roomy = ['--max-subscriptions', '10000000']
  const servers = [
    ['file', await start(['serve', '--port', '0', '--data', join(tmp, 'flows.json'), ...roomy])],
    ['memory', await start(['serve', '--port', '0', '--in-memory', ...roomy])],
  ]
  if (BASE) servers.push(['base', await start(['serve', '--port', '0', '--data', join(tmp, 'flows-base.json')], join(BASE, 'bin', 'dcb.js'))])
  // The floor under dcb's CPU per flow: node:http alone, then with the writes made durable as dcb makes them.
  const floor = join(ROOT, 'bench', 'floor-server.js')
  servers.push(['floor', await start([], floor)], ['floor_durable', await start(['--durable', join(tmp, 'floor.journal')], floor)])
  const seconds = Math.max(2, Math.round(SECONDS / 2))
  let n = 0
  const runs = Object.fromEntries(servers.map(([k]) => [k, []]))
  // Each server's CPU from its first measured round to the end, the work a round leaves running (a
  // compaction) and the idle GC after included: per-round figures miss what spills past a window.
  const whole = {}
  const lat = []
  for (let round = 0; round <= ROUNDS; round++)
    for (const [kind, s] of round % 2 ? [...servers].reverse() : servers) {
      let done = 0
      const t0 = cpuTicks(s.child.pid)
      if (round === 1) whole[kind] = { t0, flows: 0 }
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
      if (round) runs[kind].push({ flows_s: done / seconds, cpu_us: ((cpuTicks(s.child.pid) - t0) * US_PER_TICK) / done })
      if (round) whole[kind].flows += done
    }
  const idle = await settled(servers.map(([, s]) => s.child.pid))
  if (!idle) log('the servers were still busy 20 s after the last round: the whole-run CPU figures stop there')
  const wholeCpu = (kind) => Math.round(((cpuTicks(servers.find(([k]) => k === kind)[1].child.pid) - whole[kind].t0) * US_PER_TICK) / whole[kind].flows)
  const cpuWhole = Object.fromEntries(servers.map(([k]) => [k, wholeCpu(k)]))
  for (const [, s] of servers) await s.stop()
  lat.sort((a, b) => a - b)
  const ratio = (a, b) => runs[a].map((r, i) => Math.round((r.flows_s / runs[b][i].flows_s) * 100) / 100)
  results.figures.otp_flows = {
    flows_s: median(runs.file.map((r) => r.flows_s)),
    flow_p99_ms: Math.round(lat[Math.floor(lat.length * 0.99)] * 10) / 10,
    workers: 16,
    memory_flows_s: median(runs.memory.map((r) => r.flows_s)),
    file_over_memory: middle(ratio('file', 'memory')),
    rounds: ratio('file', 'memory'),
    cpu_us: median(runs.file.map((r) => r.cpu_us)),
    cpu_us_whole: cpuWhole.file,
    // false: the servers were still busy 20 s after the last round, and the whole-run figures stop there.
    cpu_whole_idle: idle,
    memory_cpu_us_whole: cpuWhole.memory,
    floor: {
      flows_s: median(runs.floor.map((r) => r.flows_s)),
      durable_flows_s: median(runs.floor_durable.map((r) => r.flows_s)),
      durable_over_bare: middle(ratio('floor_durable', 'floor')),
      cpu_us: median(runs.floor.map((r) => r.cpu_us)),
      durable_cpu_us: median(runs.floor_durable.map((r) => r.cpu_us)),
    },
    ...(BASE
      ? {
          base: {
            flows_s: median(runs.base.map((r) => r.flows_s)),
            cpu_us: median(runs.base.map((r) => r.cpu_us)),
            cpu_us_whole: cpuWhole.base,
            after_over_before: middle(ratio('file', 'base')),
            // CPU per flow after / before round by round (the machine's drift between rounds cancels out).
            cpu_rounds: runs.file.map((r, i) => Math.round((r.cpu_us / runs.base[i].cpu_us) * 100) / 100),
          },
        }
      : {}),
  }
  log(results.figures.otp_flows)
}

/** Waits until none of these processes uses CPU for half a second (what the load left running is done), at most 20 s; answers whether they got there. */
async function settled(pids) {
  const total = () => pids.reduce((sum, pid) => sum + cpuTicks(pid), 0)
  const until = performance.now() + 20_000
  for (let last = total(); performance.now() < until;) {
    await new Promise((r) => setTimeout(r, 500))
    const now = total()
    if (now === last) return true
    last = now
  }
  return false
}

/** Init latency with 1,000, 10,000 and 100,000 stored subscriptions, each count seeded for a fresh server. */
export async function writeLatency() {
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

/** Init latency with 1,000 live sessions (each request in the next one) against the default session alone, on one server. */
export async function sessionWrites() {
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
      runs[name].push({
        p99: r.latency.p99,
        p50: r.latency.p50,
        req_s: r.requests.average,
        cpu_us: ((cpuTicks(dcb.child.pid) - t0) * US_PER_TICK) / r.requests.total,
      })
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

/** The shared store (PostgreSQL) through one and three replicas beside the file store: bench/shared.js. */
export async function shared() {
  // Imported here, not at the top: only this stage needs PostgreSQL's packages.
  const { sharedFigures } = await import('./shared.js')
  results.figures.shared = await sharedFigures(Math.max(2, Math.round(SECONDS / 2)))
  log(results.figures.shared)
}
