// What every stage of npm run bench shares: the figures being gathered (`results`), server processes
// started and stopped, calls and loads against them, and what is read of a process from /proc.
// Everything runs on 127.0.0.1; every load is bounded in count and time.
import autocannon from 'autocannon'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const BIN = join(ROOT, 'bin', 'dcb.js')
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
export const MILLION = Number(process.env.BENCH_REQUESTS ?? 1_000_000)
export const RESULTS_FILE = join(ROOT, 'bench', 'results.json')
export const tmp = mkdtempSync(join(os.tmpdir(), 'dcb-bench-'))
export const results = { machine: machine(), date: new Date().toISOString(), figures: {} }
export const US_PER_TICK = 1e6 / 100 // µs per clock tick (USER_HZ 100)
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

export function log(...a) {
  console.error('[bench]', ...a)
}

/** Starts a server process and resolves with its URL once it prints "listening on" (`exe`: the single executable instead of node). */
export function start(args, script = BIN, exe = undefined) {
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

/** A process's resident set size, in MiB. */
export const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024

export const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

/** One call with the demo key over the shared keep-alive agent; answers the JSON, whatever the status. */
export function call(url, path, body, method = 'POST') {
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

/** A full OTP flow (Init, read the OTP, Verify); answers the new subscription's id. */
export async function subscribe(url, msisdn) {
  const init = await call(url, '/subscriptions/init', { msisdn, service_code: 'STREAMPLUS', country_code: 'my' })
  const otp = await call(url, `/_sandbox/otp?msisdn=${msisdn}`, undefined, 'GET')
  const v = await call(url, '/subscriptions/verify', { verif_request_id: init.payload.verif_request_id, otp: otp.otp })
  if (v.status !== 'SUCCESS') throw new Error(`flow failed: ${JSON.stringify(v)}`)
  return v.payload.subscription_id
}

/** An autocannon load of POSTs with the demo key: 50 connections for SECONDS, or `amount` requests in all. */
export function cannon(opts) {
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
export const msisdnOf = (i) => {
  if (i >= 1e7) throw new Error('msisdnOf: at most ten million distinct numbers')
  return `6012${String(Math.floor(i / 100)).padStart(5, '0')}0${String(i % 100).padStart(2, '0')}`
}

/** A process's CPU time so far, user and system, in clock ticks. */
export const cpuTicks = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return Number(f[11]) + Number(f[12])
}

/** The middle value, rounded to a whole number. */
export function median(a) {
  const s = [...a].sort((x, y) => x - y)
  return Math.round(s[Math.floor(s.length / 2)])
}

/** The middle value as it is, for ratios and figures with decimals (`median` rounds to a whole number). */
export const middle = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]

/** Ends every server still running, closes the kept-alive sockets and removes the scratch folder. */
export function cleanUp() {
  for (const c of children) c.kill('SIGKILL')
  agent.destroy()
  rmSync(tmp, { recursive: true, force: true })
}
